"""The body is capped at MAX_BODY_BYTES on its raw size, before anything decodes or parses it."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING

import pytest
from median_lambda.app import lambda_handler
from median_lambda.protocol import MAX_BODY_BYTES
from median_lambda.testing import TEST_KEY, FakeLambdaContext, answer_of, dev_key, http_event, signed_event

if TYPE_CHECKING:
    from median_lambda.testing import MedianTestClient

# The calls go to the sample tools (tests/sample_tools/).
pytestmark = pytest.mark.usefixtures("sample_tools")


@pytest.fixture
def client(client_as_median: MedianTestClient) -> MedianTestClient:
    """Every call with a callId of its own, served as deployed: through the idempotency table."""
    return client_as_median


def padded_call(size: int) -> bytes:
    """A valid call body of exactly `size` bytes, padded inside its conversation, with a callId as Median sends."""
    start = (
        b'{"version":1,"op":"call","tool":"ticketStatus","callId":"call_padded",'
        b'"input":{"ticketNumber":"TCK-1042"},"conversation":{"pad":"'
    )
    end = b'"}}'
    return start + b"a" * (size - len(start) - len(end)) + end


def test_the_cap_counts_utf8_bytes_not_characters(client: MedianTestClient) -> None:
    # GIVEN a body at the cap in characters but one over it in UTF-8 bytes, "é" being two bytes
    body = padded_call(MAX_BODY_BYTES).replace(b"a", "é".encode(), 1)
    assert len(body.decode()) == MAX_BODY_BYTES == len(body) - 1
    # WHEN it is sent
    answer = client.send(signed_event("POST", body))
    # THEN it is too large
    assert answer.status == 413


def test_an_oversized_body_is_refused_before_its_signature_or_encoding_is_looked_at() -> None:
    # GIVEN an unsigned event whose oversized body is not even valid base64
    event = http_event("POST", headers={})
    event["body"] = "!" * (MAX_BODY_BYTES * 2)
    event["isBase64Encoded"] = True
    # WHEN it arrives
    with dev_key(TEST_KEY):
        answer = answer_of(lambda_handler(event, FakeLambdaContext()))  # type: ignore[arg-type]
    # THEN it is refused on its size alone: no decoding, no parsing, no key needed
    assert answer.status == 413
    assert answer.body["error"]["code"] == "too_large"


def test_a_base64_body_that_decodes_under_the_cap_is_served(client: MedianTestClient) -> None:
    # GIVEN a body whose base64 text is larger than the cap, but whose bytes fit
    body = padded_call(MAX_BODY_BYTES)
    assert len(base64.b64encode(body)) > MAX_BODY_BYTES
    # WHEN it is sent base64-encoded
    answer = client.send(signed_event("POST", body, base64_body=True))
    # THEN it is served: the cap is on the body's bytes, not on their encoding
    assert answer.status == 200
    assert answer.body["output"]["ticketNumber"] == "TCK-1042"
