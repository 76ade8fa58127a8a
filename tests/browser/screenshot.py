"""docs/inspector.png, retaken by the browser tests whenever what it shows may have changed.

The PNG carries, in a tEXt chunk, a fingerprint of what it was taken from: the page's file and
the manifest view it showed. A run whose fingerprint matches leaves the file alone, so `make test`
does not rewrite a checked-in image each time only because a callId or a timing differs.
The chunk is written by hand: its framing is twelve bytes, not worth a Pillow dependency.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

KEYWORD = b"inspector-fingerprint"
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
