"""What the dev server refuses before it reads a body: foreign pages, and bodies it will not hold.

Every path gets these checks, the endpoint (`/`) as much as the inspector: a page on another
site reaches a loopback server through its visitor's browser, by a DNS name rebound to
127.0.0.1 (its `Host` gives it away) or by a plain cross-site request (its `Origin` does).
Bodies are judged by their declared length, so a 300 MB upload is refused after its headers
and never read into memory.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from median_lambda.devserver.inspector import Reply
from median_lambda.protocol import MAX_BODY_BYTES, ErrorCode

if TYPE_CHECKING:
    from email.message import Message

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def loopback_hosts(port: int) -> frozenset[str]:
    return frozenset(f"{name}:{port}" for name in LOOPBACK_NAMES)


def loopback_origins(port: int) -> frozenset[str]:
    return frozenset(f"http://{host}" for host in loopback_hosts(port))


def refusal(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Reply:
    """An error answer after which the connection closes: whatever body was sent stays unread."""
    body = json.dumps({"error": {"code": code, "message": message}}).encode("utf-8")
    return Reply(status, body, headers={"Cache-Control": "no-store", **(headers or {}), "Connection": "close"})


def too_large() -> Reply:
    return refusal(413, ErrorCode.TOO_LARGE, f"The dev server takes bodies of at most {MAX_BODY_BYTES:,} bytes.")


def admitted_body_length(headers: Message, port: int) -> int | Reply:
    """How many body bytes to read for this request, or its refusal; judged on the headers alone."""
    return foreign_page_refusal(headers, port) or body_length(headers)


def foreign_page_refusal(headers: Message, port: int) -> Reply | None:
    """403 unless the request names this server by a loopback name and comes from no other site."""
    hosts = headers.get_all("Host") or []
    if len(hosts) != 1 or hosts[0].strip().lower() not in loopback_hosts(port):
        # A name other than loopback's is a DNS-rebinding page reaching in through the browser.
        return refusal(
            403, ErrorCode.FORBIDDEN, f"The dev server answers only at http://127.0.0.1:{port}/ (or localhost)."
        )
    origins = headers.get_all("Origin") or []
    if origins and (len(origins) != 1 or origins[0].strip().lower() not in loopback_origins(port)):
        # Median and curl send no Origin; a browser sends it on every cross-site request.
        return refusal(403, ErrorCode.FORBIDDEN, "The dev server takes no requests from other sites' pages.")
    return None


def body_length(headers: Message) -> int | Reply:
    """The body's declared length, or the refusal that answers it without reading a byte of it.

    HTTP/1.1 gives a request without Content-Length or Transfer-Encoding no body at all;
    a chunked one is refused rather than read, since Median, curl and browsers all send a
    Content-Length for a body they hold.
    """
    if headers.get_all("Transfer-Encoding"):
        return refusal(411, ErrorCode.BAD_REQUEST, "Send the body with a Content-Length; chunked bodies are not read.")
    lengths = headers.get_all("Content-Length") or []
    if not lengths:
        return 0
    # Digits only: int() would also take "+5", " 5", "5_000" and other digits than ASCII ones.
    text = lengths[0].strip()
    if len(lengths) != 1 or not (text.isascii() and text.isdigit()):
        return refusal(400, ErrorCode.BAD_REQUEST, "Content-Length must be one whole number of bytes.")
    # Judged by its digits first: int() refuses over 4,300 of them, and a header line may hold 65,536.
    if len(text.lstrip("0")) > len(str(MAX_BODY_BYTES)):
        return too_large()
    length = int(text)
    return too_large() if length > MAX_BODY_BYTES else length
