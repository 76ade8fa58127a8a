"""Events as Median sends them: API Gateway or Function URL events, signed with a test key, and the bodies of POST.

The test client sends these; `python -m median_lambda call` and the dev server build theirs with them too.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from typing import Any

from median_lambda.protocol import PROTOCOL_VERSION, SIGNATURE_HEADER
from median_lambda.request.signature import sign

TEST_KEY = "mk_test_0123456789abcdef"
PAYLOAD_FORMATS = ("2.0", "1.0", "url")


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
