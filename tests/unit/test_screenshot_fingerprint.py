"""docs/inspector.png is retaken only when what it shows may have changed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.browser.screenshot import keep_current, stored_fingerprint
from tests.devserver_process import REPO

if TYPE_CHECKING:
    from pathlib import Path

SCREENSHOT = REPO / "docs" / "inspector.png"


def test_a_matching_fingerprint_leaves_the_screenshot_alone(tmp_path: Path) -> None:
    # GIVEN a real PNG, the README's screenshot
    png = SCREENSHOT.read_bytes()
    target = tmp_path / "shot.png"
    # WHEN it is kept current for one fingerprint twice, then for another
    first = keep_current(target, "page-1", lambda: png)
    unchanged = keep_current(target, "page-1", lambda: b"never taken")
    changed = keep_current(target, "page-2", lambda: png)
    # THEN only a new fingerprint rewrites the file, which stays a PNG carrying that fingerprint
    assert (first, unchanged, changed) == (True, False, True)
    assert stored_fingerprint(target) == "page-2"
    assert target.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_the_checked_in_screenshot_carries_its_fingerprint() -> None:
    # GIVEN the README's screenshot, as the browser test wrote it
    # WHEN its fingerprint is read
    # THEN there is one: a run with the same page and tools will not rewrite it
    assert stored_fingerprint(SCREENSHOT) is not None
