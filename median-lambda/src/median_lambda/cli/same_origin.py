"""Signed requests that never leave the origin the user named.

urllib follows a redirect to any host and copies every header but the body's onto the new
request: a `median-signature`, valid for five minutes under the real key, would go to whoever
the first server points at. Here a redirect is followed only within the same scheme, host and
port; any other is refused before a connection is made to it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit
from urllib.request import HTTPRedirectHandler, OpenerDirector, build_opener

if TYPE_CHECKING:
    from http.client import HTTPMessage
    from typing import IO
    from urllib.request import Request

_DEFAULT_PORTS = {"http": 80, "https": 443}


class RedirectRefused(Exception):
    """The server redirected to another origin; `target` is that origin, never the rest of its URL."""

    def __init__(self, status: int, target: str) -> None:
        super().__init__(f"{status} redirect to {target}")
        self.status = status
        self.target = target


def origin(url: str) -> str:
    """scheme://host:port, the port spelled out: what a signature may be sent to."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:  # a port that is no number: an origin of its own, never equal to a real one
        port = None
    host = (parts.hostname or "").lower()
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port or _DEFAULT_PORTS.get(scheme, 0)}"


class _SameOriginRedirects(HTTPRedirectHandler):
    def redirect_request(
        self, req: Request, fp: IO[bytes], code: int, msg: str, headers: HTTPMessage, newurl: str
    ) -> Request | None:
        if origin(newurl) != origin(req.full_url):
            raise RedirectRefused(code, origin(newurl))
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def opener() -> OpenerDirector:
    """An opener like urlopen's, but whose redirects stay on the origin of the request's URL."""
    return build_opener(_SameOriginRedirects)
