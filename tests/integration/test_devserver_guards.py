"""The dev server's guards over raw sockets: every path refuses foreign pages and bodies it will not hold.

The server is `python -m median_lambda.devserver` as `make serve` runs it, with the framework tests' empty tools
package: nothing here needs a tool, and every refusal comes before one could run.
"""

from __future__ import annotations

import http.client
import json
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda.protocol import MAX_BODY_BYTES, SIGNATURE_HEADER
from median_lambda.request.signature import sign
from median_lambda.testing import TEST_KEY

from tests.devserver_process import running_devserver
from tests.scratch_tools import EMPTY_TOOLS

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.devserver_process import DevServerProcess

PATHS = ("/", "/_inspector", "/_inspector/api/manifest", "/_inspector/api/call")
# What a client may have sent of a refused body when the answer comes: a few bytes, not the body.
SENT_OF_THE_BODY = 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServerProcess]:
    logs = tmp_path_factory.mktemp("devserver-guards")
    with running_devserver(logs, tools_package=EMPTY_TOOLS, env={"MEDIAN_DEV_KEY": TEST_KEY}) as running:
        yield running


@dataclass(frozen=True)
class Exchange:
    status: int
    headers: http.client.HTTPMessage
    body: bytes
    closed: bool  # the server closed the connection once it had answered

    def error_code(self) -> Any:
        return json.loads(self.body)["error"]["code"]


def exchange(port: int, head: list[str], body: bytes = b"") -> Exchange:
    """Send a request line and headers exactly as given, then `body`, and read the answer."""
    request = "".join(f"{line}\r\n" for line in head).encode("latin-1") + b"\r\n" + body
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(request)
        response = http.client.HTTPResponse(connection)
        response.begin()
        answer = response.read()
        try:
            closed = connection.recv(1) == b""
        except ConnectionResetError:  # closed with the unread body still in its buffer
            closed = True
        except TimeoutError:
            closed = False
        return Exchange(response.status, response.headers, answer, closed)


def request_head(
    method: str, path: str, *, host: str | None, extra: list[str] | None = None, signed: bool = True
) -> list[str]:
    head = [f"{method} {path} HTTP/1.1"]
    if host is not None:
        head.append(f"Host: {host}")
    if signed:
        head.append(f"{SIGNATURE_HEADER}: {sign(TEST_KEY, b'')}")
    return head + (extra or [])


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(
    "host",
    [
        "attacker.example",
        "attacker.example:{port}",
        "127.0.0.1.attacker.example:{port}",
        "127.0.0.1:{other_port}",
        "127.0.0.1",
        "",
        None,
    ],
)
def test_a_foreign_host_is_refused_on_every_path(server: DevServerProcess, path: str, host: str | None) -> None:
    # GIVEN a page on another site whose name was rebound to 127.0.0.1, reaching the server with that Host
    named = None if host is None else host.format(port=server.port, other_port=server.port + 1)
    # WHEN its request arrives, even signed with the server's own key
    answer = exchange(server.port, request_head("GET", path, host=named))
    # THEN it is refused as JSON with the dev server's code, before any handler or inspector code runs
    assert answer.status == 403
    assert answer.error_code() == "forbidden"
    assert f"http://127.0.0.1:{server.port}/" in json.loads(answer.body)["error"]["message"]


def test_two_host_headers_are_refused(server: DevServerProcess) -> None:
    # GIVEN a request naming loopback and another name
    head = request_head("GET", "/", host=f"127.0.0.1:{server.port}", extra=["Host: attacker.example"])
    # WHEN it arrives
    answer = exchange(server.port, head)
    # THEN it is refused: which one a proxy or browser meant cannot be known
    assert answer.status == 403 and answer.error_code() == "forbidden"


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(
    "origin",
    [
        "https://attacker.example",
        "null",
        "http://127.0.0.1:{other_port}",
        "https://127.0.0.1:{port}",
        "http://attacker.example:{port}",
    ],
)
def test_a_foreign_origin_is_refused_on_every_path(server: DevServerProcess, path: str, origin: str) -> None:
    # GIVEN a page on another site (or a sandboxed one, Origin: null) calling the server through the browser
    sent = origin.format(port=server.port, other_port=server.port + 1)
    head = request_head("POST", path, host=f"127.0.0.1:{server.port}", extra=[f"Origin: {sent}", "Content-Length: 2"])
    # WHEN its request arrives with loopback's Host
    answer = exchange(server.port, head, b"{}")
    # THEN it is refused, and the connection closes
    assert answer.status == 403
    assert answer.error_code() == "forbidden"
    assert answer.closed


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}", "[::1]:{port}"])
@pytest.mark.parametrize("origin", [None, "http://127.0.0.1:{port}", "http://localhost:{port}"])
def test_loopback_names_and_the_servers_own_origin_are_served(
    server: DevServerProcess, host: str, origin: str | None
) -> None:
    # GIVEN curl, Median's own client or the inspector's page, naming the server by a loopback name
    extra = [] if origin is None else [f"Origin: {origin.format(port=server.port)}"]
    # WHEN a signed GET arrives
    answer = exchange(server.port, request_head("GET", "/", host=host.format(port=server.port), extra=extra))
    # THEN the handler answers it: the manifest (of no tools here)
    assert answer.status == 200
    assert json.loads(answer.body)["tools"] == []


@pytest.mark.parametrize("path", ["/", "/_inspector/api/call"])
@pytest.mark.parametrize(
    "claimed", [str(300 * 1024 * 1024), str(MAX_BODY_BYTES + 1), "9" * 5000], ids=["300MB", "cap+1", "5000digits"]
)
def test_a_body_over_the_cap_is_refused_from_its_length_before_it_is_read(
    server: DevServerProcess, path: str, claimed: str
) -> None:
    # GIVEN a client claiming a body over the 1 MiB cap (300 MB, one byte over, 5,000 digits long)
    head = request_head("POST", path, host=f"127.0.0.1:{server.port}", extra=[f"Content-Length: {claimed}"])
    # WHEN it has sent its headers and only the body's first bytes
    answer = exchange(server.port, head, b"x" * SENT_OF_THE_BODY)
    # THEN the answer is already there: 413 too_large, and the connection closes with the body unread
    assert answer.status == 413
    assert answer.error_code() == "too_large"
    assert answer.headers["Connection"] == "close"
    assert answer.closed


def test_a_body_of_exactly_the_cap_is_read_and_reaches_the_handler(server: DevServerProcess) -> None:
    # GIVEN a body of exactly 1 MiB, signed
    body = b" " * MAX_BODY_BYTES
    head = [
        "POST / HTTP/1.1",
        f"Host: 127.0.0.1:{server.port}",
        f"{SIGNATURE_HEADER}: {sign(TEST_KEY, body)}",
        f"Content-Length: {len(body)}",
    ]
    # WHEN it is sent whole
    answer = exchange(server.port, head, body)
    # THEN the handler read all of it and answered it: blanks are not a JSON request
    assert answer.status == 400
    assert answer.error_code() == "bad_request"


@pytest.mark.parametrize("path", ["/", "/_inspector/api/call"])
@pytest.mark.parametrize(
    "lengths",
    [["-1"], ["abc"], ["+5"], ["5_0"], ["0x10"], ["1e3"], ["1 2"], [""], ["\u00b2"], ["5", "5"], ["2", "6"]],
    ids=repr,
)
def test_a_bad_content_length_gets_400(server: DevServerProcess, path: str, lengths: list[str]) -> None:
    # GIVEN a Content-Length that is not one whole number of bytes (negative, not digits, sent twice)
    extra = [f"Content-Length: {length}" for length in lengths]
    # WHEN the request arrives with a few bytes of body
    answer = exchange(server.port, request_head("POST", path, host=f"127.0.0.1:{server.port}", extra=extra), b"{}")
    # THEN it is refused as a bad request, and nothing is read
    assert answer.status == 400
    assert answer.error_code() == "bad_request"
    assert "Content-Length" in json.loads(answer.body)["error"]["message"]
    assert answer.closed


@pytest.mark.parametrize("path", ["/", "/_inspector/api/call"])
@pytest.mark.parametrize(
    "extra",
    [
        ["Transfer-Encoding: chunked"],
        ["Transfer-Encoding: gzip, chunked"],
        ["Transfer-Encoding: chunked", "Content-Length: 2"],
    ],
    ids=repr,
)
def test_a_chunked_body_is_refused_unread(server: DevServerProcess, path: str, extra: list[str]) -> None:
    # GIVEN a body sent in chunks, with no length known in advance
    head = request_head("POST", path, host=f"127.0.0.1:{server.port}", extra=extra)
    # WHEN it arrives, its first chunk of a body far over the cap following
    answer = exchange(server.port, head, b"%x\r\n" % (300 * 1024 * 1024) + b"x" * SENT_OF_THE_BODY)
    # THEN it is answered at once with 411, asking for a Content-Length, and nothing is read
    assert answer.status == 411
    assert answer.error_code() == "bad_request"
    assert "Content-Length" in json.loads(answer.body)["error"]["message"]
    assert answer.closed


def test_bytes_after_a_request_without_a_length_are_no_body(server: DevServerProcess) -> None:
    # GIVEN a POST with neither Content-Length nor Transfer-Encoding, signed as an empty body
    head = request_head("POST", "/", host=f"127.0.0.1:{server.port}")
    # WHEN bytes follow its headers anyway
    answer = exchange(server.port, head, b"x" * SENT_OF_THE_BODY)
    # THEN it is answered as the empty body HTTP/1.1 says it has, without waiting for more
    assert answer.status == 400
    assert answer.error_code() == "bad_request"
