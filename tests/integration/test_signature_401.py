"""Who gets in: 405 for other methods, then every 401 cause, in the protocol's order of checks (§3)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from handler.protocol import DEV_KEY_ENV, KEY_SECRET_ENV, MAX_BODY_BYTES
from handler.request.signature import compute_signature
from handler.testing import TEST_KEY, call_body

if TYPE_CHECKING:
    from collections.abc import Callable

    from handler.testing import TestAnswer
    from tests.conftest import EventBuilder, LogCapture

# The calls go to the sample tools (tests/sample_tools/).
pytestmark = pytest.mark.usefixtures("sample_tools")

BODY = call_body("ticketStatus", {"ticketNumber": "TCK-1042"}, callId="call_1")


@pytest.fixture(autouse=True)
def _key(key_in_secrets_manager: str) -> None:
    """Every request here is checked against TEST_KEY, held in moto's Secrets Manager."""


@pytest.fixture
def no_usable_key(monkeypatch: pytest.MonkeyPatch, secret_name: str) -> None:
    """The secret named does not exist: any check that needs the key ends in 500 no_key."""
    monkeypatch.setenv(KEY_SECRET_ENV, secret_name)
    monkeypatch.delenv(DEV_KEY_ENV, raising=False)


@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "put", "TRACE"])
def test_other_methods_get_405_with_allow_before_anything_else(
    shape: str,
    method: str,
    no_usable_key: None,
    make_event: EventBuilder,
    invoke: Callable[..., TestAnswer],
) -> None:
    # GIVEN an unsigned request of another method, with a body over the size cap, and no usable key
    event = make_event(shape, method, b"x" * (MAX_BODY_BYTES + 1), key=None)
    # WHEN it arrives
    answer = invoke(event)
    # THEN 405 with Allow: GET, POST: nothing else (size, signature, key) was looked at
    assert answer.status == 405
    assert answer.headers["Allow"] == "GET, POST"
    assert answer.headers["Content-Type"] == "application/json"
    assert answer.body["error"]["code"] == "method_not_allowed"


def _refused(answer: TestAnswer, reason: str, *, post: bool) -> None:
    assert answer.status == 401
    assert answer.headers["Content-Type"] == "application/json"
    error = answer.body["error"]
    assert error["code"] == "unauthorized"
    assert error["message"].startswith(f"{reason}: ")
    assert ("version" in answer.body) is post
    if post:
        assert (answer.body["version"], answer.body["ok"]) == (1, False)


@pytest.mark.parametrize(
    "header",
    [None, "", "   "],
    ids=["absent", "empty", "blank"],
)
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_missing_signature_is_401_missing(
    shape: str, method: str, header: str | None, make_event: EventBuilder, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN a request with no signature, or an empty one
    body = BODY if method == "POST" else b""
    event = make_event(shape, method, body, key=None, headers=None if header is None else {"median-signature": header})
    # WHEN it arrives
    # THEN 401, reason missing
    _refused(invoke(event), "missing", post=method == "POST")


def _malformed_headers() -> list[object]:
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
def test_a_malformed_signature_is_401_malformed(
    shape: str, header: str, make_event: EventBuilder, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN a signed-looking POST whose header is malformed
    event = make_event(shape, "POST", BODY, key=None, headers={"median-signature": header})
    # WHEN it arrives
    # THEN 401, reason malformed
    _refused(invoke(event), "malformed", post=True)


@pytest.mark.parametrize(
    "offset", [-301, 301, -86_400, 10**9], ids=["301s old", "301s ahead", "a day old", "far future"]
)
def test_a_stale_signature_is_401_stale(
    shape: str, offset: int, make_event: EventBuilder, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN a request correctly signed with the right key, but at a time more than 300 s from now
    event = make_event(shape, "POST", BODY, timestamp=int(time.time()) + offset)
    # WHEN it arrives
    # THEN 401, reason stale
    _refused(invoke(event), "stale", post=True)


def test_a_timestamp_of_hundreds_of_digits_is_401_stale(
    shape: str, make_event: EventBuilder, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN a header whose t has 400 digits
    event = make_event(shape, "GET", key=None, headers={"median-signature": f"t={'1' * 400},v1={'a' * 64}"})
    # WHEN it arrives
    # THEN 401 stale, not a crash
    _refused(invoke(event), "stale", post=False)


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_signature_from_another_key_is_401_mismatch(
    shape: str, method: str, make_event: EventBuilder, invoke: Callable[..., TestAnswer], logs: LogCapture
) -> None:
    # GIVEN a fresh, well-formed signature made with a different key
    body = BODY if method == "POST" else b""
    event = make_event(shape, method, body, key="mk_live_someone_else")
    # WHEN it arrives
    answer = invoke(event)
    # THEN 401 mismatch, and the log says why without the signature
    _refused(answer, "mismatch", post=method == "POST")
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


def test_header_shape_and_age_are_checked_before_the_key(
    shape: str, no_usable_key: None, make_event: EventBuilder, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN no usable key, and requests that are unsigned, malformed or stale
    unsigned = make_event(shape, "POST", BODY, key=None)
    malformed = make_event(shape, "POST", BODY, key=None, headers={"median-signature": "t=1"})
    stale = make_event(shape, "POST", BODY, timestamp=int(time.time()) - 3600)
    # WHEN they arrive
    # THEN each is 401 for its own reason, not 500: none of these checks needs the key
    _refused(invoke(unsigned), "missing", post=True)
    _refused(invoke(malformed), "malformed", post=True)
    _refused(invoke(stale), "stale", post=True)


def test_the_key_is_checked_before_the_signature_is_compared(
    shape: str, no_usable_key: None, make_event: EventBuilder, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN no usable key, and a fresh well-formed signature (right or wrong cannot be told)
    event = make_event(shape, "POST", BODY, key="mk_live_any")
    # WHEN it arrives
    answer = invoke(event)
    # THEN 500 no_key, not 401
    assert answer.status == 500
    assert answer.body["error"]["code"] == "no_key"


def test_a_bad_body_behind_a_bad_signature_is_401_not_400(
    shape: str, make_event: EventBuilder, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN a body that is not JSON, with a wrong signature
    event = make_event(shape, "POST", b"{not json", key="mk_live_someone_else")
    # WHEN it arrives
    # THEN 401: the body is read only after the signature matches
    _refused(invoke(event), "mismatch", post=True)
