"""Call your tools the way Median does, from your own tests.

    from handler.testing import MedianTestClient

    def test_order_status():
        client = MedianTestClient()
        answer = client.call("orderStatus", {"orderNumber": "ORD-1042"})
        assert answer.status == 200 and answer.body["output"]["status"] == "shipped"

Each request is a real API Gateway HTTP API (payload 2.0) event, signed with a test key,
and goes through `lambda_handler` exactly as a deployed request would.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from handler.protocol import (
    DEV_KEY_ENV,
    KEY_SECRET_ENV,
    PREBUILT_MANIFEST_FILE,
    PROTOCOL_VERSION,
    SIGNATURE_HEADER,
)
from handler.registry import tools_package
from handler.signature import sign

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

TEST_KEY = "mk_test_0123456789abcdef"
PAYLOAD_FORMATS = ("2.0", "1.0", "url")


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now: for a test or bench server of its own."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class FakeLambdaContext:
    """The attributes of Lambda's context object that the handler and Powertools read."""

    function_name: str = "median-tools"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:median-tools"
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    timeout_seconds: float = 30.0
    _started: float = field(default_factory=time.monotonic)

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.timeout_seconds - (time.monotonic() - self._started)) * 1000))


def http_event(
    method: str,
    body: bytes = b"",
    *,
    headers: dict[str, str] | None = None,
    payload_format: str = "2.0",
    base64_body: bool = False,
    path: str = "/",
) -> dict[str, Any]:
    """An event as API Gateway ("2.0" HTTP API, "1.0" REST API) or a Function URL ("url") sends it."""
    headers = {"content-type": "application/json", **(headers or {})}
    text: str | None = None
    if body or method != "GET":
        text = base64.b64encode(body).decode("ascii") if base64_body else body.decode("utf-8")
    request_id = uuid.uuid4().hex
    now_ms = int(time.time() * 1000)
    if payload_format == "1.0":
        return {
            "resource": path,
            "path": path,
            "httpMethod": method,
            "headers": headers,
            "multiValueHeaders": {name: [value] for name, value in headers.items()},
            "queryStringParameters": None,
            "multiValueQueryStringParameters": None,
            "pathParameters": None,
            "stageVariables": None,
            "requestContext": {
                "resourcePath": path,
                "httpMethod": method,
                "path": f"/Prod{path}",
                "stage": "Prod",
                "requestId": request_id,
                "requestTimeEpoch": now_ms,
                "identity": {"sourceIp": "203.0.113.7", "userAgent": "Median"},
                "accountId": "123456789012",
                "apiId": "abc123defg",
                "protocol": "HTTP/1.1",
            },
            "body": text,
            "isBase64Encoded": base64_body,
        }
    domain = (
        "abc123defg.lambda-url.us-east-1.on.aws"
        if payload_format == "url"
        else "abc123defg.execute-api.us-east-1.amazonaws.com"
    )
    return {
        "version": "2.0",
        "routeKey": "$default" if payload_format == "url" else f"{method} {path}",
        "rawPath": path,
        "rawQueryString": "",
        "headers": {"host": domain, **headers},
        "requestContext": {
            "accountId": "123456789012" if payload_format != "url" else "anonymous",
            "apiId": "abc123defg",
            "domainName": domain,
            "domainPrefix": "abc123defg",
            "http": {
                "method": method,
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "203.0.113.7",
                "userAgent": "Median",
            },
            "requestId": request_id,
            "routeKey": "$default" if payload_format == "url" else f"{method} {path}",
            "stage": "$default",
            "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime()),
            "timeEpoch": now_ms,
        },
        **({"body": text} if text is not None else {}),
        "isBase64Encoded": base64_body,
    }


def signed_event(
    method: str, body: bytes = b"", *, key: str = TEST_KEY, timestamp: int | None = None, **options: Any
) -> dict[str, Any]:
    """An event carrying a fresh median-signature for its body under `key`."""
    headers = {SIGNATURE_HEADER: sign(key, body, timestamp=timestamp), **options.pop("headers", {})}
    return http_event(method, body, headers=headers, **options)


def call_body(tool: str, tool_input: dict[str, Any] | None = None, **members: Any) -> bytes:
    document = {"version": PROTOCOL_VERSION, "op": "call", "tool": tool, "input": tool_input or {}, **members}
    return json.dumps(document).encode("utf-8")


def diagnostics_body() -> bytes:
    return json.dumps({"version": PROTOCOL_VERSION, "op": "diagnostics"}).encode("utf-8")


@dataclass(frozen=True)
class TestAnswer:
    status: int
    headers: dict[str, str]
    body: Any


def answer_of(response: dict[str, Any]) -> TestAnswer:
    return TestAnswer(response["statusCode"], response.get("headers", {}), json.loads(response["body"]))


@contextmanager
def dev_key(key: str) -> Iterator[None]:
    """Run with `key` as the local dev key and no secret named, as `make serve` does."""
    saved = {name: os.environ.get(name) for name in (DEV_KEY_ENV, KEY_SECRET_ENV)}
    os.environ[DEV_KEY_ENV] = key
    os.environ.pop(KEY_SECRET_ENV, None)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class MedianTestClient:
    """Sends signed requests to `lambda_handler` as Median would, under a dev key."""

    __test__ = False  # not a pytest test class, despite its name

    def __init__(self, key: str = TEST_KEY) -> None:
        self.key = key

    def send(self, event: dict[str, Any], context: FakeLambdaContext | None = None) -> TestAnswer:
        from handler.app import lambda_handler

        with dev_key(self.key):
            return answer_of(lambda_handler(event, context or FakeLambdaContext()))  # type: ignore[arg-type]

    def manifest(self) -> TestAnswer:
        return self.send(signed_event("GET", key=self.key))

    def call(self, tool: str, tool_input: dict[str, Any] | None = None, **members: Any) -> TestAnswer:
        return self.send(signed_event("POST", call_body(tool, tool_input, **members), key=self.key))

    def diagnostics(self) -> TestAnswer:
        return self.send(signed_event("POST", diagnostics_body(), key=self.key))


# --- A new container: the handler in a fresh Python process -----------------------------------

# What the Lambda runtime does in a new container: import the handler, answer one event. It
# reports the modules that took, so a test can hold a path to what it must not import.
# MEDIAN_COLD_PREIMPORT names modules to import first (the benchmark weighs ideas with it).
_COLD_START_SCRIPT = """
import json, os, sys, time

class Context:
    function_name = "median-tools"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:median-tools"
    aws_request_id = "cold-start-request"
    _deadline = time.monotonic() + 30
    def get_remaining_time_in_millis(self):
        return int((self._deadline - time.monotonic()) * 1000)

event = json.loads(sys.stdin.read())
for name in filter(None, os.environ.get("MEDIAN_COLD_PREIMPORT", "").split(",")):
    __import__(name)
from handler.app import lambda_handler
response = lambda_handler(event, Context())
# On a line of its own and last: the handler's log lines and metrics share stdout, as on Lambda.
sys.stdout.write("\\n" + json.dumps({"response": response, "modules": sorted(sys.modules)}) + "\\n")
"""
_PROJECT_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class ColdStart:
    response: dict[str, Any]  # as lambda_handler returned it
    modules: frozenset[str]  # every module the process had imported by then
    seconds: float  # the whole process, Python's start included

    @property
    def answer(self) -> TestAnswer:
        return answer_of(self.response)


def lay_out_artifact(directory: Path, *, prebuilt_manifest: bool = True) -> Path:
    """handler/ and the tools package copied to `directory` as `sam build` lays them out, with the
    manifest the build writes (`python -m handler manifest`) when `prebuilt_manifest`.

    The tools package is the one served here: `tools`, or the one $MEDIAN_TOOLS_PACKAGE names,
    copied to the same import path (give `cold_start` the same variable to serve it).
    """
    ignore = shutil.ignore_patterns("__pycache__", PREBUILT_MANIFEST_FILE)
    package = tools_package()
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(f"{package} is not a package that can be imported from here")
    shutil.copytree(_PROJECT_ROOT / "handler", directory / "handler", ignore=ignore)
    shutil.copytree(spec.submodule_search_locations[0], directory.joinpath(*package.split(".")), ignore=ignore)
    if prebuilt_manifest:
        printed = subprocess.run(
            [sys.executable, "-m", "handler", "manifest"], cwd=_PROJECT_ROOT, check=True, capture_output=True
        )
        (directory / "handler" / PREBUILT_MANIFEST_FILE).write_bytes(printed.stdout)
    return directory


def cold_start(
    event: dict[str, Any],
    artifact: Path,
    env: Mapping[str, str],
    *,
    python: str = sys.executable,
    preimport: Sequence[str] = (),
) -> ColdStart:
    """Answer `event` in a new Python process that imports the handler from `artifact`, as a new
    Lambda container would, with exactly `env` for its environment."""
    child_env = {**env, "PYTHONPATH": str(artifact), "MEDIAN_COLD_PREIMPORT": ",".join(preimport)}
    stdin = json.dumps(event).encode("utf-8")
    started = time.perf_counter()
    # A Python the caller chose, running the script above: no untrusted input. In the artifact's
    # directory, as Lambda runs in /var/task: `-c` puts the working directory first on sys.path.
    finished = subprocess.run(  # noqa: S603
        [python, "-c", _COLD_START_SCRIPT],
        input=stdin,
        env=child_env,
        cwd=artifact,
        capture_output=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if finished.returncode != 0:
        raise RuntimeError(f"the cold process failed:\n{finished.stderr.decode('utf-8', errors='replace')}")
    # The report is the last line: log lines and metrics come before it.
    report = json.loads(finished.stdout.decode("utf-8").rstrip("\n").rsplit("\n", 1)[-1])
    return ColdStart(report["response"], frozenset(report["modules"]), seconds)
