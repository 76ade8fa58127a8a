"""Lambda's API on loopback: moto's for everything but `Invoke`, which runs a version's code here.

moto serves Lambda's control plane (functions, versions, aliases, ListVersionsByFunction,
DeleteFunction), and runs a function's code only in Docker, which is not here; its Docker-free
backend answers an `Invoke` with canned text, which would prove nothing. So this stand-in answers
`POST /2015-03-31/functions/{FunctionName}/invocations` itself, as Lambda's API reference documents
it, and forwards every other request to moto's server unchanged (its `Host` too, which the request's
SigV4 signature covers, and which moto's guard checks):

- the function is named by its name or ARN, the version by a `:N` qualifier on it or `?Qualifier=N`;
- the version's runner gets the event and returns the handler's response, which is the answer's body
  (200, with `X-Amz-Executed-Version`); a runner that raises FunctionFailed is a function error
  (200, `X-Amz-Function-Error: Unhandled`, and the error's `errorType` and `errorMessage` as the body);
- a version with no runner is Lambda's 404 `ResourceNotFoundException`; a runner may also refuse
  with Lambda's own error (LambdaRefusal: `ResourceConflictException` while a version is Pending, say).

Point boto3 at it with `AWS_ENDPOINT_URL_LAMBDA=<stand_in.endpoint>`. `invocations` lists each
invoked version's number, in order.
"""

from __future__ import annotations

import http.client
import json
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from tests.support.loopback import LoopbackServer, QuietHandler

if TYPE_CHECKING:
    from collections.abc import Callable

    Runner = Callable[[dict[str, Any]], dict[str, Any]]

INVOKE_PREFIX = "/2015-03-31/functions/"
INVOKE_SUFFIX = "/invocations"


class FunctionFailed(Exception):
    """What a runner raises when the function itself failed: Lambda reports it as an Unhandled function error."""

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type


class LambdaRefusal(Exception):
    """What a runner raises for Lambda to refuse the invocation with one of its own errors."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code = status, code


class LambdaInvokeStandIn(LoopbackServer):
    """Lambda on loopback: each version's runner for `Invoke`, moto's server for the rest."""

    def __init__(self, moto_endpoint: str, runners: dict[str, Runner]) -> None:
        self.runners = runners
        self.invocations: list[str] = []
        self._moto = urlsplit(moto_endpoint)
        stand_in = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                path = urlsplit(self.path)
                if self.command == "POST" and path.path.startswith(INVOKE_PREFIX) and path.path.endswith(INVOKE_SUFFIX):
                    status, headers, payload = stand_in.invoke(path.path, path.query, body)
                else:
                    status, headers, payload = stand_in.forward(self.command, self.path, dict(self.headers), body)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_DELETE = _serve

        super().__init__(Handler)

    def invoke(self, path: str, query: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
        name = unquote(path[len(INVOKE_PREFIX) : -len(INVOKE_SUFFIX)])
        qualifier = parse_qs(query).get("Qualifier", [""])[0]
        # A qualified ARN (arn:aws:lambda:<region>:<account>:function:<name>:<version>) or name:<version>.
        parts = name.split(":")
        if not qualifier and (len(parts) == 8 or len(parts) == 2):
            qualifier = parts[-1]
        runner = self.runners.get(qualifier)
        if runner is None:
            return _error(404, "ResourceNotFoundException", f"Function not found: {name}")
        self.invocations.append(qualifier)
        try:
            response = runner(json.loads(body))
        except LambdaRefusal as refused:
            return _error(refused.status, refused.code, str(refused))
        except FunctionFailed as failed:
            payload = json.dumps({"errorType": failed.error_type, "errorMessage": str(failed)}).encode("utf-8")
            return 200, {"X-Amz-Function-Error": "Unhandled", "X-Amz-Executed-Version": qualifier}, payload
        return 200, {"X-Amz-Executed-Version": qualifier}, json.dumps(response).encode("utf-8")

    def forward(
        self, method: str, target: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        connection = http.client.HTTPConnection(self._moto.hostname or "127.0.0.1", self._moto.port, timeout=30)
        try:
            connection.request(method, target, body=body, headers=headers)
            answer = connection.getresponse()
            kept = {
                name: value
                for name, value in answer.getheaders()
                if name.lower() not in ("content-length", "transfer-encoding", "connection", "server", "date")
            }
            return answer.status, kept, answer.read()
        finally:
            connection.close()


def _error(status: int, code: str, message: str) -> tuple[int, dict[str, str], bytes]:
    """An error as Lambda's REST API answers it: its code in `X-Amzn-ErrorType`, and a JSON body."""
    body = json.dumps({"Type": "User", "message": message}).encode("utf-8")
    return status, {"X-Amzn-ErrorType": code, "Content-Type": "application/json"}, body
