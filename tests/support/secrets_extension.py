"""The AWS Parameters and Secrets Lambda Extension, stood in on loopback for the tests and the bench."""

from __future__ import annotations

import base64
import json
import os
import time
from typing import TYPE_CHECKING, Any

from median_lambda.key.secrets_extension import PARAMETER_PATH
from median_lambda.protocol import SECRETS_EXTENSION_PATH, SECRETS_EXTENSION_TOKEN_HEADER

if TYPE_CHECKING:
    from collections.abc import Callable
    from http.server import ThreadingHTTPServer
    from types import TracebackType


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
