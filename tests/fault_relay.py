"""A TCP relay on loopback between boto3 and moto's server that fails on command, on the wire.

Faults are injected where production outages live, between the client and the service, so
that botocore and urllib3 meet them as they would on AWS: no part of boto3 is patched. Point a
client at `relay.endpoint` (for the handler: `AWS_ENDPOINT_URL_<SERVICE>`), then set
`relay.fault` at any moment, even from inside a tool while a call is under way:

- `Fault.NONE`: bytes pass both ways.
- `Fault.STALL`: requests are taken in and never answered: a read timeout. New connections
  are accepted but never read, so a retry stalls too.
- `Fault.DROP`: the connection is closed cleanly before the request reaches the service:
  botocore's ConnectionClosedError.
- `Fault.RESET`: the connection is reset (RST) before the request reaches the service.
- `Fault.DROP_AFTER_REQUEST`: the request reaches the service, which acts on it, and the
  connection closes before its answer comes back: the write happened, the client cannot know.
- `Fault.REFUSE`: nothing listens any more: new connections are refused, open ones reset.

`relay.requests` counts the requests that reached the service, so a test can tell whether a
retry was made. Every wait is bounded: `close()` releases whatever is stalled.
"""

from __future__ import annotations

import contextlib
import enum
import re
import socket
import struct
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import TracebackType

_CHUNK = 65536
# How often a stalled or idle pump looks up from its socket: the fault may change meanwhile.
_POLL_SECONDS = 0.05
# A request line at the start of a chunk: what `requests` counts (a body may follow in other chunks).
_REQUEST_LINE = re.compile(rb"[A-Z]+ \S+ HTTP/1\.[01]\r\n")


class Fault(enum.Enum):
    NONE = "none"
    STALL = "stall"
    DROP = "drop"
    RESET = "reset"
    DROP_AFTER_REQUEST = "drop_after_request"
    REFUSE = "refuse"


def _reset(sock: socket.socket) -> None:
    """Close with an RST instead of a FIN: SO_LINGER on, with a zero timeout."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.close()


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()


class FaultRelay:
    """Relays 127.0.0.1:<port> to the upstream (host, port), failing as `fault` says."""

    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self._upstream = (upstream_host, upstream_port)
        self.fault = Fault.NONE
        self.requests = 0
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._connections: set[socket.socket] = set()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(_POLL_SECONDS)
        self.port = int(self._listener.getsockname()[1])
        self._acceptor = threading.Thread(target=self._accept, name="fault-relay", daemon=True)
        self._acceptor.start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if self.fault is Fault.REFUSE:
                _reset(client)
                continue
            threading.Thread(target=self._serve, args=(client,), name="fault-relay-conn", daemon=True).start()

    def _track(self, *sockets: socket.socket) -> None:
        with self._lock:
            self._connections.update(sockets)

    def _serve(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(self._upstream, timeout=5)
        except OSError:
            _reset(client)
            return
        self._track(client, upstream)
        answering = threading.Event()  # set while an answer may flow back to the client
        answering.set()
        back = threading.Thread(target=self._pump_back, args=(upstream, client, answering), daemon=True)
        back.start()
        self._pump_forward(client, upstream, answering)

    def _pump_forward(self, client: socket.socket, upstream: socket.socket, answering: threading.Event) -> None:
        try:
            client.settimeout(_POLL_SECONDS)
        except OSError:  # closed already, by the other pump or by close()
            return
        while not self._closed.is_set():
            if self.fault is Fault.STALL:
                # Take nothing in and send nothing on: the client waits for an answer that never comes.
                self._closed.wait(_POLL_SECONDS)
                continue
            try:
                data = client.recv(_CHUNK)
            except TimeoutError:
                continue
            except OSError:
                break
            if not data:
                break
            fault = self.fault
            if fault is Fault.STALL:
                continue  # the request is swallowed
            if fault in (Fault.DROP, Fault.REFUSE):
                _close(client)
                break
            if fault is Fault.RESET:
                _reset(client)
                break
            if fault is Fault.DROP_AFTER_REQUEST:
                answering.clear()  # the service's answer, when it comes, closes the line instead
            if _REQUEST_LINE.match(data):
                with self._lock:
                    self.requests += 1
            try:
                upstream.sendall(data)
            except OSError:
                break
        _close(upstream)
        _close(client)

    def _pump_back(self, upstream: socket.socket, client: socket.socket, answering: threading.Event) -> None:
        try:
            upstream.settimeout(_POLL_SECONDS)
        except OSError:  # closed already, by the other pump or by close()
            return
        while not self._closed.is_set():
            try:
                data = upstream.recv(_CHUNK)
            except TimeoutError:
                continue
            except OSError:
                break
            if not data:
                break
            if not answering.is_set():
                break  # the service acted on the request; its answer is lost with the line
            if self.fault is Fault.STALL:
                continue  # the answer is held back for good
            try:
                client.sendall(data)
            except OSError:
                break
        _close(client)

    def close(self) -> None:
        self._closed.set()
        _close(self._listener)
        with self._lock:
            for sock in self._connections:
                _close(sock)
            self._connections.clear()
        self._acceptor.join(timeout=2)

    def __enter__(self) -> FaultRelay:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()
