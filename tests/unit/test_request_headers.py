"""The signature header is found whatever its case and whichever map of the event carries it.

GET looks the header up directly first (HTTP API and Function URL events name headers in lower
case) and scans case-insensitively only when that misses: REST API events keep the client's case.
"""

from __future__ import annotations

import pytest
from median_lambda.app import lambda_handler
from median_lambda.request.signature import sign
from median_lambda.testing import TEST_KEY, FakeLambdaContext, answer_of, dev_key, http_event


def get_status(event: dict[str, object]) -> int:
    with dev_key(TEST_KEY):
        return answer_of(lambda_handler(event, FakeLambdaContext())).status  # type: ignore[arg-type]


@pytest.mark.parametrize("payload_format", ["2.0", "1.0", "url"])
@pytest.mark.parametrize("name", ["median-signature", "Median-Signature", "MEDIAN-SIGNATURE"])
def test_a_signed_get_is_served_whatever_the_header_names_case(payload_format: str, name: str) -> None:
    # GIVEN a GET signed with the key, its header named in this case, in this event shape
    event = http_event("GET", headers={name: sign(TEST_KEY, b"")}, payload_format=payload_format)
    # WHEN it is served
    # THEN it is answered with the manifest
    assert get_status(event) == 200


def test_a_header_only_in_multi_value_headers_is_found() -> None:
    # GIVEN a REST API event that carries the signature in multiValueHeaders alone
    event = http_event("GET", payload_format="1.0")
    event["multiValueHeaders"] = {"Median-Signature": [sign(TEST_KEY, b"")]}
    # WHEN it is served
    # THEN the signature is found and checked
    assert get_status(event) == 200
