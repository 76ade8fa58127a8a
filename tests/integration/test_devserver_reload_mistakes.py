"""`make serve` lives through every mistake that shows only when a tool is registered, and recovers on the next save.

A postponed annotation that names nothing (the issue's `amountCents: itn`), a field whose schema
cannot be built, a field pydantic refuses, a tool annotation that cannot be resolved: each save is
named on the terminal and in GET's 500 `invalid_manifest` as the author's line, and the save
that fixes it is served, by the same process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from median_lambda.protocol import DEV_KEY_ENV
from median_lambda.testing import TEST_KEY

from tests.devserver_process import running_devserver
from tests.integration.test_devserver_reload import NOTES_TOOL, description, inspector_view, save, signed_get, until

if TYPE_CHECKING:
    from pathlib import Path

HEAD = """
from __future__ import annotations

from typing import Callable

from pydantic import BaseModel, Field

from median_lambda import tool

"""
TOOL = '''

@tool(risk="low")
def take_note(args: NoteInput) -> dict[str, object]:
    """Take a note."""
    return {"note": args.note}
'''
# (the module as saved, the line GET and the terminal name)
MISTAKES = [
    (
        HEAD + "class NoteInput(BaseModel):\n    note: str\n    words: itn = Field(description='How many.')\n" + TOOL,
        "tools/notes.py:12: NoteInput.words: the annotation names 'itn', which is not defined or imported in this "
        "module; fix its spelling, or import it",
    ),
    (
        HEAD + "class NoteInput(BaseModel):\n    note: str\n    then: Callable[[], None]\n" + TOOL,
        "tools/notes.py:12: NoteInput.then: Median's input schema cannot be built for this field (Cannot generate a "
        "JsonSchema for core_schema.CallableSchema); a field is one of str, float, int, bool, a Literal or an Enum",
    ),
    (
        HEAD + "class NoteInput(BaseModel):\n    note = Field(description='Any text.')\n" + TOOL,
        "tools/notes.py:11: NoteInput.note: a field needs a type annotation, as in "
        '`note: str = Field(description="...")`',
    ),
    (
        HEAD + "class NoteInput(BaseModel):\n    note: str\n" + TOOL.replace("args: NoteInput", "args: NoteInputt"),
        "tools/notes.py:14: take_note: an annotation cannot be resolved (name 'NoteInputt' is not defined); "
        "import what it names",
    ),
]


def test_every_registration_mistake_is_named_and_the_next_save_recovers(tmp_path: Path) -> None:
    # GIVEN make serve on a tools package with one tool
    project = tmp_path / "project"
    tools = project / "tools"
    tools.mkdir(parents=True)
    (tools / "__init__.py").write_text("", encoding="utf-8")
    save(tools, NOTES_TOOL.format(description="Take a note."))
    with running_devserver(tmp_path, cwd=project, tools_package=None, env={DEV_KEY_ENV: TEST_KEY}) as server:
        assert description(signed_get(server)) == "Take a note."
        for number, (source, line) in enumerate(MISTAKES, start=1):
            # WHEN a save makes the mistake
            save(tools, source)
            # THEN GET answers 500 invalid_manifest naming the author's line, as the inspector does
            status, body = until(lambda got: got[0] == 500, lambda: signed_get(server))
            assert (status, body["error"]["code"]) == (500, "invalid_manifest"), body
            assert body["error"]["message"].startswith(f"The endpoint's tools failed to import: {line}")
            status, view = inspector_view(server)
            assert status == 500 and view["error"]["lines"][0].startswith(line)
            # AND the terminal says it in that line, with no traceback
            assert f"notes.py changed: the tools in tools/ failed to import:\n  {line}" in server.output()
            assert "Traceback" not in server.output()
            # WHEN the next save fixes it
            fixed = f"Take a note, fix {number}."
            save(tools, NOTES_TOOL.format(description=fixed))
            # THEN the same process serves the tool again
            answer = until(lambda got, fixed=fixed: description(got) == fixed, lambda: signed_get(server))
            assert description(answer) == fixed, answer
