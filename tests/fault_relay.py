"""A TCP relay on loopback between boto3 and moto's server that fails on command, on the wire.

Faults are injected where production outages live, between the client and the service, so
that botocore and urllib3 meet them as they would on AWS: no part of boto3 is patched. Point a
client at `relay.endpoint` (for the handler: `AWS_ENDPOINT_URL_<SERVICE>`), then set
`relay.fault` at any moment, even from inside a tool while a call is under way:

- `Fault.NONE`: bytes pass both ways.
- `Fault.STALL`: requests are taken in and never answered: a read timeout. New connections
  are accepted but never read, so a retry stalls too. A request held so is sent on when the
  stall lifts, as a congested network may deliver it late, even after its client gave up.
- `Fault.TRICKLE`: requests reach the service, and its answer comes back a byte at a time,
  `relay.trickle(every_seconds=...)` apart (a byte a second by default): every wait for bytes is
  short, so a client's read timeout never fires, and the whole answer takes as long as the
  relay likes. A server or middlebox that sends slowly, on purpose or not.
- `Fault.SWALLOW`: requests are read and lost: never answered, never delivered. A read
  timeout whose request surely did not reach the service.
- `Fault.DROP`: the connection is closed cleanly before the request reaches the service:
  botocore's ConnectionClosedError.
- `Fault.RESET`: the connection is reset (RST) before the request reaches the service.
- `Fault.DROP_AFTER_REQUEST`: the request reaches the service, which acts on it, and the
  connection closes when its answer comes back, unread: the write happened, the client
  cannot know.
- `Fault.REFUSE`: nothing listens any more: new connections are refused, open ones reset.
- `Fault.ANSWER`: the relay answers each request itself, with the HTTP answer set by
  `relay.answer_with_error(...)`: an AWS error in the JSON shape DynamoDB and Secrets
  Manager document (`{"__type": "...#ThrottlingException", "message": "..."}`), such as
  throttling or access denied, which moto's server cannot be made to return. The request
  never reaches the service.

`relay.fail(fault, times=n)` meets only the next n requests with the fault, then passes them
again: a blip rather than an outage. The relay reads whole HTTP/1.1 requests (their headers,
then Content-Length bytes) before it acts on one, so `relay.requests` counts the requests
that reached the service, however the client's bytes were split, and a request dropped after
it was sent reached the service whole. Every wait is bounded: `close()` releases whatever is
stalled.
"""

from __future__ import annotations

import contextlib
import enum
import http
import json
import socket
import struct
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import TracebackType

_CHUNK = 65536
# How often a stalled or idle pump looks up from its socket: the fault may change meanwhile.
_POLL_SECONDS = 0.05
_HEADERS_END = b"\r\n\r\n"


class Fault(enum.Enum):
    NONE = "none"
    STALL = "stall"
    SWALLOW = "swallow"
    TRICKLE = "trickle"
    DROP = "drop"
    RESET = "reset"
    DROP_AFTER_REQUEST = "drop_after_request"
    REFUSE = "refuse"
    ANSWER = "answer"


def _reset(sock: socket.socket) -> None:
    """Close with an RST instead of a FIN: SO_LINGER on, with a zero timeout."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.close()


def _aws_json_error(status: int, code: str, message: str) -> bytes:
    """An AWS JSON-protocol error answer, as DynamoDB's developer guide shows one."""
    body = json.dumps({"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": message}).encode()
    head = (
        f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}\r\n"
        "x-amzn-RequestId: RELAY0000000000000000000000000000000000000000000000\r\n"
        "Content-Type: application/x-amz-json-1.0\r\n"
        f"Content-Length: {len(body)}\r\n"
        "\r\n"
    )
    return head.encode("ascii") + body


class _RequestFramer:
    """Splits the bytes a client sends into whole HTTP/1.1 requests, by their Content-Length."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, data: bytes) -> list[bytes]:
        self._buffer += data
        requests = []
        while (end := self._end_of_first()) is not None:
            requests.append(self._buffer[:end])
            self._buffer = self._buffer[end:]
        return requests

    def _end_of_first(self) -> int | None:
        headers_end = self._buffer.find(_HEADERS_END)
        if headers_end < 0:
            return None
        length = 0
        for line in self._buffer[:headers_end].split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        end = headers_end + len(_HEADERS_END) + length
        return end if len(self._buffer) >= end else None


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
        self.answered = 0  # requests the relay answered itself (Fault.ANSWER)
        self._error_answer = _aws_json_error(
            400, "ThrottlingException", "Rate of requests exceeds the allowed throughput."
        )
        self._faults_left: int | None = None  # with fail(times=n): requests still to meet the fault
        self.trickle_seconds = 1.0  # Fault.TRICKLE: the wait between two bytes of an answer
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

    def fail(self, fault: Fault, *, times: int | None = None) -> None:
        """Meet requests with `fault`: every one from now on, or only the next `times`."""
        with self._lock:
            self._faults_left = times
            self.fault = fault

    def trickle(self, every_seconds: float = 1.0, *, times: int | None = None) -> None:
        """Answers come back a byte every `every_seconds` (Fault.TRICKLE): all from now on, or the next `times`."""
        self.trickle_seconds = every_seconds
        self.fail(Fault.TRICKLE, times=times)

    def answer_with_error(self, code: str, message: str, *, status: int = 400, times: int | None = None) -> None:
        """Answer requests with an AWS error, e.g. ("AccessDeniedException", "User: ... is not authorized ...")."""
        with self._lock:
            self._error_answer = _aws_json_error(status, code, message)
        self.fail(Fault.ANSWER, times=times)

    def _fault_for_next_request(self) -> Fault:
        with self._lock:
            fault = self.fault
            if fault is not Fault.NONE and self._faults_left is not None:
                self._faults_left -= 1
                if self._faults_left <= 0:
                    self.fault, self._faults_left = Fault.NONE, None
            return fault

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
        trickling = threading.Event()  # set once a request met Fault.TRICKLE: its answer comes back slowly
        back = threading.Thread(target=self._pump_back, args=(upstream, client, answering, trickling), daemon=True)
        back.start()
        self._pump_forward(client, upstream, answering, trickling)

    def _pump_forward(
        self, client: socket.socket, upstream: socket.socket, answering: threading.Event, trickling: threading.Event
    ) -> None:
        try:
            client.settimeout(_POLL_SECONDS)
        except OSError:  # closed already, by the other pump or by close()
            return
        framer = _RequestFramer()
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
            requests = framer.feed(data)
            if not data or not all(self._relay(each, client, upstream, answering, trickling) for each in requests):
                break
        _close(upstream)
        _close(client)

    def _relay(
        self,
        request: bytes,
        client: socket.socket,
        upstream: socket.socket,
        answering: threading.Event,
        trickling: threading.Event,
    ) -> bool:
        """Act on one whole request as the fault says; False when the connection is done for."""
        fault = self._fault_for_next_request()
        if fault in (Fault.STALL, Fault.SWALLOW):
            return True  # the request is swallowed
        if fault in (Fault.DROP, Fault.REFUSE):
            _close(client)
            return False
        if fault is Fault.RESET:
            _reset(client)
            return False
        if fault is Fault.ANSWER:
            with self._lock:
                self.answered += 1
                answer = self._error_answer
            try:
                client.sendall(answer)
            except OSError:
                return False
            return True
        if fault is Fault.DROP_AFTER_REQUEST:
            answering.clear()  # the service's answer, when it comes, closes the line instead
        if fault is Fault.TRICKLE:
            trickling.set()
        with self._lock:
            self.requests += 1
        try:
            upstream.sendall(request)
        except OSError:
            return False
        return True

    def _pump_back(
        self, upstream: socket.socket, client: socket.socket, answering: threading.Event, trickling: threading.Event
    ) -> None:
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
            if trickling.is_set():
                if not self._send_slowly(client, data):
                    break
                continue
            try:
                client.sendall(data)
            except OSError:
                break
        _close(client)

    def _send_slowly(self, client: socket.socket, data: bytes) -> bool:
        """Send `data` a byte every `trickle_seconds`; False when the line is gone or the relay closed."""
        for index in range(len(data)):
            try:
                client.sendall(data[index : index + 1])
            except OSError:
                return False
            if self._closed.wait(self.trickle_seconds):
                return False
        return True

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
