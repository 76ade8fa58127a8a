"""The inspector shows why a tool crashed, or the exception behind its ToolError, beside its answer, which
carries neither: only internal_error and a reference, or the ToolError's message."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

import pytest

from tests.browser.conftest import WIDE, open_page
from tests.devserver_process import running_devserver

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator

pytestmark = pytest.mark.browser

CUSTOMER_NOTE = "ZZ-4242-Ada"


def expect(locator: Locator) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def test_a_crash_is_explained_beside_the_answer(browser: Browser, tmp_path_factory: pytest.TempPathFactory) -> None:
    # GIVEN make serve on a tool that crashes with the customer's input in its message
    project = tmp_path_factory.mktemp("project")
    (project / "tools").mkdir()
    (project / "tools" / "__init__.py").write_text("")
    (project / "tools" / "parcels.py").write_text(
        textwrap.dedent(
            '''
            from pydantic import BaseModel, Field

            from median_lambda import tool


            class TrackInput(BaseModel):
                tracking: str = Field(description="The tracking number.")


            @tool(risk="low")
            def track(args: TrackInput) -> dict:
                """Track a parcel."""
                return {"carrier": {"1Z999": "UPS"}[args.tracking]}
            '''
        )
    )
    with running_devserver(project, cwd=project, tools_package=None) as server:
        context, loaded = open_page(browser, server.inspector_url, WIDE)
        page = loaded.page
        # WHEN the author calls it from its card
        card = page.locator('article[data-tool="track"]')
        card.get_by_label("tracking").fill(CUSTOMER_NOTE)
        card.get_by_role("button", name="Call track").click()
        # THEN the answer is the 500 internal_error, without the message
        expect(card.locator(".outcome")).to_have_text("internal_error")
        expect(card.get_by_label("The JSON answer")).not_to_contain_text(CUSTOMER_NOTE)
        # AND beside it, open, is the exception with its message and the author's line
        crash = card.locator("details.crash")
        expect(crash).to_be_visible()
        expect(crash.locator("summary")).to_contain_text("Why it crashed")
        expect(crash.locator("pre.traceback")).to_contain_text('File "tools/parcels.py", line 14, in track')
        expect(crash.locator("pre.traceback")).to_contain_text(f"KeyError: '{CUSTOMER_NOTE}'")
        context.close()


def test_the_cause_behind_a_tool_error_is_shown_beside_its_answer(
    browser: Browser, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # GIVEN make serve on a tool that declines with a ToolError raised from a KeyError quoting the input
    project = tmp_path_factory.mktemp("project")
    (project / "tools").mkdir()
    (project / "tools" / "__init__.py").write_text("")
    (project / "tools" / "parcels.py").write_text(
        textwrap.dedent(
            '''
            from pydantic import BaseModel, Field

            from median_lambda import ToolError, tool


            class TrackInput(BaseModel):
                tracking: str = Field(description="The tracking number.")


            @tool(risk="low")
            def track(args: TrackInput) -> dict:
                """Track a parcel."""
                try:
                    return {"carrier": {"1Z999": "UPS"}[args.tracking]}
                except KeyError as error:
                    raise ToolError("No parcel has that number.") from error
            '''
        )
    )
    with running_devserver(project, cwd=project, tools_package=None) as server:
        context, loaded = open_page(browser, server.inspector_url, WIDE)
        page = loaded.page
        # WHEN the author calls it from its card
        card = page.locator('article[data-tool="track"]')
        card.get_by_label("tracking").fill(CUSTOMER_NOTE)
        card.get_by_role("button", name="Call track").click()
        # THEN the answer is the ToolError's, its message as the agent reads it, without the input
        expect(card.locator(".outcome")).to_have_text("tool_error")
        expect(card.locator(".message")).to_have_text("No parcel has that number.")
        expect(card.get_by_label("The JSON answer")).not_to_contain_text(CUSTOMER_NOTE)
        # AND beside it, open, is the KeyError behind it, at the author's line, then the ToolError it became
        cause = card.locator("details.cause")
        expect(cause).to_be_visible()
        expect(cause.locator("summary")).to_contain_text("What caused this ToolError")
        shown = cause.get_by_label("The exception behind the ToolError")
        expect(shown).to_contain_text('File "tools/parcels.py", line 15, in track')
        expect(shown).to_contain_text(f"KeyError: '{CUSTOMER_NOTE}'")
        expect(shown).to_contain_text("ToolError: No parcel has that number.")
        # AND no crash is shown: the tool declined, it did not crash
        expect(card.locator("details.crash")).to_have_count(0)
        context.close()
