"""The three ways API Gateway and Lambda deliver a request, as the JSON fixtures in tests/events capture them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from median_lambda.protocol import SIGNATURE_HEADER
from median_lambda.request.signature import sign
from median_lambda.testing import TEST_KEY, call_body

if TYPE_CHECKING:
    from collections.abc import Callable

    from median_lambda.testing import TestAnswer

    from tests.conftest import EventBuilder

# The calls go to the sample tools (tests/sample_tools/).
pytestmark = pytest.mark.usefixtures("sample_tools")

BODY = call_body("ticketStatus", {"ticketNumber": "TCK-1042"})


@pytest.fixture(autouse=True)
def _key(key_in_secrets_manager: str) -> None:
    """TEST_KEY in moto's Secrets Manager."""


def test_a_signed_get_is_served_in_every_shape(
    shape: str, make_event: EventBuilder, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN a signed GET as a REST API, an HTTP API or a Function URL delivers it
    # WHEN it arrives
    answer = invoke(make_event(shape, "GET"))
    # THEN the manifest is served
    assert answer.status == 200
    assert answer.body["tools"][0]["name"] == "ticketStatus"


@pytest.mark.parametrize("base64_body", [False, True], ids=["plain body", "base64 body"])
def test_a_signed_post_is_served_in_every_shape(
    shape: str, base64_body: bool, make_event: EventBuilder, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN a signed call, its body plain or base64-encoded
    # WHEN it arrives
    answer = invoke(make_event(shape, "POST", BODY, base64_body=base64_body))
    # THEN the tool runs
    assert answer.status == 200
    assert answer.body["output"]["status"] == "waiting"


@pytest.mark.parametrize("name", ["Median-Signature", "MEDIAN-SIGNATURE", "median-SIGNATURE", "mEdIaN-sIgNaTuRe"])
def test_the_signature_header_is_found_whatever_its_case(
    shape: str, name: str, make_event: EventBuilder, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN a signed call whose header name is written in mixed case
    event = make_event(shape, "POST", BODY, key=None, headers={name: sign(TEST_KEY, BODY)})
    # WHEN it arrives
    # THEN it is verified as if lower-case
    assert invoke(event).status == 200


def test_a_rest_event_with_the_header_only_in_multi_value_headers_is_verified(
    make_event: EventBuilder, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN a REST API event whose single-value header map lost the signature
    event = make_event("rest_api_v1", "POST", BODY, key=None)
    event["multiValueHeaders"]["Median-Signature"] = [sign(TEST_KEY, BODY)]
    # WHEN it arrives
    # THEN the multi-value copy is read
    assert invoke(event).status == 200


def test_a_post_without_body_is_a_signed_empty_body(
    shape: str, make_event: EventBuilder, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN a POST with no body (body null or absent), signed over the empty string
    event = make_event(shape, "POST", b"")
    event.pop("body", None)
    # WHEN it arrives
    answer = invoke(event)
    # THEN the signature verifies, and the empty body is a bad request
    assert answer.status == 400
    assert answer.body["error"]["code"] == "bad_request"


@pytest.mark.parametrize(
    "event",
    [
        pytest.param({}, id="empty object"),
        pytest.param({"source": "aws.events", "detail": {}}, id="EventBridge"),
        pytest.param({"requestContext": {"http": {}}}, id="no method"),
        pytest.param([], id="not an object"),
        pytest.param(None, id="null"),
    ],
)
def test_an_event_that_is_no_http_request_is_400(event: object, invoke: Callable[..., TestAnswer]) -> None:
    # GIVEN the function is invoked with something other than an HTTP event
    # WHEN the handler runs
    answer = invoke(event)
    # THEN a 400 bad_request JSON answer, not a crash
    assert answer.status == 400
    assert answer.body["error"]["code"] == "bad_request"


def test_the_fixtures_carry_no_signature() -> None:
    # GIVEN the event fixtures on disk
    from tests.conftest import EVENTS_DIR, SHAPES

    # WHEN they are read
    # THEN none holds a signature: tests sign at run time, so a fixture never goes stale
    for shape in SHAPES:
        assert SIGNATURE_HEADER not in (EVENTS_DIR / f"{shape}.json").read_text(encoding="utf-8").lower()
