"""Who gets in (docs/protocol.md §2-3): the published vectors, 405 before anything else, each 401 family on
GET and POST, and 500 no_key when the key's secret is missing, on each event shape the function is reached by.

Every request reaches your function as deployed (median_lambda/contract/conftest.py, `endpoint`): the key
is read from Secrets Manager on moto's server, by the function's own boto3 client, over HTTP. A
POST here calls a tool no endpoint serves, so nothing of yours could run even if a check failed open.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from median_lambda.contract.deployed import NO_SUCH_TOOL
from median_lambda.protocol import MAX_BODY_BYTES
from median_lambda.request.signature import compute_signature, matches, parse_header, sign
from median_lambda.testing import PAYLOAD_FORMATS, TEST_KEY, call_body, http_event, signed_event

if TYPE_CHECKING:
    from median_lambda.contract.deployed import Endpoint
    from median_lambda.testing import TestAnswer

# The protocol's published vectors, as docs/protocol.md §2 prints them.
PUBLISHED = json.loads((Path(__file__).parent / "signature_vectors.json").read_text(encoding="utf-8"))
BODY = call_body(NO_SUCH_TOOL, {"orderNumber": "ORD-1042"}, callId="call_contract")
OTHER_KEY = "mk_live_someone_else"
# What each 401 says first, and the words a person acts on after it.
WORDS = {
    "missing": "the request has no median-signature header",
    "malformed": "the median-signature header",
    "stale": "more than 300 seconds from this server's clock; sign the request again",
    "mismatch": "check that the endpoint and Median use the same key",
}


def _event(method: str, payload_format: str, *, header: str | None = None, **options: Any) -> dict[str, Any]:
    """An unsigned event, or one carrying `header` as its signature, named as each API passes it on."""
    body = BODY if method == "POST" else b""
    # REST APIs pass header names as the client wrote them; HTTP APIs and Function URLs lower-case them.
    name = "Median-Signature" if payload_format == "1.0" else "median-signature"
    headers = {} if header is None else {name: header}
    return http_event(method, body, headers=headers, payload_format=payload_format, **options)


def _refused(answer: TestAnswer, reason: str, *, post: bool, shape: str) -> None:
    assert answer.status == 401, (shape, answer.body)
    assert answer.headers["Content-Type"] == "application/json"
    error = answer.body["error"]
    assert error["code"] == "unauthorized", shape
    assert error["message"].startswith(f"{reason}: "), (shape, error["message"])
    assert WORDS[reason] in error["message"], (shape, error["message"])
    # A POST's error carries the operation's envelope; a GET's is the error alone.
    assert ("version" in answer.body) is post, shape
    if post:
        assert (answer.body["version"], answer.body["ok"]) == (1, False)


@pytest.mark.parametrize(
    ("body", "expected"),
    [(vector["body"].encode("utf-8"), vector["v1"]) for vector in PUBLISHED["vectors"]],
    ids=["a GET's empty body", "a call"],
)
def test_the_protocols_vectors_are_what_this_endpoint_signs_and_verifies(body: bytes, expected: str) -> None:
    # GIVEN the protocol's published key, timestamp and bodies
    key, t = PUBLISHED["key"], PUBLISHED["t"]
    assert (key, t) == (TEST_KEY, 1764500000)
    # WHEN the body is signed as the endpoint computes it, and as the test client writes the header
    # THEN the signature is the published one, the header is the protocol's, and it verifies at t
    assert compute_signature(key, t, body) == expected
    assert sign(key, body, timestamp=t) == f"t={t},v1={expected}"
    assert matches(parse_header(f"t={t},v1={expected}", now=t), key, body)


@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "put", "TRACE"])
def test_other_methods_get_405_with_allow_before_anything_else(
    method: str, contract_endpoint_without_key: Endpoint
) -> None:
    for shape in PAYLOAD_FORMATS:
        # GIVEN an unsigned request of another method, with a body over the size cap, and no usable key
        event = _event(method, shape)
        event["body"] = "x" * (MAX_BODY_BYTES + 1)
        # WHEN it arrives
        answer = contract_endpoint_without_key.send(event)
        # THEN 405 with Allow: GET, POST: nothing else (size, signature, key) was looked at
        assert answer.status == 405, shape
        assert answer.headers["Allow"] == "GET, POST"
        assert answer.headers["Content-Type"] == "application/json"
        assert answer.body["error"]["code"] == "method_not_allowed"
        assert "GET, POST" in answer.body["error"]["message"]


@pytest.mark.parametrize("header", [None, "", "   "], ids=["absent", "empty", "blank"])
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_missing_signature_is_401_missing_without_the_key(
    method: str, header: str | None, contract_endpoint_without_key: Endpoint
) -> None:
    for shape in PAYLOAD_FORMATS:
        # GIVEN a request with no signature, or an empty one, and no key to verify with
        # WHEN it arrives
        answer = contract_endpoint_without_key.send(_event(method, shape, header=header))
        # THEN 401 missing, not 500: telling it needs no key
        _refused(answer, "missing", post=method == "POST", shape=shape)


def _malformed_headers() -> list[Any]:
    now = int(time.time())
    good = compute_signature(TEST_KEY, now, BODY)
    return [
        pytest.param(f"v1={good}", id="no t"),
        pytest.param(f"t=soon,v1={good}", id="t not digits"),
        pytest.param(f"t=١٧٦٤٥٠٠٠٠٠,v1={good}", id="t in arabic-indic digits"),
        pytest.param(f"t={now}", id="no v1"),
        pytest.param(f"t={now},v1=xyz", id="v1 not hex"),
        pytest.param(f"t={now},v1={good.upper()}", id="v1 uppercase"),
        pytest.param(f"t={now},v1={good[:32]}", id="v1 short"),
        pytest.param(f"t={now},t={now},v1={good}", id="two t"),
    ]


@pytest.mark.parametrize("header", _malformed_headers())
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_malformed_signature_is_401_malformed_without_the_key(
    method: str, header: str, contract_endpoint_without_key: Endpoint
) -> None:
    for shape in PAYLOAD_FORMATS:
        # GIVEN a signed-looking request whose header is malformed, and no key to verify with
        # WHEN it arrives
        answer = contract_endpoint_without_key.send(_event(method, shape, header=header))
        # THEN 401 malformed
        _refused(answer, "malformed", post=method == "POST", shape=shape)


@pytest.mark.parametrize(
    "offset", [-301, 301, -86_400, 10**9], ids=["301s old", "301s ahead", "a day old", "far future"]
)
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_stale_signature_is_401_stale_without_the_key(
    method: str, offset: int, contract_endpoint_without_key: Endpoint
) -> None:
    for shape in PAYLOAD_FORMATS:
        # GIVEN a request signed with the right key, at a time more than 300 s from now, and no key to verify with
        body = BODY if method == "POST" else b""
        event = signed_event(method, body, timestamp=int(time.time()) + offset, payload_format=shape)
        # WHEN it arrives
        # THEN 401 stale
        _refused(contract_endpoint_without_key.send(event), "stale", post=method == "POST", shape=shape)


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_signature_from_another_key_is_401_mismatch(method: str, contract_endpoint: Endpoint) -> None:
    for shape in PAYLOAD_FORMATS:
        # GIVEN a fresh, well-formed signature made with another key than the one in Secrets Manager
        body = BODY if method == "POST" else b""
        event = signed_event(method, body, key=OTHER_KEY, payload_format=shape)
        # WHEN it arrives
        # THEN 401 mismatch
        _refused(contract_endpoint.send(event), "mismatch", post=method == "POST", shape=shape)


@pytest.mark.parametrize("key", [TEST_KEY, OTHER_KEY], ids=["signed with the key", "signed with another key"])
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_missing_key_secret_is_500_no_key_before_the_signature_is_compared(
    method: str, key: str, contract_endpoint_without_key: Endpoint
) -> None:
    for shape in PAYLOAD_FORMATS:
        # GIVEN the key's secret does not exist, and a fresh, well-formed signature (right or wrong cannot be told)
        body = BODY if method == "POST" else b""
        # WHEN the request arrives
        answer = contract_endpoint_without_key.send(signed_event(method, body, key=key, payload_format=shape))
        # THEN 500 no_key, always in the same words, never a 401 nor why the key is missing
        assert answer.status == 500, (shape, answer.body)
        error = {"code": "no_key", "message": "The server has no usable Median key to verify with."}
        assert answer.body == ({"version": 1, "ok": False, "error": error} if method == "POST" else {"error": error})
