"""The inspector's token in headless Chromium: the page the printed link opens runs tools; no other does."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.browser.conftest import WIDE, open_page

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator

    from tests.browser.conftest import LoadedPage
    from tests.devserver_process import DevServerProcess

pytestmark = pytest.mark.browser


def expect(locator: Locator) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def test_the_page_keeps_its_token_out_of_the_address_bar_and_across_its_reloads(
    inspector: LoadedPage, server: DevServerProcess
) -> None:
    # GIVEN the page opened from the link make serve printed
    page = inspector.page
    expect(page.locator("article.card")).to_have_count(4)
    # WHEN it has loaded, and is reloaded (as it reloads itself when a tool file is saved)
    assert "token" not in page.url
    page.reload()
    # THEN the token left the address bar, and the page still calls tools with it
    assert "token" not in page.url
    ticket_status = page.locator('article[data-tool="ticketStatus"]')
    ticket_status.get_by_label("ticketNumber").fill("TCK-1042")
    ticket_status.get_by_role("button", name="Call ticketStatus").click()
    expect(ticket_status.locator(".result .status")).to_have_text("200 OK")
    assert inspector.errors == []


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("", "This page has no inspector token"),
        ("?token=from-yesterdays-server", "is not this server's"),
    ],
    ids=["no token", "another run's token"],
)
def test_a_page_without_this_runs_token_says_where_to_get_it_and_shows_no_tools(
    browser: Browser, server: DevServerProcess, query: str, says: str
) -> None:
    # GIVEN the inspector's address typed by hand, or an old link from an earlier run of the server
    context, loaded = open_page(browser, f"{server.url}_inspector{query}", WIDE)
    try:
        # WHEN the page loads
        banner = loaded.page.locator("#load-error")
        # THEN it says why and where the right link is, and shows no tool to call
        expect(banner).to_contain_text(says)
        expect(banner).to_contain_text("the link `make serve` printed in its terminal")
        expect(loaded.page.locator("article.card")).to_have_count(0)
        assert loaded.errors == []
    finally:
        context.close()
