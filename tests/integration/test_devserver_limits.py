"""The dev server's memory stays bounded under clients that send most of a large body and stall.

Real sockets on loopback against a real `DevServer` in this process, made with small limits
(two bodies' worth of budget, a few connections, a short read timeout) so a handful of
clients reach them. Each test asserts what a client is answered, never how long it took; the
waits are bounded only so a hung server fails the test instead of hanging the suite.
"""

from __future__ import annotations

import json
import socket
import time
from contextlib import ExitStack
from typing import TYPE_CHECKING

import pytest

from handler.protocol import MAX_BODY_BYTES
from tests.devserver_process import read_answer, serving_in_process

if TYPE_CHECKING:
    from collections.abc import Callable

    from devserver.server import DevServer

SAFETY_TIMEOUT_SECONDS = 30.0
MOST_OF_A_BODY = MAX_BODY_BYTES - 1024


def eventually(condition: Callable[[], bool], what: str) -> None:
    """Wait for the server to reach a state it reaches on its own threads; fail if it never does."""
    deadline = time.monotonic() + SAFETY_TIMEOUT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"the server never reached this state: {what}"
        time.sleep(0.02)


def connect(server: DevServer) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=SAFETY_TIMEOUT_SECONDS)


def head(server: DevServer, method: str, path: str, length: int | None = None, **headers: str) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{server.port}"]
    lines += [] if length is None else [f"Content-Length: {length}"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")


def closed_by_server(connection: socket.socket) -> bool:
    """Whether the server closed the connection: what it sent (if anything) is read, then the end."""
    try:
        while connection.recv(65536):
            pass
    except ConnectionResetError:
        pass
    return True


def the_page(server: DevServer) -> int:
    with connect(server) as connection:
        connection.sendall(head(server, "GET", "/_inspector"))
        status, headers, body = read_answer(connection)
    assert headers["content-type"].startswith("text/html") and b"<html" in body
    return status


def staller(server: DevServer, stack: ExitStack) -> socket.socket:
    """A client that declares a body of the largest size, sends most of it, and stalls."""
    connection = stack.enter_context(connect(server))
    connection.sendall(head(server, "POST", "/", MAX_BODY_BYTES, Content_Type="application/json"))
    connection.sendall(b" " * MOST_OF_A_BODY)
    return connection


def test_stalled_bodies_past_the_budget_are_refused_and_the_page_is_still_served() -> None:
    # GIVEN a dev server that holds at most two bodies of the largest size at once
    with (
        serving_in_process(body_budget=2 * MAX_BODY_BYTES, read_timeout=SAFETY_TIMEOUT_SECONDS) as server,
        ExitStack() as stack,
    ):
        # WHEN two clients each send most of a 1 MiB body and stall
        stalled = [staller(server, stack) for _ in range(2)]
        eventually(lambda: server.body_budget.held == 2 * MAX_BODY_BYTES, "both bodies admitted")
        # AND eight more declare such a body
        refused = []
        for _ in range(8):
            connection = stack.enter_context(connect(server))
            connection.sendall(head(server, "POST", "/", MAX_BODY_BYTES, Content_Type="application/json"))
            refused.append(read_answer(connection))
        # THEN each of the eight is refused after its headers, in JSON, with when to come back
        for status, headers, body in refused:
            assert (status, headers["retry-after"], headers["connection"]) == (503, "1", "close")
            error = json.loads(body)["error"]
            assert error["code"] == "too_large" and "send this one again in a moment" in error["message"]
        # AND the server holds no more than its budget, and still serves its page
        assert server.body_budget.held == 2 * MAX_BODY_BYTES
        assert the_page(server) == 200
        # WHEN the stalled clients give up
        for connection in stalled:
            connection.close()
        # THEN their bodies are let go, and a body is taken again
        eventually(lambda: server.body_budget.held == 0, "the stalled bodies released")
        with connect(server) as connection:
            connection.sendall(head(server, "POST", "/_inspector/api/call", 2, Content_Type="application/json") + b"{}")
            status, _, body = read_answer(connection)
        assert (status, json.loads(body)["error"]["code"]) == (401, "unauthorized")  # read, then refused: no token


STALLS = {
    "in the request line": b"GET /_insp",
    "in the headers": b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le",
    "between two requests": None,  # a kept-alive connection left idle after its first answer
}


@pytest.mark.parametrize("where", list(STALLS))
def test_a_connection_that_stalls_before_its_body_is_closed_by_the_read_timeout(where: str) -> None:
    # GIVEN a dev server with a short read timeout
    with serving_in_process(read_timeout=0.5) as server, connect(server) as connection:
        # WHEN a client stalls in the middle of a request, or after one
        sent = STALLS[where]
        if sent is None:
            connection.sendall(head(server, "GET", "/_inspector"))
            assert read_answer(connection)[0] == 200
        else:
            connection.sendall(sent)
        # THEN the server closes the connection, freeing its thread
        assert closed_by_server(connection)
        # AND it serves others as before
        assert the_page(server) == 200


def test_a_body_that_stalls_is_answered_408_and_let_go() -> None:
    # GIVEN a dev server with a short read timeout
    with serving_in_process(read_timeout=0.5) as server, connect(server) as connection:
        # WHEN a client sends most of a body and stalls
        connection.sendall(head(server, "POST", "/", MAX_BODY_BYTES, Content_Type="application/json"))
        connection.sendall(b" " * MOST_OF_A_BODY)
        # THEN it is answered 408 in JSON, the connection closes, and the body's bytes are let go
        status, headers, body = read_answer(connection)
        assert (status, headers["connection"]) == (408, "close")
        assert json.loads(body)["error"]["code"] == "timeout"
        eventually(lambda: server.body_budget.held == 0, "the stalled body released")


def test_connections_past_the_limit_are_turned_away_in_json_until_one_closes() -> None:
    # GIVEN a dev server that takes four connections at once
    with serving_in_process(max_connections=4, read_timeout=SAFETY_TIMEOUT_SECONDS) as server, ExitStack() as stack:
        # WHEN four clients connect and send nothing, and a fifth connects
        idle = [stack.enter_context(connect(server)) for _ in range(4)]
        with connect(server) as fifth:
            fifth.sendall(head(server, "GET", "/_inspector"))
            status, headers, body = read_answer(fifth)
        # THEN the fifth is answered 503 in JSON at once, not left waiting
        assert (status, headers["retry-after"]) == (503, "1")
        assert json.loads(body)["error"]["code"] == "too_large"
        # WHEN the idle ones leave
        for connection in idle:
            connection.close()

        # THEN the page is served again
        def page_served() -> bool:
            with connect(server) as connection:
                connection.sendall(head(server, "GET", "/_inspector"))
                return read_answer(connection)[0] == 200

        eventually(page_served, "a connection slot free again")


def test_make_serve_has_a_read_timeout_and_bounds() -> None:
    # GIVEN the dev server as `make serve` makes it
    with serving_in_process() as server:
        # WHEN its limits are read
        # THEN it waits a bounded time for bytes, and holds a bounded number of bodies
        assert 0 < server.read_timeout <= 60
        assert MAX_BODY_BYTES <= server.body_budget.limit <= 16 * MAX_BODY_BYTES
