"""The AWS Parameters and Secrets Lambda Extension's localhost API, read with the standard library.

`GET http://localhost:<port>/secretsmanager/get?secretId=<id>`, with the function's session token
in `X-Aws-Parameters-Secrets-Token`, answers what Secrets Manager's GetSecretValue answers. The
key source (median_lambda/key/source.py) asks here first when PARAMETERS_SECRETS_EXTENSION_HTTP_PORT is set,
and reads through boto3 whenever this gives no secret.
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Any

from median_lambda.protocol import (
    SECRETS_EXTENSION_HOST,
    SECRETS_EXTENSION_PATH,
    SECRETS_EXTENSION_PORT_ENV,
    SECRETS_EXTENSION_TOKEN_ENV,
    SECRETS_EXTENSION_TOKEN_HEADER,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

# A secret holds at most 64 KiB; its GetSecretValue JSON, base64 and all, well under this.
MAX_ANSWER_BYTES = 1024 * 1024


class _TooSlow(Exception):
    """Raised where the request to the extension waits, once the time it had is up."""


class ExtensionGaveNone(Exception):
    """Why the extension gave no secret. `kind` is what is logged once: a cause, not its details."""

    def __init__(self, kind: str, cause: str) -> None:
        super().__init__(cause)
        self.kind = kind


# The extension's Parameter Store route: GetParameter's answer, `{"Parameter": {..., "Value": ...}}`.
PARAMETER_PATH = "/systemsmanager/parameters/get"


def ask_extension_for_parameter(name: str, port: str) -> Mapping[str, Any]:
    """GET a parameter, decrypted, from the extension's localhost API; raises ExtensionGaveNone."""
    from urllib.parse import quote

    answer = _ask(f"{PARAMETER_PATH}?name={quote(name, safe='')}&withDecryption=true", port)
    parameter = answer.get("Parameter") if isinstance(answer, dict) else None
    if not isinstance(parameter, dict) or not isinstance(parameter.get("Value"), str):
        raise ExtensionGaveNone("not a parameter", "its answer is not a GetParameter answer")
    return {"Parameter": parameter}


def ask_extension(secret_id: str, port: str) -> Mapping[str, Any]:
    """GET the secret from the extension's localhost API; raises ExtensionGaveNone."""
    from urllib.parse import quote

    answer = _ask(f"{SECRETS_EXTENSION_PATH}?secretId={quote(secret_id, safe='')}", port)
    if not isinstance(answer, dict) or not ({"SecretString", "SecretBinary"} & answer.keys()):
        raise ExtensionGaveNone("not a secret", "its answer is not a GetSecretValue answer")
    return answer


def _ask(path: str, port: str) -> Any:
    """GET `path` from the extension's localhost API: its JSON document (None if it is none); raises ExtensionGaveNone.

    The standard library's http.client, not boto3 or urllib3: importing boto3 and making a
    client is 150-200 ms of a ~250 ms cold GET, and one request to the extension is all that
    a cold GET then needs (bench/README.md).
    """
    token = os.environ.get(SECRETS_EXTENSION_TOKEN_ENV, "")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ExtensionGaveNone("port", f"{SECRETS_EXTENSION_PORT_ENV} is not a port number")
    if not token:
        # SnapStart functions, for one, get no AWS_SESSION_TOKEN, and the extension refuses without it.
        raise ExtensionGaveNone("token", f"{SECRETS_EXTENSION_TOKEN_ENV} is not set")
    from http.client import HTTPConnection, HTTPException

    from median_lambda.runtime import time_limits
    from median_lambda.runtime.aws_clients import extension_timeouts

    connect_timeout, read_timeout = extension_timeouts()
    # The timeouts bound each step; the request as a whole (an answer that trickles in a byte at a
    # time meets no read timeout) ends by their sum, or by the outbound deadline, the sooner.
    ends_by = time.monotonic() + connect_timeout + read_timeout
    outer = time_limits.OUTBOUND_DEADLINE.get()
    seconds = max(0.0, min(ends_by, outer if outer is not None else ends_by) - time.monotonic())
    connection = HTTPConnection(SECRETS_EXTENSION_HOST, int(port), timeout=connect_timeout)
    limit = time_limits.arm(time.monotonic() + seconds, _TooSlow)
    try:
        connection.connect()
        if connection.sock is not None:
            connection.sock.settimeout(read_timeout)
        connection.request("GET", path, headers={SECRETS_EXTENSION_TOKEN_HEADER: token})
        response = connection.getresponse()
        status = response.status
        body = response.read(MAX_ANSWER_BYTES + 1)
    except _TooSlow:
        raise ExtensionGaveNone("too slow", f"it did not answer within the {seconds:.1f} s it had") from None
    except (OSError, HTTPException) as error:  # refused, reset, timed out, or not HTTP
        raise ExtensionGaveNone("unreachable", f"it could not be reached: {type(error).__name__}") from None
    finally:
        time_limits.pop(limit)
        connection.close()
    if status != 200:
        # Its body is not logged: it is the extension's text, and may quote what it was asked for.
        raise ExtensionGaveNone(f"status {status}", f"it answered HTTP {status}")
    try:
        answer = json.loads(body) if len(body) <= MAX_ANSWER_BYTES else None
    except ValueError:
        answer = None
    return answer
