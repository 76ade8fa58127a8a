"""Headless Chromium (Debian's `chromium`) driven by Playwright against a real `make serve` server.

Playwright, not Selenium: its locators wait for the page by themselves, so the tests carry no
sleeps or hand-written waits, and it drives the installed browser through `executable_path`
with no driver binary to match to Chromium's version (Selenium needs chromedriver in step).
Nothing is downloaded: `playwright install` is never run.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.devserver_process import running_devserver

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.sync_api import Browser, BrowserContext, Page, ViewportSize

    from tests.devserver_process import DevServerProcess

CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
# CI sets this to "required", so a missing browser fails the run instead of skipping silently.
REQUIRE_ENV = "MEDIAN_BROWSER_TESTS"
# What works on a closed network as root: no sandbox, no GPU, and no calls home.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WIDE: ViewportSize = {"width": 1280, "height": 900}
PHONE: ViewportSize = {"width": 390, "height": 844}


def _missing() -> str | None:
    if not CHROMIUM.exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)"
    if importlib.util.find_spec("playwright") is None:
        return "the playwright package is not installed (make install)"
    return None


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("browser") is None:
        return
    missing = _missing()
    if missing is None:
        return
    if os.environ.get(REQUIRE_ENV) == "required":
        pytest.fail(f"browser tests are required here ({REQUIRE_ENV}=required), but there is {missing}", pytrace=False)
    # Raised from this one line for every browser test, so pytest's summary folds them into one line.
    pytest.skip(f"browser tests skipped: {missing}")


@pytest.fixture(scope="package")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServerProcess]:
    with running_devserver(tmp_path_factory.mktemp("devserver")) as running:
        yield running


# Package-scoped, not the session's: Playwright's sync API marks this thread as running its event loop while it is
# open, and the tests after these (the handler's async tools, asyncio.run in a tool) must find no loop running here.
@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        # Playwright gives each launch a fresh, temporary --user-data-dir of its own.
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@dataclass
class LoadedPage:
    """A page with every URL it requested and every script error it raised."""

    page: Page
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def open_page(browser: Browser, url: str, viewport: ViewportSize) -> tuple[BrowserContext, LoadedPage]:
    context = browser.new_context(viewport=viewport)
    loaded = LoadedPage(context.new_page())
    loaded.page.on("request", lambda request: loaded.requests.append(request.url))
    loaded.page.on("pageerror", lambda error: loaded.errors.append(str(error)))
    loaded.page.goto(url)
    return context, loaded


@pytest.fixture
def inspector(browser: Browser, server: DevServerProcess) -> Iterator[LoadedPage]:
    """The inspector of the sample tools (tests/sample_tools/), at 1280 px."""
    context, loaded = open_page(browser, server.inspector_url, WIDE)
    yield loaded
    context.close()
