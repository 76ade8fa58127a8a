"""docs/inspector.png, retaken on request (`make screenshot`) whenever what it shows may have changed.

The browser test takes the screenshot into its own temporary folder on every run, and writes
docs/inspector.png only when MEDIAN_REFRESH_SCREENSHOT=1 asks it to: no test rewrites a tracked
file, and a clone with Chromium keeps a clean `git status` after `make test`. A stale image is a
warning in the run's summary, with the command that retakes it.

The PNG carries, in a tEXt chunk, a fingerprint of what it was taken from: the page's file and
the manifest view it showed. A retake whose fingerprint matches leaves the file alone, so the
image is not rewritten only because a callId or a timing differs.
The chunk is written by hand: its framing is twelve bytes, not worth a Pillow dependency.
"""

from __future__ import annotations

import hashlib
import os
import struct
import zlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

KEYWORD = b"inspector-fingerprint"
# Set to 1 (make screenshot) to write the screenshot to docs/ rather than to the test's own folder.
REFRESH_ENV = "MEDIAN_REFRESH_SCREENSHOT"
_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_AFTER_HEADER = len(_SIGNATURE) + 4 + 4 + 13 + 4  # the IHDR chunk, which must come first


def fingerprint(*parts: bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def stored_fingerprint(png: Path) -> str | None:
    if not png.exists():
        return None
    data = png.read_bytes()
    offset = len(_SIGNATURE)
    while offset + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[offset : offset + 8])
        if kind == b"tEXt":
            keyword, _, text = data[offset + 8 : offset + 8 + length].partition(b"\0")
            if keyword == KEYWORD:
                return text.decode("latin-1")
        if kind == b"IDAT":
            return None
        offset += 12 + length
    return None


def with_fingerprint(png: bytes, value: str) -> bytes:
    payload = KEYWORD + b"\0" + value.encode("latin-1")
    chunk = struct.pack(">I", len(payload)) + b"tEXt" + payload + struct.pack(">I", zlib.crc32(b"tEXt" + payload))
    return png[:_AFTER_HEADER] + chunk + png[_AFTER_HEADER:]


def keep_current(target: Path, value: str, take: Callable[[], bytes]) -> bool:
    """Write `take()` to `target` unless it already shows `value`; True when written."""
    if stored_fingerprint(target) == value:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(with_fingerprint(take(), value))
    return True


def screenshot_target(docs_image: Path, scratch: Path) -> Path:
    """Where a run writes its screenshot: `docs_image` when asked to refresh it, else a file in `scratch`."""
    return docs_image if os.environ.get(REFRESH_ENV, "").strip() == "1" else scratch / docs_image.name
