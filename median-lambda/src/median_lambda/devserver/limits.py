"""How much the dev server holds at once: connections, body bytes, and time waiting for either.

Each connection has a thread, and each body up to the cap (1 MiB) is read whole before the
handler sees it. Without these bounds, clients that each declare a large body, send most of
it and stall would hold a thread and a body each for as long as they liked. The byte budget
refuses a body that would take the bodies held past it, after its headers and before a byte
of it is read; requests without a body (the inspector's page, its manifest, a GET) need none
of it, so they are answered meanwhile.

Time is bounded per request, not per read: a request (its line, headers and body) must arrive
whole within REQUEST_DEADLINE_SECONDS of the moment the server starts waiting for it, however
its bytes trickle in; a client that sends one byte every few seconds is cut off at the deadline
as surely as a silent one. And a connection still waiting for its request never keeps a new
one out: when every slot is taken, the one that has waited longest for its request is let go
(`Connections`) to make room, so 64 clients trickling bytes cannot lock the developer out of
the endpoint or the inspector. Only connections whose requests are whole and being answered
fill the server; past those, a new connection is turned away with a 503.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections import OrderedDict

from median_lambda.protocol import MAX_BODY_BYTES

# Eight bodies of the largest size at once: far more than one person and their browser send.
BODY_BUDGET_BYTES = 8 * MAX_BODY_BYTES
# Threads, each with a connection: a browser keeps about six open.
MAX_CONNECTIONS = 64
# How long a request may take to arrive whole (line, headers and body), and a kept-alive
# connection to send its next: loopback delivers a 1 MiB body in milliseconds.
REQUEST_DEADLINE_SECONDS = 10.0


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


class Connections:
    """The connections the server holds, and which of them are still waiting for their request.

    A connection is *waiting* from the moment the server starts reading a request on it (its first,
    or the next on a kept-alive connection) until that request has arrived whole; it is then
    *answering* until its answer is sent. Only a waiting connection is ever let go to make room,
    the one that has waited longest first, so a request that has arrived is always answered.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open = 0
        self._waiting: OrderedDict[socket.socket, float] = OrderedDict()
        self._let_go: set[socket.socket] = set()
        self._lock = threading.Lock()

    @property
    def open(self) -> int:
        with self._lock:
            return self._open

    @property
    def waiting_count(self) -> int:
        with self._lock:
            return len(self._waiting)

    def admit(self) -> bool:
        """Take a new connection: a free slot, or the slot of the connection that has waited longest for
        its request, which is let go; False when every slot's request is being answered."""
        with self._lock:
            if self._open >= self.limit:
                if not self._waiting:
                    return False
                oldest, _ = self._waiting.popitem(last=False)
                self._let_go.add(oldest)
                # Its thread is blocked reading: shutting the reading side ends that read at once, and
                # the thread, finding itself let go, says so to its client and closes. Nothing is written
                # from here, so a client that reads nothing cannot hold up the server's accepting thread.
                with contextlib.suppress(OSError):
                    oldest.shutdown(socket.SHUT_RD)
                self._open -= 1
            self._open += 1
            return True

    def let_go(self, connection: socket.socket) -> bool:
        with self._lock:
            return connection in self._let_go

    def waiting(self, connection: socket.socket) -> bool:
        """The connection starts waiting for a request; False if it was let go already."""
        with self._lock:
            if connection in self._let_go:
                return False
            self._waiting[connection] = time.monotonic()
            return True

    def answering(self, connection: socket.socket) -> bool:
        """The connection's request has arrived whole; False if it was let go meanwhile (answer nothing)."""
        with self._lock:
            if connection in self._let_go:
                return False
            self._waiting.pop(connection, None)
            return True

    def closed(self, connection: socket.socket) -> None:
        """The connection's thread is done with it: its slot is free (unless letting it go freed it already)."""
        with self._lock:
            self._waiting.pop(connection, None)
            if connection in self._let_go:
                self._let_go.discard(connection)
            else:
                self._open -= 1
