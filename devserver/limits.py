"""How much the dev server holds at once: connections, body bytes, and time waiting for either.

Each connection has a thread, and each body up to the cap (1 MiB) is read whole before the
handler sees it. Without these bounds, clients that each declare a large body, send most of
it and stall would hold a thread and a body each for as long as they liked. The byte budget
refuses a body that would take the bodies held past it, after its headers and before a byte
of it is read; requests without a body (the inspector's page, its manifest, a GET) need none
of it, so they are answered meanwhile.
"""

from __future__ import annotations

import threading

from handler.protocol import MAX_BODY_BYTES

# Eight bodies of the largest size at once: far more than one person and their browser send.
BODY_BUDGET_BYTES = 8 * MAX_BODY_BYTES
# Threads, each with a connection: a browser keeps about six open; the rest are turned away.
MAX_CONNECTIONS = 64
# How long a connection may be silent in the middle of a request, or idle between two.
READ_TIMEOUT_SECONDS = 10.0


class BodyBudget:
    """The bytes of request bodies the server may hold at once, shared by its threads."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._held = 0
        self._lock = threading.Lock()

    @property
    def held(self) -> int:
        with self._lock:
            return self._held

    def reserve(self, size: int) -> bool:
        """Take `size` bytes of the budget, if that many are left; False (and nothing taken) if not."""
        with self._lock:
            if self._held + size > self.limit:
                return False
            self._held += size
            return True

    def release(self, size: int) -> None:
        with self._lock:
            self._held -= size
