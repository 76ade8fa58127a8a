"""`call URL` and `check --also URL` send the signature to the origin the user named, and no other.

Two real HTTP servers on loopback: the one named on the command line answers with a redirect,
and the other records every request that reaches it. A redirect to another scheme, host or
port is refused with a line saying so; one within the same origin is followed.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

import pytest
from median_lambda.cli.commands import main
from median_lambda.protocol import SIGNATURE_HEADER
from median_lambda.testing import TEST_KEY

from tests.threaded_server import serving_in_a_thread

if TYPE_CHECKING:
    from collections.abc import Iterator


MANIFEST = json.dumps({"version": 1, "tools": [], "diagnostics": False}).encode()
REDIRECTS = [301, 302, 303, 307, 308]


class RecordingServer(ThreadingHTTPServer):
    """Answers `redirects[path]` with that redirect, and anything else with an empty manifest; records each request."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Recorder)
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        self.redirects: dict[str, tuple[int, str]] = {}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"

    def signatures_seen(self) -> list[str]:
        return [headers[SIGNATURE_HEADER] for _, _, headers in self.seen if SIGNATURE_HEADER in headers]


class _Recorder(BaseHTTPRequestHandler):
    server: RecordingServer

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.server.seen.append((self.command, self.path, {k.lower(): v for k, v in self.headers.items()}))
        if self.path in self.server.redirects:
            status, location = self.server.redirects[self.path]
            self.send_response(status)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(MANIFEST)))
        self.end_headers()
        self.wfile.write(MANIFEST)

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


@contextmanager
def serving() -> Iterator[RecordingServer]:
    with serving_in_a_thread(RecordingServer()) as server:
        yield server


@pytest.fixture
def named() -> Iterator[RecordingServer]:
    """The server the user names on the command line."""
    with serving() as server:
        yield server


@pytest.fixture
def elsewhere() -> Iterator[RecordingServer]:
    """Another origin: the same machine, another port."""
    with serving() as server:
        yield server


@pytest.fixture
def median_key(clean_env: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    clean_env.setenv("MEDIAN_KEY", TEST_KEY)
    return clean_env


COMMANDS = {
    "call (GET)": lambda url: ["call", url],
    "call --tool (POST)": lambda url: ["call", url, "--tool", "ticketStatus", "--input", "{}"],
    "call --diagnostics (POST)": lambda url: ["call", url, "--diagnostics"],
    "check --also": lambda url: ["check", "--also", url],
}


@pytest.mark.usefixtures("median_key", "sample_tools")
@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("status", REDIRECTS)
def test_a_redirect_to_another_port_is_refused_and_the_other_server_sees_nothing(
    named: RecordingServer,
    elsewhere: RecordingServer,
    command: str,
    status: int,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN a named endpoint that redirects every request to another server
    named.redirects["/"] = (status, f"{elsewhere.url}stolen")
    # WHEN the CLI sends its signed request to the named one
    exit_code = main(COMMANDS[command](named.url))
    # THEN it stops with a line saying where it was sent and why it did not follow
    err = capsys.readouterr().err
    assert exit_code == 1
    port = elsewhere.server_address[1]
    assert f"redirected ({status}) to http://127.0.0.1:{port}" in err
    assert "another origin" in err and "not followed" in err
    # AND the other server never received a request, so never a signature
    assert elsewhere.seen == []
    # AND the named server got the one signed request the user asked for
    assert len(named.signatures_seen()) == 1


@pytest.mark.usefixtures("median_key")
@pytest.mark.parametrize(
    "location",
    [
        "http://localhost:{port}/",  # the same server by another name: another origin all the same
        "https://127.0.0.1:{port}/",  # another scheme
        "//localhost:{port}/",  # scheme-relative
        "http://127.0.0.1:{port}@evil.example/",  # credentials that hide the real host
    ],
)
def test_a_redirect_to_another_host_or_scheme_is_refused(
    named: RecordingServer, location: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a named endpoint that redirects to a URL whose origin differs from its own in a subtler way
    named.redirects["/"] = (302, location.format(port=named.server_address[1]))
    # WHEN `call` sends its signed GET
    exit_code = main(["call", named.url])
    # THEN the redirect is refused, and the named server saw the only request made
    assert exit_code == 1
    assert "another origin" in capsys.readouterr().err
    assert len(named.seen) == 1


@pytest.mark.usefixtures("median_key")
@pytest.mark.parametrize("status", REDIRECTS)
def test_a_redirect_within_the_named_origin_is_followed(
    named: RecordingServer, status: int, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a named endpoint that moved its manifest to another path on the same origin
    named.redirects["/old"] = (status, "/")
    # WHEN `call` GETs the old path
    exit_code = main(["call", f"{named.url}old"])
    # THEN the redirect is followed and the answer printed, signed on both requests
    out, _ = capsys.readouterr()
    assert exit_code == 0
    assert json.loads(out) == json.loads(MANIFEST)
    assert [path for _, path, _ in named.seen] == ["/old", "/"]
    assert len(named.signatures_seen()) == 2
