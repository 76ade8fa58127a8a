"""`make audit`: uv's audit of the whole lock, against an OSV-compatible advisory server of the test's own.

A finding names the package, its version, the advisory and the fixed version; an advisory
source that cannot be reached gives one plain line and audits nothing.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda.project.lock import ROOT, locked_artifact_versions
from median_lambda.project.sam_config import runtime_python

from tests.threaded_server import serving_in_a_thread

if TYPE_CHECKING:
    from collections.abc import Iterator

ADVISORY = "GHSA-7xq2-test-vuln"
FIXED = "99.0.0"


class AdvisoryServer(ThreadingHTTPServer):
    """OSV's query API, as uv audit calls it: a batch query, then each advisory by its ID."""

    def __init__(self, vulnerable: str | None, status: int = 200) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.vulnerable = vulnerable
        self.status = status

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: AdvisoryServer

    def do_POST(self) -> None:
        queries = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["queries"]
        results = [
            {"vulns": [{"id": ADVISORY, "modified": "2026-11-02T00:00:00Z"}]}
            if query["package"]["name"] == self.server.vulnerable
            else {}
            for query in queries
        ]
        self._answer({"results": results})

    def do_GET(self) -> None:
        self._answer(
            {
                "id": ADVISORY,
                "summary": "Crafted input makes validation loop forever",
                "modified": "2026-11-02T00:00:00Z",
                "affected": [
                    {
                        "package": {"name": self.server.vulnerable, "ecosystem": "PyPI"},
                        "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": FIXED}]}],
                    }
                ],
            }
        )

    def _answer(self, document: dict[str, Any]) -> None:
        body = json.dumps(document).encode()
        self.send_response(self.server.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


def serve(vulnerable: str | None, status: int = 200) -> Iterator[AdvisoryServer]:
    with serving_in_a_thread(AdvisoryServer(vulnerable, status)) as server:
        yield server


def audit(service_url: str) -> subprocess.CompletedProcess[str]:
    """`median audit` (make audit) against the given advisory source, in this project."""
    # No retries: a source that does not answer is reported at once rather than after uv's backoff.
    environment = {**os.environ, "UV_HTTP_RETRIES": "0"}
    return subprocess.run(  # noqa: S603 - this venv's median, running the command under test
        [str(Path(sys.executable).with_name("median")), "audit", "--service-url", service_url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env=environment,
        timeout=120,
    )


@pytest.fixture
def pydantic_advisory() -> Iterator[AdvisoryServer]:
    yield from serve("pydantic")


@pytest.fixture
def no_advisories() -> Iterator[AdvisoryServer]:
    yield from serve(None)


@pytest.fixture
def failing_source() -> Iterator[AdvisoryServer]:
    yield from serve(None, status=503)


def test_a_locked_version_with_an_advisory_fails_naming_package_version_advisory_and_fix(
    pydantic_advisory: AdvisoryServer,
) -> None:
    # GIVEN an advisory against every pydantic release before 99.0.0
    locked = locked_artifact_versions("aarch64", runtime_python())["pydantic"]
    # WHEN the lock is audited
    result = audit(pydantic_advisory.url)
    # THEN it fails, naming the package at the version the artifact ships, the advisory and the fix
    assert result.returncode == 1
    assert f"pydantic {locked} has 1 known vulnerability" in result.stdout
    assert ADVISORY in result.stdout
    assert f"Fixed in: {FIXED}" in result.stdout
    # AND it says how to move to a fixed version
    assert "make lock UPGRADE=<package>" in result.stderr


@pytest.fixture
def zizmor_advisory() -> Iterator[AdvisoryServer]:
    yield from serve("zizmor")


def test_a_developer_tools_locked_version_with_an_advisory_fails_naming_its_lock(
    zizmor_advisory: AdvisoryServer,
) -> None:
    # GIVEN an advisory against zizmor, which only the workflows' linters' venv holds (not uv.lock)
    # WHEN everything locked is audited
    result = audit(zizmor_advisory.url)
    # THEN it fails, naming the tool's lock, the package, the advisory and the fix, and how to move on
    assert result.returncode == 1
    assert "tooling/workflow-lint.py.lock:\n" in result.stdout
    assert "uv.lock:\n" not in result.stdout
    assert "zizmor 1." in result.stdout and ADVISORY in result.stdout and f"Fixed in: {FIXED}" in result.stdout
    assert "audit: tooling/workflow-lint.py.lock holds a version with a known vulnerability" in result.stderr


def test_a_lock_with_no_known_advisory_passes(no_advisories: AdvisoryServer) -> None:
    # GIVEN an advisory source that knows of nothing in the lock
    # WHEN the lock is audited
    result = audit(no_advisories.url)
    # THEN it passes
    assert result.returncode == 0, result.stderr


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.mark.parametrize("source", ["nothing listening", "answering 503"])
def test_an_unreachable_advisory_source_is_said_in_one_line_and_audits_nothing(
    source: str, failing_source: AdvisoryServer
) -> None:
    # GIVEN an advisory source that cannot be reached, or answers only with errors
    url = closed_port_url() if source == "nothing listening" else failing_source.url
    # WHEN the lock is audited
    result = audit(url)
    # THEN one plain line says that nothing was audited, and the exit status is neither pass nor finding
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "no advisory data reachable" in lines[0]
    assert "nothing was audited" in lines[0]
