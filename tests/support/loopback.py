"""A stand-in's HTTP server on loopback, served from a thread (tests/threaded_server.py) from the moment it is
made until it is closed; a context manager."""

from __future__ import annotations

from contextlib import ExitStack
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Self

from tests.threaded_server import serving_in_a_thread

if TYPE_CHECKING:
    from types import TracebackType


class QuietHandler(BaseHTTPRequestHandler):
    """http.server's handler, without its line on stderr for each request: a test's output is the test's."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server's signature
        pass


class LoopbackServer:
    """Serves `handler` at `endpoint` (a free port on 127.0.0.1) until closed."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{server.server_address[1]}"
        self._serving = ExitStack()
        self._serving.enter_context(serving_in_a_thread(server, poll_seconds=0.05))

    def close(self) -> None:
        self._serving.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()
