"""`make serve`'s terminal explains a crashing tool: its message and the author's frames, never in the answer."""

from __future__ import annotations

import json
import textwrap
import urllib.request
from typing import TYPE_CHECKING, Any
from urllib.error import HTTPError

from median_lambda.protocol import DEV_KEY_ENV, SIGNATURE_HEADER
from median_lambda.request.signature import sign
from median_lambda.testing import TEST_KEY, call_body

from tests.devserver_process import running_devserver

if TYPE_CHECKING:
    from pathlib import Path

    from tests.devserver_process import DevServerProcess

CARRIERS_TOOL = '''
from __future__ import annotations

from pydantic import BaseModel, Field

from median_lambda import tool


class TrackInput(BaseModel):
    tracking: str = Field(description="The tracking number.")


def _carrier_for(tracking: str) -> str:
    return {"1Z999": "UPS"}[tracking]


@tool(risk="low")
def track(args: TrackInput) -> dict[str, object]:
    """Track a parcel."""
    return {"carrier": _carrier_for(args.tracking)}
'''


def line_of(text: str) -> int:
    """The line of carriers.py, as saved, that holds `text`."""
    lines = textwrap.dedent(CARRIERS_TOOL).splitlines()
    return 1 + next(number for number, line in enumerate(lines) if text in line)


def signed_post(server: DevServerProcess, body: bytes) -> tuple[int, Any]:
    request = urllib.request.Request(  # noqa: S310 - a loopback URL of our own
        server.url, data=body, method="POST", headers={SIGNATURE_HEADER: sign(TEST_KEY, body)}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - as above
            return response.status, json.loads(response.read())
    except HTTPError as error:
        return error.code, json.loads(error.read())


def test_a_crash_is_explained_on_the_terminal_and_not_in_the_answer(tmp_path: Path) -> None:
    # GIVEN make serve on a tool that crashes with the customer's input in its message
    project = tmp_path / "project"
    tools = project / "tools"
    tools.mkdir(parents=True)
    (tools / "__init__.py").write_text("", encoding="utf-8")
    (tools / "carriers.py").write_text(textwrap.dedent(CARRIERS_TOOL), encoding="utf-8")
    with running_devserver(tmp_path, cwd=project, tools_package=None, env={DEV_KEY_ENV: TEST_KEY}) as server:
        # WHEN the tool is called
        status, body = signed_post(server, call_body("track", {"tracking": "ZZ-4242-Ada"}))
        # THEN the answer is a 500 internal_error with a reference, without the message
        assert (status, body["error"]["code"]) == (500, "internal_error")
        assert "ZZ-4242-Ada" not in json.dumps(body)
        reference = body["error"]["message"].rsplit("reference ", 1)[-1].rstrip(".")
        # AND the terminal says what crashed under that reference, with the author's frames and the message
        output = server.output()
        assert f"Tool track crashed; its answer is 500 internal_error, reference {reference}." in output
        explained = output.split("Traceback (most recent call last):\n", 1)[1]
        assert explained.startswith(f'  File "tools/carriers.py", line {line_of("_carrier_for(args")}, in track\n')
        assert f'  File "tools/carriers.py", line {line_of("[tracking]")}, in _carrier_for\n' in explained
        assert "KeyError: 'ZZ-4242-Ada'\n" in explained
        assert "median_lambda/calls/dispatch.py" not in explained


PARCELS_TOOL = '''
from __future__ import annotations

from pydantic import BaseModel, Field

from median_lambda import ToolError, tool


class TrackInput(BaseModel):
    tracking: str = Field(description="The tracking number.")


def _carrier_for(tracking: str) -> str:
    return {"1Z999": "UPS"}[tracking]


@tool(risk="low")
def track(args: TrackInput) -> dict[str, object]:
    """Track a parcel."""
    try:
        return {"carrier": _carrier_for(args.tracking)}
    except KeyError as error:
        raise ToolError("No parcel has that tracking number; ask the customer to read it again.") from error
'''


def test_the_cause_behind_a_tool_error_is_explained_on_the_terminal_and_not_in_the_answer(tmp_path: Path) -> None:
    # GIVEN make serve on a tool that declines with a ToolError raised from a KeyError quoting the input
    project = tmp_path / "project"
    tools = project / "tools"
    tools.mkdir(parents=True)
    (tools / "__init__.py").write_text("", encoding="utf-8")
    (tools / "parcels.py").write_text(textwrap.dedent(PARCELS_TOOL), encoding="utf-8")
    lines = textwrap.dedent(PARCELS_TOOL).splitlines()
    raised_at = 1 + next(number for number, line in enumerate(lines) if "[tracking]" in line)
    with running_devserver(tmp_path, cwd=project, tools_package=None, env={DEV_KEY_ENV: TEST_KEY}) as server:
        # WHEN the tool is called
        status, body = signed_post(server, call_body("track", {"tracking": "ZZ-4242-Ada"}))
        # THEN the answer is the ToolError's message, without the KeyError or the input
        assert (status, body["ok"], body["error"]["code"]) == (200, False, "tool_error")
        assert body["error"]["message"] == "No parcel has that tracking number; ask the customer to read it again."
        assert "ZZ-4242-Ada" not in json.dumps(body)
        # AND the terminal says the tool declined, with the KeyError at the author's line and its message
        output = server.output()
        assert "Tool track declined the call; its answer is its ToolError's message (tool_error), reference " in output
        explained = output.split("Traceback (most recent call last):\n", 1)[1]
        assert f'  File "tools/parcels.py", line {raised_at}, in _carrier_for\n' in explained
        assert "KeyError: 'ZZ-4242-Ada'\n" in explained
        assert "median_lambda/calls/dispatch.py" not in explained
        # AND the log line an operator would read names the type and the author's line, not the message
        (logged,) = [json.loads(line) for line in output.splitlines() if '"cause_type"' in line]
        assert (logged["cause_type"], logged["cause_origin"]) == ("KeyError", f"tools/parcels.py:{raised_at}")
        assert "ZZ-4242-Ada" not in json.dumps(logged)
