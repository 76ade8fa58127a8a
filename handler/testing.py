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

from handler.key.secrets_extension import PARAMETER_PATH
from handler.protocol import (
    DEV_KEY_ENV,
    KEY_SECRET_ENV,
    PREBUILT_MANIFEST_FILE,
    PROTOCOL_VERSION,
    SECRETS_EXTENSION_PATH,
    SECRETS_EXTENSION_TOKEN_HEADER,
    SIGNATURE_HEADER,
)
from handler.request.signature import sign
from handler.runtime.env import tools_package

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence
    from http.server import ThreadingHTTPServer
    from types import TracebackType

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


# --- The AWS Parameters and Secrets Lambda Extension, stood in ----------------------------------


class SecretsExtensionStandIn:
    """A stand-in for the AWS Parameters and Secrets Lambda Extension's HTTP API, on loopback.

    The extension is a Lambda layer and cannot run here, so this speaks its documented API
    ("Use Secrets Manager secrets in Lambda functions", AWS Lambda Developer Guide):

    - `GET /secretsmanager/get?secretId=<id>` (optionally `versionId`, `versionStage`), with the
      header `X-Aws-Parameters-Secrets-Token` carrying the function's `AWS_SESSION_TOKEN`;
    - a request without that token, or with another, is refused with 403 and reads nothing, as
      AWS's open-source sibling of the extension, the Secrets Manager Agent, refuses it
      (aws/aws-secretsmanager-agent, server.rs `validate_token`: 403 "Bad Token"; the
      extension's guide names no status);
    - the answer is GetSecretValue's JSON (`ARN`, `Name`, `VersionId`, `SecretString` or a
      base64 `SecretBinary`, `VersionStages`, `CreatedDate`); a secret Secrets Manager will not
      give answers with Secrets Manager's own status and its message;
    - each answer is cached for `ttl_seconds` (the extension's SECRETS_MANAGER_TTL, 300 s by
      default; 0 caches nothing), and nothing makes it read again sooner.

    It reads the secret for real, through boto3, from the Secrets Manager at
    `secrets_endpoint` (moto's server in the tests). Use it as a context manager; point the
    handler at it with `PARAMETERS_SECRETS_EXTENSION_HTTP_PORT=<stand_in.port>` and
    `AWS_SESSION_TOKEN=<token>`.

    `requests` counts the HTTP requests it received (refused ones too); `reads` counts its own
    reads of Secrets Manager. `clock` may be a test's own, to step past the TTL without sleeping.
    """

    def __init__(
        self,
        secrets_endpoint: str,
        token: str,
        ttl_seconds: float = 300.0,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        import threading

        self.secrets_endpoint = secrets_endpoint
        self.token = token
        self.ttl_seconds = ttl_seconds
        self.requests = 0
        self.reads = 0
        self._clock = clock
        self._lock = threading.Lock()
        # Per (secretId, versionId, versionStage): the answer's status and body, and until when it holds.
        self._cache: dict[tuple[str, str, str], tuple[int, bytes, float]] = {}
        self._client: Any = None
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.port = 0
        self.start()

    def start(self) -> None:
        import threading
        from http.server import ThreadingHTTPServer

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        # A short poll: close() waits for one, and a test opens and closes a stand-in of its own.
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="secrets-extension", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> SecretsExtensionStandIn:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def answer(self, path: str, token: str | None) -> tuple[int, bytes]:
        """The status and body the extension gives a GET of `path` (with its query) under `token`."""
        from urllib.parse import parse_qs, urlsplit

        with self._lock:
            self.requests += 1
        if token is None or token != self.token:
            return 403, b"Bad Token: the X-Aws-Parameters-Secrets-Token header is missing or wrong"
        parts = urlsplit(path)
        query = {name: values[0] for name, values in parse_qs(parts.query).items()}
        if parts.path == PARAMETER_PATH:
            return self._read_parameter(query.get("name", ""), query.get("withDecryption") == "true")
        if parts.path != SECRETS_EXTENSION_PATH:
            return 404, b"Not Found"
        secret_id = query.get("secretId", "")
        if not secret_id:
            return 400, b"Bad Request: secretId is required"
        cache_key = (secret_id, query.get("versionId", ""), query.get("versionStage", ""))
        with self._lock:
            cached = self._cache.get(cache_key)
            if cached is not None and self._clock() < cached[2]:
                return cached[0], cached[1]
        status, body = self._read(*cache_key)
        if status == 200 and self.ttl_seconds > 0:
            with self._lock:
                self._cache[cache_key] = (status, body, self._clock() + self.ttl_seconds)
        return status, body

    def _read(self, secret_id: str, version_id: str, version_stage: str) -> tuple[int, bytes]:
        import boto3
        from botocore.exceptions import ClientError

        with self._lock:
            self.reads += 1
            if self._client is None:
                self._client = boto3.client(
                    "secretsmanager",
                    endpoint_url=self.secrets_endpoint,
                    region_name=os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1",
                )
        options = {"VersionId": version_id} if version_id else {}
        if version_stage:
            options["VersionStage"] = version_stage
        try:
            value = self._client.get_secret_value(SecretId=secret_id, **options)
        except ClientError as error:
            status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 400))
            return status, str(error).encode("utf-8")
        document: dict[str, Any] = {
            "ARN": value["ARN"],
            "Name": value["Name"],
            "VersionId": value["VersionId"],
            "VersionStages": value.get("VersionStages", []),
            "CreatedDate": value["CreatedDate"].timestamp() if "CreatedDate" in value else None,
            "ResultMetadata": {},
        }
        if "SecretString" in value:
            document["SecretString"] = value["SecretString"]
        if "SecretBinary" in value:
            document["SecretBinary"] = base64.b64encode(value["SecretBinary"]).decode("ascii")
        return 200, json.dumps(document).encode("utf-8")

    def _read_parameter(self, name: str, decrypted: bool) -> tuple[int, bytes]:
        """The extension's Parameter Store route, uncached: `{"Parameter": {...}}`, as GetParameter answers."""
        import boto3
        from botocore.exceptions import ClientError

        if not name:
            return 400, b"Bad Request: name is required"
        with self._lock:
            self.reads += 1
        region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
        client = boto3.client("ssm", endpoint_url=self.secrets_endpoint, region_name=region)
        try:
            parameter = client.get_parameter(Name=name, WithDecryption=decrypted)["Parameter"]
        except ClientError as error:
            status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 400))
            return status, str(error).encode("utf-8")
        document = {"Parameter": {"Name": parameter["Name"], "Type": parameter["Type"], "Value": parameter["Value"]}}
        return 200, json.dumps(document).encode("utf-8")

    def _handler_class(self) -> type:
        from http.server import BaseHTTPRequestHandler

        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                status, body = stand_in.answer(self.path, self.headers.get(SECRETS_EXTENSION_TOKEN_HEADER))
                self.send_response(status)
                self.send_header("Content-Type", "application/json" if status == 200 else "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
                pass  # the test's output is not the place for an access log

        return Handler


class MedianAWS:
    """What the `median_aws` pytest fixture gives a test: moto's server, and boto3 pointed at it.

        def test_reads_the_table(median_aws):
            median_aws.client("dynamodb").create_table(...)
            median_aws.create_secret("median-tools/carrier-token", "t0k3n")
            answer = MedianTestClient().call("parcelStatus", {"parcel": "P-1"})

    The tool's `ctx.aws_client(...)`, `Secret(...)` and `Parameter(...)` reach the same server
    through AWS_ENDPOINT_URL, with fake credentials and a region, so no test reaches AWS.
    """

    REGION = "us-east-1"

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint

    def client(self, service: str) -> Any:
        """A boto3 client for `service`, on moto's server, for the test's own setup and checks."""
        import boto3

        return boto3.client(service, endpoint_url=self.endpoint, region_name=self.REGION)  # type: ignore[call-overload]

    def create_secret(self, name: str, value: str) -> str:
        """A secret holding `value` (a SecretString); its ARN."""
        return str(self.client("secretsmanager").create_secret(Name=name, SecretString=value)["ARN"])

    def put_parameter(self, name: str, value: str, *, secure: bool = True) -> None:
        """A parameter holding `value`: a SecureString unless `secure=False` (a String)."""
        kind = "SecureString" if secure else "String"
        self.client("ssm").put_parameter(Name=name, Value=value, Type=kind, Overwrite=True)

    def reset(self) -> None:
        """Empty moto's server (every table, secret and parameter) and forget what the handler keeps per container."""
        from urllib.request import Request, urlopen

        with urlopen(Request(f"{self.endpoint}/moto-api/reset", method="POST"), timeout=10):  # noqa: S310 - moto's own loopback URL
            pass
        forget_what_a_container_keeps()


def forget_what_a_container_keeps() -> None:
    """Drop every per-container cache: settings, secrets, parameters, AWS clients, the idempotency table's client.

    A test then sees its own environment, files and AWS, as a fresh container would: a client kept
    from an earlier pytest session in the same process (mutmut runs several) would still point at
    that session's moto server, long stopped.
    """
    from handler.authoring.dependencies import forget_secrets
    from handler.authoring.settings import forget_configuration
    from handler.calls.idempotency import forget_clients as forget_idempotency_clients
    from handler.runtime.aws_clients import forget_tool_clients
    from handler.runtime.env import forget_settings

    forget_configuration()
    forget_secrets()
    forget_tool_clients()
    forget_idempotency_clients()
    forget_settings()
