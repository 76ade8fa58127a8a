"""The inspector in headless Chromium, against the dev server `make serve` runs."""

from __future__ import annotations

import json
import textwrap
import urllib.request
import warnings
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda.key.local_key import dev_key
from median_lambda.manifest.build import build_manifest
from median_lambda.protocol import MAX_TOOLS, RISK_MEANINGS

from tests.browser.conftest import PHONE, WIDE, open_page
from tests.browser.screenshot import fingerprint, keep_current, screenshot_target, stored_fingerprint
from tests.devserver_process import REPO, running_devserver

if TYPE_CHECKING:
    from pathlib import Path

    from median_lambda.authoring.registry import Registry
    from playwright.sync_api import Browser, Locator, Page

    from tests.browser.conftest import LoadedPage
    from tests.devserver_process import DevServerProcess

pytestmark = pytest.mark.browser

SCREENSHOT = REPO / "docs" / "inspector.png"
PAGE_FILE = REPO / "median-lambda" / "src" / "median_lambda" / "devserver" / "inspector.html"


def expect(locator: Locator) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def card(page: Page, tool: str) -> Locator:
    return page.locator(f'article[data-tool="{tool}"]')


def call_ticket_status(page: Page, ticket_number: str) -> Locator:
    ticket_status = card(page, "ticketStatus")
    ticket_status.get_by_label("ticketNumber").fill(ticket_number)
    ticket_status.get_by_role("button", name="Call ticketStatus").click()
    return ticket_status


def test_every_tool_has_a_card_with_its_risk_in_plain_words(
    inspector: LoadedPage, server: DevServerProcess, sample_tools: Registry
) -> None:
    # GIVEN the sample tools the server serves, and the manifest GET serves for them
    tools = build_manifest(sample_tools)[0]["tools"]
    assert len(tools) == 4
    page = inspector.page
    # WHEN the inspector has loaded
    expect(page.locator("article.card")).to_have_count(len(tools))
    # THEN each tool has its card: name, description, a risk badge with its meaning, and its schema
    for tool in tools:
        tool_card = card(page, tool["name"])
        expect(tool_card.get_by_role("heading", name=tool["name"])).to_be_visible()
        expect(tool_card.locator(".description")).to_have_text(tool["description"])
        expect(tool_card.locator(".risk")).to_have_text(f"Risk: {tool['risk']}")
        expect(tool_card.locator(".risk-meaning")).to_have_text(RISK_MEANINGS[tool["risk"]])
        tool_card.get_by_text("Input schema").click()
        shown = json.loads(tool_card.locator("details.schema pre").inner_text())
        assert shown == tool["inputSchema"]
    # AND the sync check and the limits are shown, and the page reached nothing but the dev server
    expect(page.locator("#sync-result")).to_contain_text("Median would accept this manifest")
    expect(page.locator("#tool-count")).to_have_text(f"{len(tools)} of {MAX_TOOLS}")
    expect(page.locator("#size")).to_contain_text("of 500 KB")
    assert inspector.requests and all(url.startswith(server.url) for url in inspector.requests)
    assert inspector.errors == []


def test_calling_ticket_status_shows_200_and_the_status(inspector: LoadedPage, server: DevServerProcess) -> None:
    # GIVEN the inspector, allowed to use the clipboard
    page = inspector.page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url.rstrip("/"))
    # WHEN ticketStatus is called for TCK-1042
    ticket_status = call_ticket_status(page, "TCK-1042")
    # THEN the handler's 200 and the ticket's status are shown
    expect(ticket_status.locator(".result .status")).to_have_text("200 OK")
    expect(ticket_status.locator(".result pre.json")).to_contain_text('"status": "waiting"')
    # AND a curl command for the same request, with the key left out, is offered
    ticket_status.get_by_text("The same signed request with curl").click()
    curl = ticket_status.locator("pre.curl").inner_text()
    assert '"ticketNumber": "TCK-1042"' in curl and "median-signature: $(" in curl
    assert dev_key() not in curl
    ticket_status.get_by_role("button", name="Copy curl").click()
    expect(ticket_status.locator(".copy-state")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == curl


def test_an_empty_required_field_shows_the_422_details_beside_it(inspector: LoadedPage) -> None:
    # GIVEN the inspector
    page = inspector.page
    # WHEN ticketStatus is called with its required field empty
    ticket_status = call_ticket_status(page, "")
    # THEN the handler's 422 is shown, and its detail sits beside the field, which takes the focus
    expect(ticket_status.locator(".result .status")).to_have_text("422 Unprocessable Content")
    field = ticket_status.locator('[data-field="ticketNumber"]')
    expect(field.locator(".field-error")).to_have_text("Field required")
    expect(field.get_by_role("textbox")).to_have_attribute("aria-invalid", "true")
    expect(field.get_by_role("textbox")).to_be_focused()


def test_an_integer_field_refuses_decimals_before_any_call(inspector: LoadedPage) -> None:
    # GIVEN setPriority, whose priority is an integer
    page = inspector.page
    change = card(page, "setPriority")
    change.get_by_label("ticketNumber").fill("TCK-1043")
    change.get_by_label("queue").fill("shipping")
    # WHEN a decimal is entered and the call is made
    change.get_by_label("priority").fill("2.5")
    change.get_by_role("button", name="Call setPriority").click()
    # THEN the field says so, and nothing is sent
    expect(change.locator('[data-field="priority"] .field-error')).to_contain_text("whole number")
    expect(change.locator(".result")).to_have_text("No call yet. Fill in the form and press Call.")
    assert not [url for url in inspector.requests if url.endswith("/api/call")]


def test_diagnostics_runs_from_its_button(inspector: LoadedPage) -> None:
    # GIVEN the sample tools, which declare diagnostics
    page = inspector.page
    # WHEN its button is pressed
    page.get_by_role("button", name="Run diagnostics").click()
    # THEN the diagnostics answer is shown
    diagnostics = page.locator("#diagnostics")
    expect(diagnostics.locator(".status")).to_have_text("200 OK")
    expect(diagnostics.locator("pre.json")).to_contain_text('"ticketDesk": "ok"')


def test_the_last_call_id_can_be_reused_to_try_idempotency(inspector: LoadedPage) -> None:
    # GIVEN one call made
    page = inspector.page
    ticket_status = call_ticket_status(page, "TCK-1042")
    first = ticket_status.locator(".result .meta code").inner_text()
    # WHEN the same call is made again with "Reuse the last callId" ticked
    ticket_status.get_by_label("Reuse the last callId").check()
    ticket_status.get_by_role("button", name="Call ticketStatus").click()
    # THEN it carries the first call's callId
    expect(ticket_status.locator(".result .meta code")).to_have_text(first)
    assert first.startswith("call_")
    # AND beside the box the page says plainly that, with no idempotency table here, the tool ran again
    note = ticket_status.locator(".reuse-note")
    expect(note).to_contain_text("Calls are not deduplicated here")
    expect(note).to_contain_text("runs the tool again")
    checkbox = ticket_status.get_by_label("Reuse the last callId")
    assert checkbox.get_attribute("aria-describedby") == note.get_attribute("id")


def test_a_call_can_be_made_from_the_keyboard_alone(inspector: LoadedPage) -> None:
    # GIVEN the inspector, and only a keyboard
    page = inspector.page
    expect(page.locator("article.card").first).to_be_visible()
    # WHEN Tab is pressed until ticketStatus's field has the focus, and the number typed and Enter pressed
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "f-ticketStatus-ticketNumber":
            break
    else:
        pytest.fail("Tab never reached ticketStatus's ticketNumber field")
    page.keyboard.type("TCK-1042")
    page.keyboard.press("Enter")
    # THEN the call is made and answered
    expect(card(page, "ticketStatus").locator(".result .status")).to_have_text("200 OK")


def test_the_page_fits_a_phone(browser: Browser, server: DevServerProcess) -> None:
    # GIVEN a phone-wide window
    context, loaded = open_page(browser, server.inspector_url, PHONE)
    page = loaded.page
    # WHEN a call is made there
    ticket_status = call_ticket_status(page, "TCK-1042")
    expect(ticket_status.locator(".result .status")).to_have_text("200 OK")
    ticket_status.get_by_text("The same signed request with curl").click()
    # THEN nothing is wider than the screen: no sideways scrolling
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    context.close()


def test_sync_problems_are_listed_and_no_diagnostics_is_offered(
    browser: Browser, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # GIVEN tools that break two sync rules and declare no diagnostics
    project = tmp_path_factory.mktemp("project")
    (project / "tools").mkdir()
    (project / "tools" / "__init__.py").write_text("")
    (project / "tools" / "bugs.py").write_text(
        textwrap.dedent(
            '''
            from pydantic import BaseModel

            from median_lambda import tool


            class BugInput(BaseModel):
                summary: str


            @tool(risk="urgent", name="reportBug")
            def report_bug(args: BugInput) -> dict:
                """File a bug."""
                return {}
            '''
        )
    )
    with running_devserver(project, cwd=project, tools_package=None) as server:
        context, loaded = open_page(browser, server.inspector_url, WIDE)
        page = loaded.page
        # WHEN the inspector loads them
        sync = page.locator("#sync-result")
        # THEN it lists each problem as `make check` does, and offers no diagnostics
        expect(sync).to_contain_text("2 problems: Median would refuse this manifest")
        expect(sync).to_contain_text("reportBug name: is reserved by Median; choose another name")
        expect(sync).to_contain_text("reportBug risk: must be one of low, medium, reviewed, high")
        expect(card(page, "reportBug").locator(".risk-meaning")).to_have_text("An unknown risk: Median refuses it.")
        expect(page.locator("#diagnostics")).to_be_hidden()
        expect(page.locator("#diagnostics-declared")).to_contain_text("none declared")
        context.close()


def test_the_readme_screenshot_shows_the_page_as_it_is(
    inspector: LoadedPage, server: DevServerProcess, tmp_path: Path
) -> None:
    # GIVEN the page and the manifest it shows (less the server's port, which differs per run)
    request = urllib.request.Request(server.inspector_api("manifest"), headers=server.token_header)  # noqa: S310
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
        view = json.loads(response.read())
    view.pop("endpoint")
    current = fingerprint(PAGE_FILE.read_bytes(), json.dumps(view, sort_keys=True).encode(), json.dumps(WIDE).encode())
    page = inspector.page
    # WHEN a call has been made
    ticket_status = call_ticket_status(page, "TCK-1042")
    expect(ticket_status.locator(".result .status")).to_have_text("200 OK")

    def take() -> bytes:
        box = ticket_status.bounding_box()
        assert box is not None
        bottom = box["y"] + box["height"] + 24
        return page.screenshot(full_page=True, clip={"x": 0, "y": 0, "width": WIDE["width"], "height": bottom})

    # THEN the screenshot of this page is taken, into the test's own folder unless `make screenshot` asked for
    # docs/inspector.png: no test rewrites a tracked file
    target = screenshot_target(SCREENSHOT, tmp_path)
    keep_current(target, current, take)
    assert stored_fingerprint(target) == current
    assert target.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    if stored_fingerprint(SCREENSHOT) != current:
        warnings.warn(
            "docs/inspector.png shows another page or other tools than the inspector's now: make screenshot retakes it",
            stacklevel=1,
        )
