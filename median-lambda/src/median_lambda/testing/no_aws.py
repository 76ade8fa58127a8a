"""Where boto3 points in a test that did not ask for `median_aws`: a loopback server that refuses every call.

The pytest plugin points every test's boto3 here (median_lambda/testing/pytest_plugin.py), so a test
that forgot the fixture can reach no AWS, neither moto's server nor a real account, and fails
at its first call, at once, saying what to do: no retries against a closed port, no timeout.
Each answer is a 400 in the shape the call's protocol reads (JSON for DynamoDB, Secrets Manager
and Parameter Store; XML for S3, STS and SNS; CBOR for CloudWatch), so botocore raises a
ClientError whose code is `UseTheMedianAwsFixture` and whose message names the fix, and it
never retries one. Nothing is stored, and nothing sent is read past its headers.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from xml.sax.saxutils import escape

HOST = "127.0.0.1"
ERROR_CODE = "UseTheMedianAwsFixture"
MESSAGE = (
    "This test did not ask for the median_aws fixture, so no AWS answers it, neither moto's server nor a real "
    "account: add median_aws to the test's parameters (README.md's guide to your own systems, 'Test each')."
)


def _cbor_text(text: str) -> bytes:
    """A CBOR text string: major type 3, its length, its UTF-8 bytes."""
    data = text.encode("utf-8")
    if len(data) < 24:
        return bytes([0x60 + len(data)]) + data
    if len(data) < 256:
        return bytes([0x78, len(data)]) + data
    return bytes([0x79]) + len(data).to_bytes(2, "big") + data


def _cbor_error(code: str, message: str) -> bytes:
    """{"__type": code, "message": text} in CBOR, what smithy's rpc-v2-cbor protocol reads an error from."""
    return bytes([0xA2]) + _cbor_text("__type") + _cbor_text(code) + _cbor_text("message") + _cbor_text(message)


def _xml_error(code: str, message: str, *, query: bool) -> bytes:
    error = f"<Error><Type>Sender</Type><Code>{escape(code)}</Code><Message>{escape(message)}</Message></Error>"
    document = f"<ErrorResponse>{error}<RequestId>no-aws</RequestId></ErrorResponse>" if query else error
    return document.encode("utf-8")


def aws_error(headers: dict[str, str], code: str, message: str) -> tuple[str, bytes]:
    """(Content-Type, body) of an error botocore reads as `code` and `message`, in the protocol the
    request's headers (lower-case names) show it speaks. Send it with `x-amzn-ErrorType: code` too."""
    content_type = headers.get("content-type", "").lower()
    if headers.get("smithy-protocol", "").lower() == "rpc-v2-cbor":
        return "application/cbor", _cbor_error(code, message)
    if "x-amz-target" in headers or "json" in content_type:
        return "application/x-amz-json-1.1", json.dumps({"__type": code, "message": message}).encode("utf-8")
    if "x-www-form-urlencoded" in content_type:
        return "text/xml", _xml_error(code, message, query=True)  # the query protocol: STS, SNS, CloudFormation
    # A REST service: S3's XML, or the JSON of Lambda and API Gateway, which read the header.
    if "/s3/" in headers.get("authorization", "") or "x-amz-content-sha256" in headers:
        return "application/xml", _xml_error(code, message, query=False)
    return "application/json", json.dumps({"message": message}).encode("utf-8")


def refusal(headers: dict[str, str]) -> tuple[str, bytes]:
    """(Content-Type, body) of this server's refusal, in the protocol the request's headers show it speaks."""
    return aws_error(headers, ERROR_CODE, MESSAGE)


class _Refuse(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _refuse(self) -> None:
        content_type, body = refusal({name.lower(): value for name, value in self.headers.items()})
        self.send_response(400)
        self.send_header("Content-Type", content_type)
        self.send_header("x-amzn-ErrorType", ERROR_CODE)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")  # the body sent, if any, stays unread
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.close_connection = True

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = _refuse

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


class NoAwsServer:
    """The refusing server on a free port of 127.0.0.1, in a thread of this process."""

    def __init__(self) -> None:
        self._server = ThreadingHTTPServer((HOST, 0), _Refuse)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="no-aws", daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://{HOST}:{self._server.server_address[1]}"

    def start(self) -> str:
        self._thread.start()
        return self.endpoint

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
