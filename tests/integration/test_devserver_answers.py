"""`make serve`'s server over raw sockets: every answer is JSON with a status, whatever arrives.

Requests http.server cannot read (a broken request line, an unknown method, HTTP/0.9, a path
or headers too long), inspector calls holding odd text, and the inspector's API without the
printed token: each gets a status line, a JSON body with a contract error code and a message,
and the server serves the next request as usual.
"""

from __future__ import annotations

import json
import socket
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda.devserver import inspector
from median_lambda.protocol import MAX_NESTING_DEPTH

from tests.devserver_process import read_answer, running_devserver, serving_in_process

if TYPE_CHECKING:
    from collections.abc import Iterator

    from median_lambda.devserver.server import DevServer

    from tests.devserver_process import DevServerProcess


SAFETY_TIMEOUT_SECONDS = 30.0  # a hung server fails the test instead of hanging the suite


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServerProcess]:
    with running_devserver(tmp_path_factory.mktemp("devserver")) as running:
        yield running


def exchange(server: DevServerProcess | DevServer, raw: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send raw bytes, read until the server closes or has sent the whole answer; its status, headers and body."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=SAFETY_TIMEOUT_SECONDS) as connection:
        connection.sendall(raw)
        return read_answer(connection)


def request(server: DevServerProcess | DevServer, method: str, path: str, body: bytes = b"", **headers: str) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{server.port}", f"Content-Length: {len(body)}"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def assert_json_error(status: int, headers: dict[str, str], body: bytes, expected_status: int) -> dict[str, Any]:
    assert status == expected_status
    assert headers["content-type"] == "application/json"
    error = json.loads(body.decode("utf-8"))["error"]
    assert error["code"] and error["message"]
    return dict(error)


UNREADABLE_REQUESTS = {
    "no request line at all": (b"GARBAGE\r\n\r\n", 400, "bad_request"),
    "an unknown method": (b"BREW / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 501, "method_not_allowed"),
    "a method that is not text": (b"\xff\xfe / HTTP/1.1\r\n\r\n", 501, "method_not_allowed"),
    "HTTP/0.9": (b"GET /\r\n\r\n", 403, "forbidden"),  # no Host: refused as every request without one is
    "an HTTP version it does not speak": (b"GET / HTTP/2.0\r\n\r\n", 505, "bad_request"),
    "a version that is no version": (b"GET / HTTP/one\r\n\r\n", 400, "bad_request"),
    "a path over 64 KiB": (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n", 414, "too_large"),
    "over a hundred headers": (b"GET / HTTP/1.1\r\n" + b"X-Many: 1\r\n" * 150 + b"\r\n", 431, "too_large"),
    "a header line over 64 KiB": (b"GET / HTTP/1.1\r\nX-Long: " + b"a" * 70_000 + b"\r\n\r\n", 431, "too_large"),
}


@pytest.mark.parametrize("case", list(UNREADABLE_REQUESTS))
def test_a_request_http_server_cannot_read_is_answered_in_json(server: DevServerProcess, case: str) -> None:
    # GIVEN a request that is not HTTP/1.1 the server can read
    raw, expected_status, code = UNREADABLE_REQUESTS[case]
    # WHEN it is sent
    status, headers, body = exchange(server, raw)
    # THEN it gets a status line and a JSON error with the contract's code, which repeats nothing it was sent
    error = assert_json_error(status, headers, body, expected_status)
    assert error["code"] == code
    assert "BREW" not in error["message"] and "HTTP/one" not in error["message"]


def _nested_list(depth: int) -> list[object]:
    """`depth` lists, each inside the next."""
    nested: list[object] = []
    for _ in range(depth - 1):
        nested = [nested]
    return nested


ODD_CALLS = {
    "a lone surrogate in the callId": (
        {"tool": "ticketStatus", "input": {"ticketNumber": "T"}, "callId": "c\ud800"},
        400,
    ),
    "a lone surrogate in the input": ({"tool": "ticketStatus", "input": {"ticketNumber": "T\udfff"}}, 400),
    "a lone surrogate in the tool's name": ({"tool": "ticket\ud800Status", "input": {}}, 404),
    "a lone surrogate as a member's name": ({"tool": "ticketStatus", "input": {"\ud800": 1}}, 400),
    "a NUL in the callId": ({"tool": "ticketStatus", "input": {"ticketNumber": "T"}, "callId": "c\u0000"}, 200),
    # The call's body then nests exactly as deep as the handler allows: it reaches the tool's model, which
    # refuses the unknown field.
    "an input at the handler's nesting limit": (
        {"tool": "ticketStatus", "input": {"ticketNumber": "T", "a": _nested_list(MAX_NESTING_DEPTH - 2)}},
        422,
    ),
}


@pytest.mark.parametrize("case", list(ODD_CALLS))
def test_an_inspector_call_holding_odd_text_gets_a_json_answer(server: DevServerProcess, case: str) -> None:
    # GIVEN a call from the page holding text JSON can carry but UTF-8 cannot, or rarely does (as \uXXXX escapes)
    document, handler_status = ODD_CALLS[case]
    body = json.dumps({"op": "call", **document}).encode("ascii")
    raw = request(
        server,
        "POST",
        "/_inspector/api/call",
        body,
        Content_Type="application/json",
        X_Inspector_Token=server.token,
    )
    # WHEN it is sent
    status, headers, answer = exchange(server, raw)
    # THEN the connection carries a JSON answer in UTF-8, with the handler's own status inside it
    assert (status, headers["content-type"]) == (200, "application/json")
    assert json.loads(answer.decode("utf-8"))["status"] == handler_status


BAD_BODIES = {
    "not UTF-8": b"\xff\xfe{}",
    "not JSON": b"{nope",
    "a JSON array": b"[]",
    "JSON nested past the parser's depth": b"[" * 100_000 + b"]" * 100_000,
    # Past the handler's limit by one level: refused before it is signed, as the handler would refuse it.
    "an input one level past the handler's nesting limit": b'{"tool":"ticketStatus","input":{"a":'
    + b"[" * (MAX_NESTING_DEPTH - 1)
    + b"]" * (MAX_NESTING_DEPTH - 1)
    + b"}}",
    # Parsed, but past what json.dumps writes back on Python 3.11
    "an input nested just within the parser's depth": b'{"tool":"ticketStatus","input":{"a":'
    + b"[" * 990
    + b"]" * 990
    + b"}}",
}


@pytest.mark.parametrize("case", list(BAD_BODIES))
def test_an_inspector_call_that_is_no_json_object_gets_a_json_400(server: DevServerProcess, case: str) -> None:
    # GIVEN a body for the inspector's call that is not a JSON object
    raw = request(
        server,
        "POST",
        "/_inspector/api/call",
        BAD_BODIES[case],
        Content_Type="application/json",
        X_Inspector_Token=server.token,
    )
    # WHEN it is sent
    status, headers, body = exchange(server, raw)
    # THEN it is a JSON 400 that says what to send
    assert assert_json_error(status, headers, body, 400)["code"] == "bad_request"


@pytest.mark.parametrize("name", ["manifest", "revision", "call"])
def test_the_api_without_the_printed_token_is_refused_over_http(server: DevServerProcess, name: str) -> None:
    # GIVEN another local process that reaches the port but never saw the printed link
    body = json.dumps({"op": "call", "tool": "ticketStatus", "input": {"ticketNumber": "T"}}).encode()
    method = "POST" if name == "call" else "GET"
    without = request(server, method, f"/_inspector/api/{name}", body if method == "POST" else b"")
    wrong = request(
        server, method, f"/_inspector/api/{name}", body if method == "POST" else b"", X_Inspector_Token="guess"
    )
    # WHEN it asks the API without the token, or with a guess
    answers = [exchange(server, without), exchange(server, wrong)]
    # THEN it gets 401, then 403, each in JSON (that nothing runs: tests/unit/test_inspector_api.py)
    assert [
        assert_json_error(*answer, expected)["code"] for answer, expected in zip(answers, (401, 403), strict=True)
    ] == [
        "unauthorized",
        "forbidden",
    ]


def test_the_server_keeps_serving_after_all_of_them(server: DevServerProcess) -> None:
    # GIVEN the server after every request above
    # WHEN the page asks for the manifest with its token
    status, headers, body = exchange(
        server, request(server, "GET", "/_inspector/api/manifest", X_Inspector_Token=server.token)
    )
    # THEN it answers as usual
    assert (status, headers["content-type"]) == (200, "application/json")
    assert json.loads(body)["manifest"]["tools"]


def test_a_failure_of_the_servers_own_code_is_a_json_500_that_quotes_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a dev server whose own code fails on one path (a bug in the inspector, here put there on purpose)
    def broken(port: int) -> object:
        raise RuntimeError("details of the failure, perhaps quoting a request")

    monkeypatch.setattr(inspector, "manifest_view", broken)
    with serving_in_process() as running:
        raw = request(running, "GET", "/_inspector/api/manifest", X_Inspector_Token=running.token)
        # WHEN that path is asked for, and then another
        status, headers, body = exchange(running, raw)
        after = exchange(running, request(running, "GET", "/_inspector"))
    # THEN it is a JSON 500 that points at the terminal, which holds the traceback, and the server serves on
    error = assert_json_error(status, headers, body, 500)
    assert (error["code"], error["message"]) == ("internal_error", "The dev server failed; its terminal says why.")
    assert "details of the failure" in capsys.readouterr().err
    assert after[0] == 200


def test_the_token_is_printed_once_and_never_logged(server: DevServerProcess) -> None:
    # GIVEN the server, whose startup text printed the inspector's link
    # WHEN the page is opened from that link and makes its API requests
    exchange(server, request(server, "GET", f"/_inspector?token={server.token}"))
    exchange(server, request(server, "GET", "/_inspector/api/manifest", X_Inspector_Token=server.token))
    # THEN the terminal logged both requests, by their path alone: the token appears only in the link
    assert "GET /_inspector -> 200" in server.output()
    assert server.output().count(server.token) == 1
