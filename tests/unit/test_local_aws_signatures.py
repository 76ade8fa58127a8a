"""The local AWS stand-in's signature guard fails closed: whatever a made-up signature holds, moto never sees it.

tests/integration/test_local_aws_answers_only_its_developer.py attacks both servers over HTTP with
what another account can send; these are the malformed ones, at the guard itself, each of which
must be a 403 in AWS's shape and never reach the application behind it.
"""

from __future__ import annotations

import datetime
import io
import json
from typing import TYPE_CHECKING, Any

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from handler.testing.moto_server import CREDENTIAL_REQUIRED, LocalCredentials, SignedWithTheRunsCredential

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

CREDENTIALS = LocalCredentials.generate()
NOW = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
SCOPE = f"{CREDENTIALS.access_key_id}/{NOW[:8]}/us-east-1/secretsmanager/aws4_request"


def answer(path: str, headers: dict[str, str], body: bytes = b"{}") -> tuple[str, bytes, bool]:
    """(status, body, whether the application behind the guard was reached) for one request."""
    reached: list[bool] = []

    def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        reached.append(True)
        start_response("200 OK", [])
        return [b"the secret"]

    path_only, _, query = path.partition("?")
    environ = {
        "REQUEST_METHOD": "POST",
        "RAW_URI": path,
        "PATH_INFO": path_only,
        "QUERY_STRING": query,
        "CONTENT_LENGTH": str(len(body)),
        "CONTENT_TYPE": "application/x-amz-json-1.1",
        "wsgi.input": io.BytesIO(body),
        "HTTP_HOST": "127.0.0.1:5000",
        **{f"HTTP_{name.upper().replace('-', '_')}": value for name, value in headers.items()},
    }
    status: list[str] = []
    chunks = SignedWithTheRunsCredential(application, CREDENTIALS)(
        environ, lambda line, _headers, exc_info=None: status.append(line)
    )
    return status[0], b"".join(chunks), bool(reached)


def signed_headers(body: bytes = b"{}") -> dict[str, str]:
    request = AWSRequest(
        method="POST",
        url="http://127.0.0.1:5000/",
        data=body,
        headers={"Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": "secretsmanager.ListSecrets"},
    )
    credentials = Credentials(CREDENTIALS.access_key_id, CREDENTIALS.secret_access_key)
    SigV4Auth(credentials, "secretsmanager", "us-east-1").add_auth(request)
    return {name: value for name, value in request.headers.items() if name.lower() != "content-type"}


MALFORMED = {
    "no Credential": (
        "/",
        {"Authorization": "AWS4-HMAC-SHA256 SignedHeaders=host, Signature=00", "X-Amz-Date": NOW},
    ),
    "a scope cut short": (
        "/",
        {
            "Authorization": f"AWS4-HMAC-SHA256 Credential={CREDENTIALS.access_key_id}/{NOW[:8]}, "
            "SignedHeaders=host, Signature=00",
            "X-Amz-Date": NOW,
        },
    ),
    "no X-Amz-Date": ("/", {"Authorization": f"AWS4-HMAC-SHA256 Credential={SCOPE}, SignedHeaders=host, Signature=00"}),
    "a date that is none": (
        "/",
        {"Authorization": f"AWS4-HMAC-SHA256 Credential={SCOPE}, SignedHeaders=host, Signature=00", "X-Amz-Date": "x"},
    ),
    "a signed header not sent": (
        "/",
        {
            "Authorization": f"AWS4-HMAC-SHA256 Credential={SCOPE}, SignedHeaders=host;x-amz-nothing, Signature=00",
            "X-Amz-Date": NOW,
        },
    ),
    "another scheme": ("/", {"Authorization": "Bearer the-token"}),
    "S3's version 2 without a colon": ("/bucket/key", {"Authorization": "AWS just-a-key", "Date": "yesterday"}),
    "a presigned URL expiring past the calendar": (
        f"/?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential={SCOPE.replace('/', '%2F')}&X-Amz-Date={NOW}"
        "&X-Amz-Expires=100000000000000000000&X-Amz-SignedHeaders=host&X-Amz-Signature=00",
        {},
    ),
    "a presigned URL with two signatures": (
        f"/?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential={SCOPE.replace('/', '%2F')}&X-Amz-Date={NOW}"
        "&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Signature=00&X-Amz-Signature=11",
        {},
    ),
    "S3's presigned version 2 with no expiry": ("/bucket/key?AWSAccessKeyId=x&Signature=00", {}),
}


@pytest.mark.parametrize(("path", "headers"), list(MALFORMED.values()), ids=list(MALFORMED))
def test_a_malformed_signature_is_refused_and_never_reaches_moto(path: str, headers: dict[str, str]) -> None:
    # GIVEN a request whose signature is made up in one more way
    # WHEN it reaches the guard
    status, body, reached = answer(path, headers)
    # THEN it is refused in AWS's shape, and the application behind never ran
    assert status == "403 Forbidden"
    assert json.loads(body)["__type"] == CREDENTIAL_REQUIRED
    assert reached is False


def test_the_runs_own_signature_reaches_moto_and_the_same_on_another_body_does_not() -> None:
    # GIVEN the headers the run's own client signs a call with
    headers = signed_headers(b"{}")
    # WHEN they come with the body they were signed for, and with another
    own = answer("/", headers, b"{}")
    other = answer("/", headers, b'{"Filters": []}')
    # THEN the first reaches the application, the second is refused as not matching
    assert own == ("200 OK", b"the secret", True)
    assert other[0] == "403 Forbidden"
    assert "its signature does not match this run's credential" in json.loads(other[1])["message"]
