"""The dev server stays bounded, and open to its developer, under clients that stall or trickle.

Real sockets on loopback against a real `DevServer` in this process, made with small limits
(two bodies' worth of budget, a few connections, a short request deadline) so a handful of
clients reach them, or with `make serve`'s own where the issue is their size (64 connections).
Each test asserts what a client is answered, never how long it took; the waits are bounded only
so a hung server fails the test instead of hanging the suite.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from contextlib import ExitStack
from typing import TYPE_CHECKING

import pytest
from median_lambda.protocol import MAX_BODY_BYTES, SIGNATURE_HEADER
from median_lambda.request.signature import sign
from median_lambda.testing import TEST_KEY, call_body, dev_key

from tests.devserver_process import read_answer, serving_in_process

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from median_lambda.devserver.server import DevServer

    from tests.scratch_tools import ScratchTools

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
        serving_in_process(body_budget=2 * MAX_BODY_BYTES, request_deadline=SAFETY_TIMEOUT_SECONDS) as server,
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
def test_a_connection_that_stalls_before_its_body_is_closed_at_its_deadline(where: str) -> None:
    # GIVEN a dev server with a short request deadline
    with serving_in_process(request_deadline=0.5) as server, connect(server) as connection:
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
    # GIVEN a dev server with a short request deadline
    with serving_in_process(request_deadline=0.5) as server, connect(server) as connection:
        # WHEN a client sends most of a body and stalls
        connection.sendall(head(server, "POST", "/", MAX_BODY_BYTES, Content_Type="application/json"))
        connection.sendall(b" " * MOST_OF_A_BODY)
        # THEN it is answered 408 in JSON, the connection closes, and the body's bytes are let go
        status, headers, body = read_answer(connection)
        assert (status, headers["connection"]) == (408, "close")
        assert json.loads(body)["error"]["code"] == "timeout"
        eventually(lambda: server.body_budget.held == 0, "the stalled body released")


def trickle(connection: socket.socket, stop: threading.Event, every: float) -> bool:
    """Send one byte every `every` seconds until the server closes the connection (True) or `stop` is set."""
    deadline = time.monotonic() + SAFETY_TIMEOUT_SECONDS
    while not stop.is_set() and time.monotonic() < deadline:
        try:
            connection.sendall(b"x")
        except OSError:
            return True  # the server closed it: the byte found no one
        connection.settimeout(every)
        try:
            if connection.recv(65536) == b"":
                return True
            return True  # an answer came: the server ended the request
        except TimeoutError:
            continue
        except OSError:
            return True
    return False


@pytest.mark.parametrize("where", ["in the headers", "in the body"])
def test_a_request_that_trickles_in_is_cut_at_its_deadline(where: str) -> None:
    # GIVEN a dev server whose requests must arrive whole within one second
    with serving_in_process(request_deadline=1.0) as server, connect(server) as connection:
        # WHEN a client sends its request a byte at a time, never silent for long
        if where == "in the headers":
            connection.sendall(b"GET /_inspector HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        else:
            connection.sendall(head(server, "POST", "/", 1000, Content_Type="application/json"))
        # THEN the server ends it at the deadline, however steadily the bytes come
        assert trickle(connection, threading.Event(), every=0.2), "a trickling client was served past its deadline"
        # AND it serves others as before
        assert the_page(server) == 200


def test_a_body_that_trickles_is_answered_408() -> None:
    # GIVEN a dev server whose requests must arrive whole within one second
    with serving_in_process(request_deadline=1.0) as server, connect(server) as connection:
        # WHEN a client declares a body and sends it a byte every tenth of a second, until it is answered
        connection.sendall(head(server, "POST", "/", 1000, Content_Type="application/json"))
        deadline = time.monotonic() + SAFETY_TIMEOUT_SECONDS
        while not select.select([connection], [], [], 0.1)[0]:
            assert time.monotonic() < deadline, "a trickling body was read past its deadline"
            connection.sendall(b" ")
        # THEN it is answered 408 in JSON, and the body's bytes are let go
        status, headers, body = read_answer(connection)
        assert (status, headers["connection"]) == (408, "close")
        assert json.loads(body)["error"]["code"] == "timeout"
        eventually(lambda: server.body_budget.held == 0, "the trickled body released")


@pytest.fixture
def tricklers() -> Iterator[Callable[[DevServer, int], list[socket.socket]]]:
    """Clients that each start a request and then send one byte a second, as many as asked."""
    stop = threading.Event()
    created: list[socket.socket] = []
    trickling: list[socket.socket] = []

    def keep_trickling() -> None:
        while not stop.wait(1.0):
            for client in list(trickling):
                try:
                    client.send(b"x", socket.MSG_DONTWAIT)
                except OSError:
                    trickling.remove(client)  # let go by the server

    thread = threading.Thread(target=keep_trickling, daemon=True)

    def start(server: DevServer, count: int) -> list[socket.socket]:
        for _ in range(count):
            client = connect(server)
            created.append(client)
            client.sendall(f"GET /_inspector HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nX-Slow: ".encode())
        trickling.extend(created)
        thread.start()
        return list(created)

    try:
        yield start
    finally:
        stop.set()
        if thread.is_alive():
            thread.join(timeout=SAFETY_TIMEOUT_SECONDS)
        for client in created:
            client.close()


@pytest.fixture
def serving_with_a_dev_key() -> Iterator[None]:
    """The dev key `make serve` verifies with, which the tests sign with too."""
    with dev_key(TEST_KEY):
        yield


def signed_get(server: DevServer) -> bytes:
    return head(server, "GET", "/", **{SIGNATURE_HEADER.replace("-", "_"): sign(TEST_KEY, b"")})


def test_64_clients_trickling_bytes_do_not_lock_the_developer_out(
    tricklers: Callable[[DevServer, int], list[socket.socket]], serving_with_a_dev_key: None
) -> None:
    # GIVEN the dev server as make serve makes it: 64 connections at most, a whole request in 10 s
    with serving_in_process(request_deadline=SAFETY_TIMEOUT_SECONDS) as server:
        # WHEN 64 clients each start a request and send a byte a second, taking every connection it holds
        started = tricklers(server, 64)
        eventually(lambda: server.connections.waiting_count == 64, "all 64 connections held, each waiting")
        # THEN the developer still gets the inspector's page, its API and the endpoint, at once
        assert the_page(server) == 200
        with connect(server) as connection:
            connection.sendall(head(server, "GET", "/_inspector/api/manifest", x_inspector_token=server.token))
            status, _, body = read_answer(connection)
        assert status == 200 and "manifest" in json.loads(body)
        with connect(server) as connection:
            connection.sendall(signed_get(server))
            status, _, body = read_answer(connection)
        assert status == 200 and json.loads(body)["version"] == 1
        # AND the clients let go to make room were closed, and the server never held more than its limit
        let_go, _, _ = select.select(started, [], [], SAFETY_TIMEOUT_SECONDS)
        assert let_go and all(closed_by_server(connection) for connection in let_go)
        assert server.connections.open <= 64


def test_the_connection_let_go_is_the_one_that_waited_longest_and_it_is_told_why() -> None:
    # GIVEN a dev server that takes two connections, both held by clients that began a request and stopped
    with serving_in_process(max_connections=2, request_deadline=SAFETY_TIMEOUT_SECONDS) as server, ExitStack() as stack:
        waiting = []
        for count in (1, 2):
            connection = stack.enter_context(connect(server))
            connection.sendall(b"GET /_inspector HTTP/1.1\r\n")
            waiting.append(connection)
            eventually(lambda count=count: server.connections.waiting_count == count, f"{count} waiting")
        # WHEN the developer opens the page
        # THEN it is served, and the connection that waited longest is answered 503 saying why, and closed
        assert the_page(server) == 200
        status, headers, body = read_answer(waiting[0])
        assert (status, headers["retry-after"], headers["connection"]) == (503, "1", "close")
        assert json.loads(body)["error"]["message"] == (
            "The dev server let this connection go to make room for another: it had waited longest for its "
            "request to arrive. Send it again."
        )
        # AND the other still waits, and is served once its request arrives
        waiting[1].sendall(f"Host: 127.0.0.1:{server.port}\r\n\r\n".encode())
        assert read_answer(waiting[1])[0] == 200


def call_request(server: DevServer, tool: str) -> bytes:
    body = call_body(tool, {"note": "hold"})
    return (
        head(
            server,
            "POST",
            "/",
            len(body),
            Content_Type="application/json",
            **{SIGNATURE_HEADER.replace("-", "_"): sign(TEST_KEY, body)},
        )
        + body
    )


def test_connections_past_the_limit_are_turned_away_only_while_every_one_is_being_answered(
    scratch: ScratchTools, serving_with_a_dev_key: None
) -> None:
    # GIVEN a dev server that takes four connections at once
    with serving_in_process(max_connections=4, request_deadline=SAFETY_TIMEOUT_SECONDS) as server, ExitStack() as stack:
        # WHEN four clients each call a tool that runs until the test releases it
        busy = [stack.enter_context(connect(server)) for _ in range(4)]
        for connection in busy:
            connection.sendall(call_request(server, "waitForRelease"))
        eventually(lambda: server.connections.open == 4 and server.connections.waiting_count == 0, "all 4 answering")
        # AND a fifth connects
        with connect(server) as fifth:
            fifth.sendall(head(server, "GET", "/_inspector"))
            status, headers, body = read_answer(fifth)
        # THEN the fifth is answered 503 in JSON at once: no request being answered is let go
        assert (status, headers["retry-after"]) == (503, "1")
        assert json.loads(body)["error"]["code"] == "too_large"
        # WHEN the tool is released
        scratch.release.set()
        # THEN each of the four gets its answer, and the page is served again
        for connection in busy:
            assert read_answer(connection)[0] == 200

        def page_served() -> bool:
            with connect(server) as connection:
                connection.sendall(head(server, "GET", "/_inspector"))
                return read_answer(connection)[0] == 200

        eventually(page_served, "a connection slot free again")


def test_make_serve_has_a_request_deadline_and_bounds() -> None:
    # GIVEN the dev server as `make serve` makes it
    with serving_in_process() as server:
        # WHEN its limits are read
        # THEN a request has a bounded time to arrive whole, and the server holds a bounded number of bodies
        assert 0 < server.request_deadline <= 60
        assert MAX_BODY_BYTES <= server.body_budget.limit <= 16 * MAX_BODY_BYTES
