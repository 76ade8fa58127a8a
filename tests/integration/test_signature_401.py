"""Who gets in, past what median_lambda/contract/test_signature.py proves on any project's endpoint (405, each
401 family on GET and POST, 500 no_key): the header's edges, what the signature covers, and what a
refusal logs."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest
from median_lambda.request.signature import compute_signature
from median_lambda.testing import TEST_KEY, call_body

if TYPE_CHECKING:
    from collections.abc import Callable

    from median_lambda.testing import TestAnswer

    from tests.conftest import EventBuilder, LogCapture

# The calls go to the sample tools (tests/sample_tools/).
pytestmark = pytest.mark.usefixtures("sample_tools")

BODY = call_body("ticketStatus", {"ticketNumber": "TCK-1042"}, callId="call_1")


@pytest.fixture(autouse=True)
def _key(key_in_secrets_manager: str) -> None:
    """Every request here is checked against TEST_KEY, held in moto's Secrets Manager."""


def _refused(answer: TestAnswer, reason: str, *, post: bool) -> None:
    assert answer.status == 401
    assert answer.headers["Content-Type"] == "application/json"
    error = answer.body["error"]
    assert error["code"] == "unauthorized"
    assert error["message"].startswith(f"{reason}: ")
    assert ("version" in answer.body) is post
    if post:
        assert (answer.body["version"], answer.body["ok"]) == (1, False)


def test_a_timestamp_of_hundreds_of_digits_is_401_stale(
    shape: str, make_event: EventBuilder, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN a header whose t has 400 digits
    event = make_event(shape, "GET", key=None, headers={"median-signature": f"t={'1' * 400},v1={'a' * 64}"})
    # WHEN it arrives
    # THEN 401 stale, not a crash
    _refused(invoke(event), "stale", post=False)


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_mismatch_is_logged_with_its_reason_and_without_the_signature(
    shape: str, method: str, make_event: EventBuilder, invoke: Callable[..., TestAnswer], logs: LogCapture
) -> None:
    # GIVEN a fresh, well-formed signature made with a different key
    body = BODY if method == "POST" else b""
    event = make_event(shape, method, body, key="mk_live_someone_else")
    # WHEN it arrives
    answer = invoke(event)
    # THEN 401 mismatch, and the log says why without the signature
    assert answer.status == 401
    [record] = [r for r in logs.records() if r["message"] == "Signature refused"]
    assert record["reason"] == "mismatch"
    signature = event["headers"].get("median-signature") or event["headers"]["Median-Signature"]
    assert signature.split("v1=")[1] not in logs.text()


def test_a_body_changed_after_signing_is_401_mismatch(
    shape: str, make_event: EventBuilder, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN a POST signed for one body, carrying another (a refund of 1 turned into 1000)
    signed_for = call_body("issueCredit", {"ticketNumber": "TCK-1042", "amount": 1, "reason": "outage"})
    sent = signed_for.replace(b'"amount": 1,', b'"amount": 1000,')
    assert sent != signed_for
    header = make_event(shape, "POST", signed_for)
    event = make_event(shape, "POST", sent, key=None)
    event["headers"].update({name: value for name, value in header["headers"].items() if "signature" in name.lower()})
    # WHEN it arrives
    # THEN 401 mismatch: the signature covers the raw body's bytes
    _refused(invoke(event), "mismatch", post=True)


def test_a_get_signature_does_not_open_a_post(
    shape: str, make_event: EventBuilder, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN a header valid for a GET (an empty body), replayed on a POST with a body
    get_event = make_event(shape, "GET")
    event = make_event(shape, "POST", BODY, key=None)
    event["headers"].update(
        {name: value for name, value in get_event["headers"].items() if "signature" in name.lower()}
    )
    # WHEN it arrives
    # THEN 401 mismatch
    _refused(invoke(event), "mismatch", post=True)


def test_one_matching_v1_among_several_is_let_in(
    shape: str, make_event: EventBuilder, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN Median signs with two keys during a rotation, and this endpoint has the second
    now = int(time.time())
    header = (
        f"t={now},v1={compute_signature('mk_live_old_key', now, BODY)},v0=legacy,"
        f" v1={compute_signature(TEST_KEY, now, BODY)}"
    )
    event = make_event(shape, "POST", BODY, key=None, headers={"median-signature": header})
    # WHEN it arrives
    # THEN the call is served
    assert invoke(event).status == 200


def test_a_bad_body_behind_a_bad_signature_is_401_not_400(
    shape: str, make_event: EventBuilder, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN a body that is not JSON, with a wrong signature
    event = make_event(shape, "POST", b"{not json", key="mk_live_someone_else")
    # WHEN it arrives
    # THEN 401: the body is read only after the signature matches
    _refused(invoke(event), "mismatch", post=True)
