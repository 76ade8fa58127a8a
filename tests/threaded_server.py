"""A server of `socketserver`'s (an http.server, the dev server) served from a thread of the test process."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import socketserver
    from collections.abc import Iterator


@contextmanager
def serving_in_a_thread[Server: "socketserver.BaseServer"](
    server: Server, poll_seconds: float = 0.5
) -> Iterator[Server]:
    """`server`, answering from a daemon thread until the block ends, then shut down and its socket closed."""
    thread = threading.Thread(target=server.serve_forever, args=(poll_seconds,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
