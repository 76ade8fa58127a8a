"""docs/inspector.png is retaken only when asked (`make screenshot`), and then only when what it shows may have
changed: a run of the browser tests writes its screenshot into a folder of its own."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.browser.screenshot import REFRESH_ENV, keep_current, screenshot_target, stored_fingerprint
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


@pytest.mark.parametrize(("asked", "written_to_docs"), [(None, False), ("0", False), ("1", True)])
def test_the_tracked_image_is_written_only_when_a_refresh_is_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, asked: str | None, written_to_docs: bool
) -> None:
    # GIVEN a run with or without make screenshot's MEDIAN_REFRESH_SCREENSHOT=1
    if asked is None:
        monkeypatch.delenv(REFRESH_ENV, raising=False)
    else:
        monkeypatch.setenv(REFRESH_ENV, asked)
    # WHEN the browser test picks where to write its screenshot
    target = screenshot_target(SCREENSHOT, tmp_path)
    # THEN it is docs/inspector.png only when asked; otherwise a file of the test's own folder
    assert target == (SCREENSHOT if written_to_docs else tmp_path / "inspector.png")
