"""A company's HTTP API that records writes: each POST one write, counted, and answered at once."""

from __future__ import annotations

import http.server
import json
import threading
from typing import Any, ClassVar


class Ledger(http.server.ThreadingHTTPServer):
    """An HTTP API on loopback that records each POST as one write, and answers it at once."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _LedgerHandler)
        self.writes = 0
        self._counting = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/refunds"

    def count_a_write(self) -> None:
        with self._counting:
            self.writes += 1


class _LedgerHandler(http.server.BaseHTTPRequestHandler):
    server: Ledger
    protocol_version = "HTTP/1.1"
    answer: ClassVar[bytes] = json.dumps({"refund": "R-1", "status": "recorded"}).encode()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.count_a_write()
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.answer)))
        self.end_headers()
        self.wfile.write(self.answer)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's own signature
        return None
