"""A stand-in's HTTP server on loopback: in a thread of its own from the moment it is made, closed on exit."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    from types import TracebackType


class QuietHandler(BaseHTTPRequestHandler):
    """http.server's handler, without its line on stderr for each request: a test's output is the test's."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server's signature
        pass


class LoopbackServer:
    """Serves `handler` at `endpoint` (a free port on 127.0.0.1) until closed; a context manager."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()
