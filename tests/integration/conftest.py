"""A real Secrets Manager over HTTP, on moto's server (tests/conftest.py: moto_endpoint, the session's one
server of median_lambda/testing/pytest_plugin.py that tools' tests use too, with boto3 pointed at it for the test)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from median_lambda.protocol import DEV_KEY_ENV, KEY_SECRET_ENV, TOOLS_PACKAGE_ENV
from median_lambda.testing import TEST_KEY, FakeLambdaContext, TestAnswer, answer_of

from tests.fault_relay import FaultRelay
from tests.support.ledger import Ledger
from tests.support.ports import free_port
from tests.threaded_server import serving_in_a_thread

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from mypy_boto3_secretsmanager import SecretsManagerClient


@pytest.fixture
def ledger() -> Iterator[Ledger]:
    """A company's HTTP API that counts the writes it takes, on loopback."""
    with serving_in_a_thread(Ledger(), poll_seconds=0.05) as server:
        yield server


@pytest.fixture
def secrets(moto_endpoint: str) -> SecretsManagerClient:
    return boto3.client("secretsmanager", endpoint_url=moto_endpoint)


@pytest.fixture
def secret_name(request: pytest.FixtureRequest) -> str:
    """A secret name no other test uses: the handler caches the key per secret id for the container."""
    return f"median/{request.node.name}/{uuid.uuid4().hex[:8]}"


_SHARED_SECRET = f"median/protocol/{uuid.uuid4().hex[:8]}"


@pytest.fixture
def _shared_secret(moto_endpoint: str) -> str:
    """The session's one key secret, made again if a test's `median_aws` has emptied moto since."""
    client = boto3.client("secretsmanager", endpoint_url=moto_endpoint)
    with contextlib.suppress(client.exceptions.ResourceExistsException):
        client.create_secret(Name=_SHARED_SECRET, SecretString=TEST_KEY)
    return _SHARED_SECRET


@pytest.fixture
def key_in_secrets_manager(_shared_secret: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The handler reads TEST_KEY from moto's Secrets Manager, as a deployed function would."""
    monkeypatch.setenv(KEY_SECRET_ENV, _shared_secret)
    monkeypatch.delenv(DEV_KEY_ENV, raising=False)
    return TEST_KEY


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on."""
    return free_port()


@pytest.fixture
def unanswered_port() -> Iterator[int]:
    """A loopback port that never completes a connection: its listener's backlog is full and
    nothing accepts, so the kernel drops each new SYN and a client meets its connect timeout."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=0)
    fillers = []
    for _ in range(4):
        filler = socket.socket()
        filler.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            filler.connect(listener.getsockname())
        fillers.append(filler)
    try:
        yield int(listener.getsockname()[1])
    finally:
        for sock in (*fillers, listener):
            sock.close()


@pytest.fixture
def invoke() -> Callable[..., TestAnswer]:
    """Calls `lambda_handler` with an event and a Lambda context, and reads its answer."""

    def call(event: dict[str, Any], context: FakeLambdaContext | None = None) -> TestAnswer:
        from median_lambda.app import lambda_handler

        return answer_of(lambda_handler(event, context or FakeLambdaContext()))  # type: ignore[arg-type]

    return call


REPO_ROOT = Path(__file__).resolve().parents[2]


class ToolsPackage:
    """A `tools` package of its own in a temporary directory, run in a fresh interpreter.

    A user's project, as they have it: `tools` beside `median_lambda`, and no $MEDIAN_TOOLS_PACKAGE. A
    broken tool set is only ever imported by the subprocess, so nothing leaks into other tests.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "tools").mkdir()
        (root / "tools" / "__init__.py").write_text("", encoding="utf-8")

    def module(self, name: str, source: str) -> None:
        (self.root / "tools" / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")

    def run(self, *arguments: str) -> subprocess.CompletedProcess[str]:
        # The working directory comes first on sys.path for -m and -c: it must be the one holding
        # this `tools`, and the repository root only supplies `median_lambda`.
        env = {
            key: value
            for key, value in os.environ.items()
            if key not in (KEY_SECRET_ENV, TOOLS_PACKAGE_ENV, "PYTHONPATH")
        }
        env.update({"PYTHONPATH": os.pathsep.join([str(self.root), str(REPO_ROOT)]), DEV_KEY_ENV: TEST_KEY})
        return subprocess.run(  # noqa: S603 - our own interpreter, our own arguments
            [sys.executable, *arguments],
            cwd=self.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def send(self, client_call: str) -> TestAnswer:
        """The answer of `MedianTestClient().<client_call>` in the subprocess, e.g. "manifest()"."""
        script = (
            "import json\n"
            "from median_lambda.testing import MedianTestClient\n"
            f"answer = MedianTestClient().{client_call}\n"
            "print('ANSWER ' + json.dumps({'status': answer.status, 'headers': answer.headers, 'body': answer.body}))\n"
        )
        finished = self.run("-c", script)
        assert finished.returncode == 0, finished.stderr
        [line] = [line for line in finished.stdout.splitlines() if line.startswith("ANSWER ")]
        answer = json.loads(line.removeprefix("ANSWER "))
        return TestAnswer(answer["status"], answer["headers"], answer["body"])


@pytest.fixture
def tools_package(tmp_path: Path) -> ToolsPackage:
    return ToolsPackage(tmp_path)


@pytest.fixture
def fault_relay(moto_endpoint: str) -> Iterator[FaultRelay]:
    """A relay to moto's server that fails on command (tests/fault_relay.py); closed after the test.

    Point one service at it, e.g. `monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", relay.endpoint)`,
    and the handler's own boto3 client meets the fault on the wire.
    """
    host, port = moto_endpoint.removeprefix("http://").rsplit(":", 1)
    with FaultRelay(host, int(port)) as relay:
        yield relay
