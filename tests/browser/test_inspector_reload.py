"""The inspector follows `make serve`'s reloads: a broken save is shown at its line, and a fix brings the tools back."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

import pytest

from tests.browser.conftest import WIDE, open_page
from tests.devserver_process import running_devserver

if TYPE_CHECKING:
    from pathlib import Path

    from playwright.sync_api import Browser, Locator

pytestmark = pytest.mark.browser

# Far longer than a reload and the page's next look take: a pass never waits this long.
FOLLOW_TIMEOUT_MS = 15_000

NOTES_TOOL = '''
from pydantic import BaseModel, Field

from median_lambda import tool


class NoteInput(BaseModel):
    note: str = Field(description="Any text.")


@tool(risk="low")
def take_note(args: NoteInput) -> dict:
    """Take a note."""
    return {"note": args.note}
'''


def expect(locator: Locator) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def test_a_broken_save_shows_its_line_and_the_fix_brings_the_tools_back(
    browser: Browser, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # GIVEN make serve on a tools package whose module fails to import, and the inspector open on it
    project: Path = tmp_path_factory.mktemp("project")
    tools = project / "tools"
    tools.mkdir()
    (tools / "__init__.py").write_text("", encoding="utf-8")
    (tools / "notes.py").write_text("\n\naccount = find_account('ada@example.com')\n", encoding="utf-8")
    with running_devserver(project, cwd=project, tools_package=None) as server:
        context, loaded = open_page(browser, server.inspector_url, WIDE)
        page = loaded.page
        # WHEN the page loads
        # THEN it shows the author's file, line and mistake, as the terminal does
        failures = page.locator("#import-failures")
        expect(failures).to_have_text("tools/notes.py:3: NameError: name 'find_account' is not defined")
        # WHEN the module is fixed and saved
        (tools / "notes.py").write_text(textwrap.dedent(NOTES_TOOL), encoding="utf-8")
        # THEN the page follows by itself: the failure is gone and the tool has its card
        expect(page.locator('article[data-tool="takeNote"]')).to_be_visible(timeout=FOLLOW_TIMEOUT_MS)
        expect(page.locator("#load-error")).to_be_hidden()
        assert loaded.errors == []
        context.close()
