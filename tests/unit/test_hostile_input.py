"""Hostile input, tried by a property-based fuzzer: whatever arrives, the handler answers well and lets no one in.

The property, for every generated request: `lambda_handler` returns (never raises) an
answer with an int status in ALLOWED_STATUSES, `Content-Type: application/json` and a
JSON object body that UTF-8 can carry; no input makes the server fail (`internal_error`);
and it answers 200 only to a request correctly signed with the key. The example budget is the Hypothesis
profile loaded in tests/conftest.py.
"""

from __future__ import annotations

import base64
import json
import string
import time
from typing import Any

import pytest
from hypothesis import currently_in_test_context, event, example, given
from hypothesis import strategies as st
from median_lambda.app import lambda_handler
from median_lambda.protocol import MAX_BODY_BYTES, MAX_NESTING_DEPTH, SIGNATURE_HEADER
from median_lambda.request.signature import compute_signature, sign
from median_lambda.testing import TEST_KEY, FakeLambdaContext, call_body, dev_key, http_event, signed_event

from tests.conftest import BOTH, SHAPES, build_event

# Every request may reach a tool: the sample tools (tests/sample_tools/) are served.
pytestmark = pytest.mark.usefixtures("sample_tools")

# 504 is left out: no generated request reaches a tool slow enough to time out.
ALLOWED_STATUSES = {200, 400, 401, 404, 405, 409, 413, 422, 500}
FORGED_KEY = "mk_forged_0123456789abcdef"
# A read-only sample tool: a generated call may reach it without changing the sample desk.
LOOKUP_BODY = call_body("ticketStatus", {"ticketNumber": "TCK-1042"}, callId="call_fuzz")


def serve(incoming: Any) -> dict[str, Any]:
    """The handler's answer, checked against the property's shape before anything else is asserted."""
    with dev_key(TEST_KEY):
        response = lambda_handler(incoming, FakeLambdaContext())  # type: ignore[arg-type]
    assert isinstance(response, dict)
    status = response["statusCode"]
    assert type(status) is int and status in ALLOWED_STATUSES, status
    if currently_in_test_context():
        event(f"status {status}")  # `pytest --hypothesis-show-statistics` shows what the fuzzer reached
    assert response["headers"]["Content-Type"] == "application/json"
    response["body"].encode("utf-8")  # text UTF-8 can carry: no lone surrogate, whatever came in
    body = json.loads(response["body"])
    assert isinstance(body, dict)
    if status != 200:
        assert isinstance(body["error"]["code"], str) and isinstance(body["error"]["message"], str)
        assert body["error"]["code"] != "internal_error", body
    return response


# --- the signature header ----------------------------------------------------------
hex_64 = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
huge_number = st.integers(min_value=16, max_value=400).flatmap(lambda n: st.text(alphabet=string.digits, min_size=n))
header_items = st.one_of(
    st.builds(lambda t: f"t={t}", st.integers(min_value=-(10**20), max_value=10**20)),
    huge_number.map(lambda digits: f"t={digits}"),
    hex_64.map(lambda value: f"v1={value}"),
    st.text(max_size=80).map(lambda value: f"v1={value}"),
    st.text(max_size=80).map(lambda value: f"t={value}"),
    st.text(max_size=20).map(lambda value: f"v0={value}"),
    st.sampled_from(["", "=", ",", " ", "t", "v1", "t=", "v1=", "\x00", "t=\u0661\u0662\u0663", "v1=\uff21\uff22"]),
    st.text(max_size=80),
)


@st.composite
def signature_headers(draw: st.DrawFn, body: bytes) -> tuple[str, bool]:
    """A header value for `body`, and whether it carries the body's correct signature under the key."""
    shape = draw(st.sampled_from(["items", "text", "commas", "thousands of v1"]))
    if shape == "text":
        return draw(st.text(max_size=2_000)), False
    if shape == "commas":
        return "," * draw(st.integers(min_value=0, max_value=20_000)), False
    now = int(time.time())
    if shape == "thousands of v1":
        randomness = draw(st.randoms(use_true_random=False))
        count = draw(st.integers(min_value=1_000, max_value=5_000))
        items = [f"t={now}"] + [f"v1={randomness.getrandbits(256):064x}" for _ in range(count)]
    else:
        # A fresh t among the items, often, so that the v1 entries are compared and not refused as stale.
        items = draw(st.lists(header_items | st.just(f"t={now}"), max_size=40))
    correct = draw(st.booleans())
    if correct:
        items.insert(draw(st.integers(0, len(items))), f"v1={compute_signature(TEST_KEY, now, body)}")
        if shape == "items":
            items.insert(draw(st.integers(0, len(items))), f"t={now}")
    separator = draw(st.sampled_from([",", ", ", " ,"]))
    return separator.join(items), correct


@given(data=st.data(), method=st.sampled_from(["GET", "POST"]))
def test_any_signature_header_gets_a_well_formed_answer_and_only_a_correct_one_gets_200(
    data: st.DataObject, method: str
) -> None:
    # GIVEN any header value, on a GET or on a POST calling a read-only tool
    body = b"" if method == "GET" else LOOKUP_BODY
    header, correct = data.draw(signature_headers(body))
    # WHEN it arrives
    response = serve(http_event(method, body, headers={SIGNATURE_HEADER: header}))
    # THEN the answer is well formed, and 200 only if the header carried the correct signature
    assert response["statusCode"] != 200 or correct


def test_the_correct_signature_among_thousands_of_entries_is_found() -> None:
    # GIVEN a header with 5,000 wrong v1 entries and the right one last
    now = int(time.time())
    wrong = ",".join(f"v1={'0' * 63}{i % 10}" for i in range(5_000))
    header = f"t={now},{wrong},v1={compute_signature(TEST_KEY, now, LOOKUP_BODY)}"
    # WHEN it arrives
    response = serve(http_event("POST", LOOKUP_BODY, headers={SIGNATURE_HEADER: header}))
    # THEN it is served: the fuzzer's "only correct gets 200" is not met by refusing everything
    assert response["statusCode"] == 200


# --- the event's shape -----------------------------------------------------------------
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=50),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=20,
)
EVENT_KEYS = ["headers", "multiValueHeaders", "body", "isBase64Encoded", "requestContext", "httpMethod", "version"]


@st.composite
def mutated_events(draw: st.DrawFn) -> tuple[Any, bool]:
    """A captured API Gateway or Function URL event (tests/events), bent out of shape; and whether it was signed."""
    method = draw(st.sampled_from(["GET", "POST", "PUT", "OPTIONS"]))
    body = b"" if method == "GET" else LOOKUP_BODY
    signed = draw(st.booleans())
    event: Any = build_event(
        draw(st.sampled_from(SHAPES)),
        method,
        body,
        key=TEST_KEY if signed else FORGED_KEY,
        base64_body=draw(st.booleans()),
    )
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        mutation = draw(
            st.sampled_from(
                ["drop key", "replace key", "null header", "odd header", "null body", "bad base64", "version", "method"]
            )
        )
        if mutation == "drop key":
            event.pop(draw(st.sampled_from(EVENT_KEYS)), None)
        elif mutation == "replace key":
            event[draw(st.sampled_from(EVENT_KEYS))] = draw(json_values)
        elif mutation in ("null header", "odd header") and isinstance(event.get("headers"), dict):
            name = draw(st.sampled_from([*event["headers"], SIGNATURE_HEADER, "Median-Signature", "x-other"]))
            event["headers"][name] = None if mutation == "null header" else draw(json_values)
        elif mutation == "null body":
            event["body"] = None
        elif mutation == "bad base64":
            event["isBase64Encoded"] = True
            event["body"] = draw(st.sampled_from(["!!!!", "abc", "ab=c", "====", "é", "YQ", "YWJj\n"]))
        elif mutation == "version":
            event["version"] = draw(st.sampled_from(["3.0", "0.9", "", "2.0 ", "v2"]) | json_values)
        elif mutation == "method" and isinstance(event.get("requestContext"), dict):
            event["requestContext"]["http"] = {"method": draw(st.text(max_size=10) | json_values)}
    wrap = draw(st.sampled_from(["as is", "as is", "as is", "not an object"]))
    return (event if wrap == "as is" else draw(json_values)), signed


@given(case=mutated_events())
@example(case=(None, False))
@example(case=([], False))
@example(case=({}, False))
def test_any_event_shape_gets_a_well_formed_answer_and_no_forged_one_gets_200(case: tuple[Any, bool]) -> None:
    # GIVEN an event with missing or odd parts, signed with the key or a forged one
    event, signed = case
    # WHEN it arrives
    response = serve(event)
    # THEN the answer is well formed, and a forged event is never served
    assert response["statusCode"] != 200 or signed


# --- the POST body ---------------------------------------------------------------
def deep(depth: int, opening: bytes, closing: bytes) -> bytes:
    return opening * depth + b"1" + closing * depth


odd_numbers = st.sampled_from(
    [b"1e400", b"-1e400", b"NaN", b"Infinity", b"-Infinity", b"1" * 5_000, b"-0", b"1e-400", b"0.1e99999"]
)
odd_documents = st.one_of(
    st.integers(min_value=1, max_value=200_000).map(lambda n: deep(n, b"[", b"]")),
    st.integers(min_value=1, max_value=200_000).map(lambda n: deep(n, b'{"a":', b"}")),
    st.integers(min_value=1, max_value=2_000).map(lambda n: deep(n, b'{"version":1,"op":"call","input":', b"}")),
    # A call that reaches its tool (and the idempotency table, as deployed), its conversation
    # nested about the limit, around a whole float the parser keeps with its literal.
    st.integers(min_value=1, max_value=2 * MAX_NESTING_DEPTH).map(
        lambda n: (
            b'{"version":1,"op":"call","tool":"ticketStatus","callId":"call_deep",'
            b'"input":{"ticketNumber":"TCK-1042"},"conversation":'
            + deep(n, b'{"a":[', b"]}").replace(b"1", b"1.0")
            + b"}"
        )
    ),
    odd_numbers.map(lambda number: b'{"version":' + number + b',"op":"call","tool":"ticketStatus"}'),
    odd_numbers.map(
        lambda number: b'{"version":1,"op":"call","tool":"ticketStatus","input":{"ticketNumber":' + number + b"}}"
    ),
    st.just(b'{"version":1,"version":1,"op":"call","tool":"ticketStatus","input":{"ticketNumber":"TCK-1042"}}'),
    st.just(b'{"version":1,"op":"call","tool":"ticketStatus","input":{"ticketNumber":"TCK-1042","ticketNumber":"x"}}'),
    st.integers(min_value=0, max_value=MAX_BODY_BYTES).map(
        lambda n: b'{"version":1,"op":"call","tool":"ticketStatus","input":{"ticketNumber":"' + b"x" * n + b'"}}'
    ),
    st.binary(max_size=500),
    st.sampled_from([b"\xff\xfe", b"\xc3\x28", b'{"a":"\xed\xa0\x80"}', b"\x00", b"", b"null", b"[]", b'"x"', b"1"]),
)
documents = st.fixed_dictionaries(
    {},
    optional={
        "version": st.sampled_from([1, 1, 1, 2, 0, "1", True, 1.0, None]) | json_values,
        "op": st.sampled_from(["call", "call", "diagnostics", "", "CALL"]) | json_values,
        "tool": st.sampled_from(["ticketStatus", "ticketStatus", "noSuchTool", "", "__init__"]) | json_values,
        "input": st.fixed_dictionaries({}, optional={"ticketNumber": json_values, "extra": json_values}) | json_values,
        "callId": st.text(max_size=64) | json_values,
        "conversation": json_values,
    },
)


@given(
    body=st.one_of(odd_documents, documents.map(lambda document: json.dumps(document).encode())),
    base64_body=st.booleans(),
)
@pytest.mark.parametrize("configuration", BOTH, indirect=True)  # with the idempotency table, and without
@pytest.mark.usefixtures("configuration")
def test_any_signed_body_gets_a_well_formed_answer(body: bytes, base64_body: bool) -> None:
    # GIVEN any body, correctly signed, sent as text where it can be and as base64 otherwise
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        base64_body = True
    # WHEN it arrives
    response = serve(signed_event("POST", body, base64_body=base64_body))
    # THEN the answer is well formed, and a body over the cap is refused as too large
    if len(body) > MAX_BODY_BYTES:
        assert response["statusCode"] == 413


@given(signed_body=st.binary(max_size=200), sent_body=st.binary(max_size=200))
def test_a_body_other_than_the_one_signed_is_never_served(signed_body: bytes, sent_body: bytes) -> None:
    # GIVEN a signature made for one body, sent with another
    event = http_event("POST", headers={SIGNATURE_HEADER: sign(TEST_KEY, signed_body)})
    event["body"] = base64.b64encode(sent_body).decode("ascii")
    event["isBase64Encoded"] = True
    # WHEN it arrives
    response = serve(event)
    # THEN it is refused, unless the two bodies are the same bytes
    assert response["statusCode"] != 200 or signed_body == sent_body
