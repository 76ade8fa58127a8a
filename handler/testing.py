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
import json
import os
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from handler.protocol import DEV_KEY_ENV, KEY_SECRET_ENV, PROTOCOL_VERSION, SIGNATURE_HEADER
from handler.signature import sign

if TYPE_CHECKING:
    from collections.abc import Iterator

TEST_KEY = "mk_test_0123456789abcdef"
PAYLOAD_FORMATS = ("2.0", "1.0", "url")


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
    from handler.aws_clients import forget_tool_clients
    from handler.dependencies import forget_secrets
    from handler.env import forget_settings
    from handler.idempotency import forget_clients as forget_idempotency_clients
    from handler.settings import forget_configuration

    forget_configuration()
    forget_secrets()
    forget_tool_clients()
    forget_idempotency_clients()
    forget_settings()
