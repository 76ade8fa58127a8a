"""`median smoke-check`, run by the pipeline after each deploy (deploy-stage.yml): is the endpoint live?

It needs no Median key. It sends a GET signed, correctly and freshly, with a random key: the
endpoint can only answer `401 unauthorized` "mismatch" after it has read its own Median key from
Secrets Manager and compared the two, so that answer shows that API Gateway reaches the deployed
function, that the function starts, and that it can read its key. A missing or unreadable secret
answers `500 no_key` instead, and fails the check with what to do.

With $MEDIAN_KEY set (the GitHub environment's optional secret of the same name), it also GETs
the manifest signed with that key, which shows the secret holds the key Median signs with.

    sam list stack-outputs --output json > outputs.json
    median smoke-check --stack-outputs outputs.json   # prints the endpoint's URL
    median smoke-check https://abc123.execute-api.eu-west-1.amazonaws.com/

A key on its command line is refused, never printed (median_lambda.cli.commands): its output is a CI log.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import time
from typing import TYPE_CHECKING, Any
from urllib.error import HTTPError, URLError
from urllib.parse import urlsplit
from urllib.request import Request

from median_lambda.cli.requests import KEY_ENV, USER_AGENT
from median_lambda.cli.same_origin import RedirectRefused, opener, origin
from median_lambda.protocol import SIGNATURE_HEADER, ErrorCode
from median_lambda.request.signature import SignatureError, sign

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

ENDPOINT_OUTPUT = "MedianEndpointUrl"  # template.yaml's output
TIMEOUT_SECONDS = 30.0
# API Gateway may answer 5xx of its own for a moment after a stage changes: those are retried.
GATEWAY_RETRIES = 3
GATEWAY_RETRY_SECONDS = 5.0
GATEWAY_STATUSES = {502, 503, 504}


class SmokeCheckFailed(Exception):
    """The endpoint is not serving as deployed; the message says what was seen and what to check."""


def endpoint_from_outputs(path: Path) -> str:
    """The endpoint's URL from `sam list stack-outputs --output json`."""
    try:
        outputs = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise SmokeCheckFailed(f"cannot read the stack's outputs from {path}: {error}") from None
    for output in outputs if isinstance(outputs, list) else []:
        if isinstance(output, dict) and output.get("OutputKey") == ENDPOINT_OUTPUT:
            return str(output.get("OutputValue", ""))
    raise SmokeCheckFailed(f"the stack has no {ENDPOINT_OUTPUT} output (is it this template's stack?)")


def signed_get(url: str, key: str) -> tuple[int, Any]:
    """GET url signed with key: the status and the decoded JSON answer (None when not JSON)."""
    request = Request(  # noqa: S310 - main() admits only http(s) URLs
        url, method="GET", headers={SIGNATURE_HEADER: sign(key, b""), "user-agent": USER_AGENT}
    )
    for attempt in range(1, GATEWAY_RETRIES + 1):
        try:
            with opener().open(request, timeout=TIMEOUT_SECONDS) as response:
                status, payload = response.status, response.read()
        except RedirectRefused as refused:
            # The signature, under $MEDIAN_KEY on the second GET, goes to the endpoint's origin alone.
            raise SmokeCheckFailed(
                f"GET {url} was redirected ({refused.status}) to {refused.target}, another origin than "
                f"{origin(url)}: not followed. Is this URL the endpoint's?"
            ) from None
        except HTTPError as error:
            status, payload = error.code, error.read()
        except (URLError, OSError) as error:
            cause = getattr(error, "reason", None) or error
            if attempt == GATEWAY_RETRIES:
                raise SmokeCheckFailed(f"GET {url} got no answer: {cause}") from None
            time.sleep(GATEWAY_RETRY_SECONDS)
            continue
        if status in GATEWAY_STATUSES and attempt < GATEWAY_RETRIES:
            time.sleep(GATEWAY_RETRY_SECONDS)
            continue
        try:
            return status, json.loads(payload)
        except ValueError:
            return status, None
    raise AssertionError("unreachable: the last attempt returns or raises")


def error_of(answer: Any) -> tuple[str, str]:
    error = answer.get("error") if isinstance(answer, dict) else None
    if not isinstance(error, dict):
        return "", ""
    return str(error.get("code", "")), str(error.get("message", ""))


def check_key_is_read(url: str) -> None:
    status, answer = signed_get(url, secrets.token_urlsafe(32))
    code, message = error_of(answer)
    if status == 401 and code == ErrorCode.UNAUTHORIZED and message == SignatureError.mismatch().message:
        return
    if status == 500 and code == ErrorCode.NO_KEY:
        raise SmokeCheckFailed(
            f"GET {url} -> 500 {code}: the function cannot read its Median key. Create the secret this "
            "stage's MedianKeySecretName names (samconfig.toml), in the stack's region, then run the "
            "deploy again; the function's log says why it could not read it."
        )
    raise SmokeCheckFailed(
        f"GET {url} signed with a key that cannot be the endpoint's -> {status} {code or '(no error code)'}; "
        "expected 401 unauthorized (mismatch). Is this URL the endpoint's? The function's log tells more."
    )


def check_manifest(url: str, key: str) -> int:
    """GET the manifest signed with Median's key; the number of tools it lists."""
    status, answer = signed_get(url, key)
    if status == 200 and isinstance(answer, dict) and isinstance(answer.get("tools"), list):
        return len(answer["tools"])
    code, _ = error_of(answer)
    if status == 401:
        raise SmokeCheckFailed(
            f"GET {url} signed with ${KEY_ENV} -> 401: the secret holds another key than ${KEY_ENV}. "
            "Put Median's key in the secret (README.md's deploy guide, 'Rotate the key'), or fix the GitHub secret."
        )
    raise SmokeCheckFailed(f"GET {url} signed with ${KEY_ENV} -> {status} {code}; expected 200 and the manifest.")


def command_smoke_check(arguments: argparse.Namespace) -> int:
    """Is the deployed endpoint live and reading its key? A GET signed with a random key must be refused as a
    mismatch; with $MEDIAN_KEY, the manifest too. Prints the endpoint's URL."""
    try:
        url = arguments.url or endpoint_from_outputs(arguments.stack_outputs)
        target = urlsplit(url)
        if target.scheme not in ("http", "https") or not target.hostname:
            raise SmokeCheckFailed("the URL is not an http(s) URL")  # not repeated: it may be a misplaced key
        check_key_is_read(url)
        print(f"{url}: answers, and reads its Median key", file=sys.stderr)
        key = os.environ.get(KEY_ENV, "").strip()
        if key:
            tools = check_manifest(url, key)
            print(f"{url}: serves its manifest ({tools} tools) to Median's key", file=sys.stderr)
        else:
            print(f"note: ${KEY_ENV} is not set, so the manifest was not fetched", file=sys.stderr)
    except SmokeCheckFailed as error:
        print(f"Smoke check failed: {error}", file=sys.stderr)
        return 1
    print(url)
    return 0
