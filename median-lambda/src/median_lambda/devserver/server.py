"""The dev server's HTTP side: `/_inspector` is the inspector; every other request is the Lambda's.

Each request to the endpoint becomes an API Gateway HTTP API (payload 2.0) event and goes
through `median_lambda.app.lambda_handler`, as it would behind API Gateway. Every request, on
either side, first passes `median_lambda.devserver.guards`: loopback's Host, no other site's Origin, and
a body within the cap by its Content-Length; then `median_lambda.devserver.limits`: a body within what the
server holds at once, and the whole request arrived within its deadline, however it trickles.

Every answer is JSON with a status, whatever arrived: http.server's own errors (a request
line it cannot read, a method it has no handler for) and a failure of the server's own code
included. The connection is never dropped without one, except a request that never finished
its headers.
"""

from __future__ import annotations

import contextlib
import io
import sys
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from median_lambda.devserver import inspector
from median_lambda.devserver.guards import admitted_body_length, refusal
from median_lambda.devserver.inspector import Reply
from median_lambda.devserver.lambda_runner import invoke
from median_lambda.devserver.limits import (
    BODY_BUDGET_BYTES,
    MAX_CONNECTIONS,
    REQUEST_DEADLINE_SECONDS,
    BodyBudget,
    Connections,
)
from median_lambda.protocol import JSON_CONTENT_TYPE, ErrorCode
from median_lambda.testing import http_event

if TYPE_CHECKING:
    import socket
    from collections.abc import Callable

    # socketserver's type for a request: a TCP server's is always the socket.
    _Request = socket.socket | tuple[bytes, socket.socket]

HOST = "127.0.0.1"
# How long an answer may take to leave, to a client that does not read it; and the word to one let go.
WRITE_TIMEOUT_SECONDS = 10.0
GOODBYE_TIMEOUT_SECONDS = 1.0

# http.server's own refusals, as the contract's codes. Its messages are not sent: some repeat
# what was received (the request line, the method), and an answer never repeats a request.
_HTTP_SERVER_ERRORS = {
    400: (ErrorCode.BAD_REQUEST, "The request is not HTTP/1.1 the dev server can read."),
    408: (ErrorCode.TIMEOUT, "The request stalled: its bytes stopped arriving before its end."),
    414: (ErrorCode.TOO_LARGE, "The request's path is too long."),
    431: (ErrorCode.TOO_LARGE, "The request's headers are too large."),
    501: (ErrorCode.METHOD_NOT_ALLOWED, "The dev server answers GET, HEAD, POST, PUT, PATCH, DELETE and OPTIONS."),
    505: (ErrorCode.BAD_REQUEST, "The dev server speaks HTTP/1.0 and HTTP/1.1."),
}


class _ReadsBeforeTheDeadline(io.RawIOBase):
    """The connection's bytes, for as long as the request being read still has time: every read waits
    only what is left of the whole request's deadline, so bytes trickling in cannot stretch it."""

    def __init__(self, handler: DevRequestHandler) -> None:
        self._handler = handler

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self._handler.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request did not arrive whole within its deadline")
        connection = self._handler.connection
        connection.settimeout(left)
        received: int = connection.recv_into(buffer)
        return received


class DevRequestHandler(BaseHTTPRequestHandler):
    server_version = "median-devserver"
    server: DevServer
    deadline = 0.0  # time.monotonic() by which the request being read must have arrived whole

    def setup(self) -> None:
        super().setup()
        # Reads bounded by the request's deadline, not each by a timeout of its own: http.server's
        # buffered file over the socket would give a client that trickles a byte a second all day.
        made_by_http_server, self.rfile = self.rfile, io.BufferedReader(_ReadsBeforeTheDeadline(self))
        made_by_http_server.close()

    def handle_one_request(self) -> None:
        """Read and answer one request, which must arrive whole (line, headers, body) before its deadline."""
        self.deadline = time.monotonic() + self.server.request_deadline
        if not self.server.connections.waiting(self.connection):
            self.close_connection = True  # let go to make room, before it sent anything more
            return
        super().handle_one_request()

    def _serve(self) -> None:
        try:
            self._answer()
        except ConnectionError:
            self.close_connection = True  # the client left: there is no one to answer
        except TimeoutError:
            self._last_word(lambda: self.send_error(408))
        except Exception:  # the dev server's own failure: said in its terminal, answered with a status
            traceback.print_exc(file=sys.stderr)
            failed = refusal(500, ErrorCode.INTERNAL_ERROR, "The dev server failed; its terminal says why.")
            self._last_word(lambda: self._send(failed))

    def _last_word(self, answer: Callable[[], None]) -> None:
        """Send the answer that ends this connection, if the client is still there to read it."""
        self.close_connection = True
        with contextlib.suppress(OSError):  # gone, or not reading: the connection closes either way
            answer()

    def _answer(self) -> None:
        path = self.path.split("?", 1)[0]
        length = admitted_body_length(self.headers, self.server.port)
        if isinstance(length, Reply):
            self.close_connection = True  # the body, if any, stays unread
            self._send(length)
            return
        if not self.server.body_budget.reserve(length):
            self.close_connection = True
            self._send(self.server.budget_refusal())
            return
        try:
            body = self.rfile.read(length) if length else b""
            if len(body) < length:  # the client closed the connection before the end of its body
                self.close_connection = True
                if self.server.connections.let_go(self.connection):  # or the server let it go for another
                    self._last_word(lambda: self._send(self.server.goodbye()))
                return
            if not self.server.connections.answering(self.connection):
                # Let go to make room while its request was arriving: it is told so, and nothing is run.
                self._last_word(lambda: self._send(self.server.goodbye()))
                return
            headers = {name.lower(): value for name, value in self.headers.items()}
            if inspector.owns(path):
                token = self.server.token
                self._send(inspector.route(self.command, path, headers, body, port=self.server.port, token=token))
            else:
                self._send(self._bridge(path, headers, body))
        finally:
            self.server.body_budget.release(length)

    def _bridge(self, path: str, headers: dict[str, str], body: bytes) -> Reply:
        """The Lambda's answer to this request, sent through API Gateway's event shape."""
        event = http_event(self.command, body, headers=headers, path=path, base64_body=True)
        response, _ = invoke(event)
        response_headers = dict(response.get("headers", {}))
        content_type = response_headers.pop("Content-Type", JSON_CONTENT_TYPE)
        return Reply(response["statusCode"], response.get("body", "").encode("utf-8"), content_type, response_headers)

    def _send(self, reply: Reply) -> None:
        # The request is read (or refused unread): it is being answered, and is no longer let go to make room.
        if not self.server.connections.answering(self.connection):
            reply = self.server.goodbye()  # let go to make room: whatever it was to be told, it is told that
            self.close_connection = True
        let_go = self.server.connections.let_go(self.connection)
        self.connection.settimeout(GOODBYE_TIMEOUT_SECONDS if let_go else WRITE_TIMEOUT_SECONDS)
        if self.request_version == "HTTP/0.9":
            # http.server's value for a request line it could not read, and HTTP/0.9's answers have no
            # status line: this one has, so the client learns what went wrong.
            self.request_version = "HTTP/1.0"
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(reply.body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _serve

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (and a stalled body), as JSON like every other answer."""
        error_code, text = _HTTP_SERVER_ERRORS.get(code, (ErrorCode.BAD_REQUEST, "The request cannot be served."))
        self.close_connection = True
        self._send(refusal(code, error_code, text))

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        path = (getattr(self, "path", None) or "").split("?", 1)[0]
        if path == inspector.REVISION_PATH:
            return  # the open inspector page asks every second: its lines would bury everything else
        # The method and path only: never the query, which holds the inspector's token, nor headers,
        # which carry the signature. A request line that could not be read has neither.
        command = getattr(self, "command", None) or "?"
        sys.stderr.write(f"{_printable(command)} {_printable(path) or '?'} -> {code}\n")

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass  # http.server's other lines (an idle connection timing out) say nothing to act on


def _printable(text: str) -> str:
    """What a terminal shows as written: a request's escape sequences could otherwise move its cursor or recolour it."""
    return "".join(character if character.isprintable() and character.isascii() else "?" for character in text)


class DevServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        port: int,
        *,
        request_deadline: float = REQUEST_DEADLINE_SECONDS,
        body_budget: int = BODY_BUDGET_BYTES,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        # Loopback only; and the inspector runs tools only for whoever holds the printed token.
        super().__init__((HOST, port), DevRequestHandler)
        self.request_deadline = request_deadline
        self.body_budget = BodyBudget(body_budget)
        self.token = inspector.new_token()
        self.connections = Connections(max_connections)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        return inspector.endpoint_url(self.port)

    @property
    def inspector_url(self) -> str:
        return inspector.page_url(self.port, self.token)

    def budget_refusal(self) -> Reply:
        return refusal(
            503,
            ErrorCode.TOO_LARGE,
            f"The dev server is already holding {self.body_budget.limit:,} bytes of request bodies, its most at "
            "once; send this one again in a moment.",
            {"Retry-After": "1"},
        )

    def goodbye(self) -> Reply:
        """The answer of a connection let go to make room: it had waited longest for its request."""
        return refusal(
            503,
            ErrorCode.TOO_LARGE,
            "The dev server let this connection go to make room for another: it had waited longest for its "
            "request to arrive. Send it again.",
            {"Retry-After": "1"},
        )

    def process_request(self, request: _Request, client_address: Any) -> None:
        if not self.connections.admit():
            self._turn_away(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.connections.closed(_socket_of(request))
            raise

    def process_request_thread(self, request: _Request, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.connections.closed(_socket_of(request))

    def _turn_away(self, request: _Request) -> None:
        """Answer 503 at once on the accepting thread, which a fresh socket's empty send buffer never blocks."""
        reply = refusal(
            503, ErrorCode.TOO_LARGE, "The dev server has as many connections open as it takes; try again shortly."
        )
        head = (
            f"HTTP/1.1 503 Service Unavailable\r\nContent-Type: {reply.content_type}\r\n"
            + "".join(f"{name}: {value}\r\n" for name, value in {**reply.headers, "Retry-After": "1"}.items())
            + f"Content-Length: {len(reply.body)}\r\n\r\n"
        )
        connection = _socket_of(request)
        try:
            connection.settimeout(0)
            connection.sendall(head.encode("ascii") + reply.body)
        except OSError:
            pass  # gone already, or not reading: either way it is not served
        self.shutdown_request(request)


def _socket_of(request: _Request) -> socket.socket:
    return request[1] if isinstance(request, tuple) else request  # a TCP server's is a socket
