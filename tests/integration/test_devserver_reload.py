"""`make serve` reloads the tools when one of their files is saved, and names a broken save until it is fixed.

The server runs as `make serve` runs it, in a process of its own, on a tools package this test
writes: saving is writing the file on disk, and the only way in is HTTP.
"""

from __future__ import annotations

import json
import textwrap
import time
import urllib.request
from typing import TYPE_CHECKING, Any
from urllib.error import HTTPError

from median_lambda.protocol import DEV_KEY_ENV, SIGNATURE_HEADER
from median_lambda.request.signature import sign
from median_lambda.testing import TEST_KEY

from tests.devserver_process import running_devserver

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from tests.devserver_process import DevServerProcess

# How long a save may take to show: far longer than a reload takes, so a pass never waits on it.
RELOAD_BOUND_SECONDS = 15.0

NOTES_TOOL = '''
from pydantic import BaseModel, Field

from median_lambda import tool


class NoteInput(BaseModel):
    note: str = Field(description="Any text.")


@tool(risk="low")
def take_note(args: NoteInput) -> dict:
    """{description}"""
    return {{"note": args.note}}
'''
# The same module with a mistake at its line 3.
BROKEN_NOTES_TOOL = """
from pydantic import BaseModel
account = find_account("ada@example.com")
"""


def save(tools: Path, source: str) -> None:
    (tools / "notes.py").write_text(textwrap.dedent(source), encoding="utf-8")


def fetch(url: str, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    request = urllib.request.Request(url, headers=headers or {})  # noqa: S310 - a loopback URL of our own
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - as above
            return response.status, json.loads(response.read())
    except HTTPError as error:
        return error.code, json.loads(error.read())


def signed_get(server: DevServerProcess) -> tuple[int, Any]:
    return fetch(server.url, {SIGNATURE_HEADER: sign(TEST_KEY, b"")})


def inspector_view(server: DevServerProcess) -> tuple[int, Any]:
    return fetch(server.inspector_api("manifest"), server.token_header)


def description(answer: tuple[int, Any]) -> str | None:
    status, body = answer
    return body["tools"][0]["description"] if status == 200 else None


def until(condition: Callable[[tuple[int, Any]], bool], ask: Callable[[], tuple[int, Any]]) -> tuple[int, Any]:
    """Ask again until the answer meets the condition; the last answer, met or not, once the bound is up."""
    deadline = time.monotonic() + RELOAD_BOUND_SECONDS
    answer = ask()
    while not condition(answer) and time.monotonic() < deadline:
        time.sleep(0.05)
        answer = ask()
    return answer


def test_a_saved_change_is_served_and_a_broken_save_is_named_until_it_is_fixed(tmp_path: Path) -> None:
    # GIVEN make serve on a tools package with one tool
    project = tmp_path / "project"
    tools = project / "tools"
    tools.mkdir(parents=True)
    (tools / "__init__.py").write_text("", encoding="utf-8")
    save(tools, NOTES_TOOL.format(description="Take a note."))
    with running_devserver(tmp_path, cwd=project, tools_package=None, env={DEV_KEY_ENV: TEST_KEY}) as server:
        assert description(signed_get(server)) == "Take a note."

        # WHEN the tool's description is changed and saved
        changed = "Take a note for the customer's file."
        save(tools, NOTES_TOOL.format(description=changed))
        # THEN the next GETs serve it, with no restart
        answer = until(lambda got: description(got) == changed, lambda: signed_get(server))
        assert description(answer) == changed, answer
        # AND so does the inspector
        status, view = inspector_view(server)
        assert status == 200
        assert [entry["description"] for entry in view["manifest"]["tools"]] == [changed]

        # WHEN a save breaks the module
        save(tools, BROKEN_NOTES_TOOL)
        # THEN GET answers 500 invalid_manifest naming the file and line, and the inspector gets the same line
        line = "tools/notes.py:3: NameError: name 'find_account' is not defined"
        status, body = until(lambda got: got[0] == 500, lambda: signed_get(server))
        assert (status, body) == (
            500,
            {"error": {"code": "invalid_manifest", "message": f"The endpoint's tools failed to import: {line}"}},
        )
        status, view = inspector_view(server)
        assert (status, view["error"]["code"], view["error"]["lines"]) == (500, "invalid_manifest", [line])
        # AND the terminal says it, in that one line, without a traceback
        assert f"notes.py changed: the tools in tools/ failed to import:\n  {line}\n" in server.output()
        assert "Traceback" not in server.output()
        # AND the page's once-a-second question, whether the tools reloaded, is answered but not logged
        status, revision = fetch(server.inspector_api("revision"), server.token_header)
        assert status == 200 and revision["revision"] >= 3
        assert "GET /_inspector/api/manifest -> 500" in server.output()
        assert "/_inspector/api/revision" not in server.output()

        # WHEN the file is fixed and saved
        save(tools, NOTES_TOOL.format(description="Take a note, fixed."))
        # THEN the server, still the same process, serves the tools again
        answer = until(lambda got: description(got) == "Take a note, fixed.", lambda: signed_get(server))
        assert description(answer) == "Take a note, fixed.", answer
        status, view = inspector_view(server)
        assert status == 200
        assert [entry["description"] for entry in view["manifest"]["tools"]] == ["Take a note, fixed."]


def test_a_module_broken_at_startup_is_named_and_the_server_runs_on(tmp_path: Path) -> None:
    # GIVEN a tools package whose module fails to import before make serve starts
    project = tmp_path / "project"
    tools = project / "tools"
    tools.mkdir(parents=True)
    (tools / "__init__.py").write_text("", encoding="utf-8")
    save(tools, BROKEN_NOTES_TOOL)
    # WHEN make serve starts
    with running_devserver(tmp_path, cwd=project, tools_package=None, env={DEV_KEY_ENV: TEST_KEY}) as server:
        # THEN its terminal names the line, it serves GET a 500 with it, and a fix brings the tools up
        line = "tools/notes.py:3: NameError: name 'find_account' is not defined"
        assert f"The tools in tools/ failed to import:\n  {line}\n" in server.output()
        status, body = signed_get(server)
        assert (status, body["error"]["code"]) == (500, "invalid_manifest")
        save(tools, NOTES_TOOL.format(description="Take a note."))
        answer = until(lambda got: description(got) == "Take a note.", lambda: signed_get(server))
        assert description(answer) == "Take a note.", answer
