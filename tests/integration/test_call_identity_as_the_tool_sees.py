"""A callId's identity sees exactly what its tool sees: a retry with another number never gets another call's result.

An integer field takes a whole number written as a float as the exact integer it names
(median_lambda/calls/whole_numbers.py): 9007199254740993.0 is 9007199254740993 to the tool. Past 2**53
a double stands for several integers, so an identity that hashed the double would take a retry
with 9007199254740992.0 for the same call and answer it with the first call's result, though the
tool would have refunded another amount. Through the idempotency table on moto, as deployed.

Records already stored when this rule is deployed: every call's identity is what it was, but for
those whole floats past 2**53 in an integer field, so a record stored before still answers its
retries; one stored before for such a call cannot be told from its neighbours, and is answered
409, never replayed nor run again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from median_lambda import ToolContext, tool
from median_lambda.calls.dispatch import parse_body
from median_lambda.calls.idempotency import at_most_once
from median_lambda.request.responses import Answer, ok_body
from median_lambda.testing import FakeLambdaContext, signed_event
from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from median_lambda.authoring.registry import Registry
    from median_lambda.testing import MedianTestClient, TestAnswer

pytestmark = pytest.mark.usefixtures("idempotency_table")


class RefundInput(BaseModel):
    cents: int = Field(description="The refund, in cents.")


@pytest.fixture
def refunds(scratch_registry: Registry) -> list[int]:
    """refundCents: records each refund it makes, and answers with it."""
    made: list[int] = []

    @tool(risk="high", name="refundCents")
    def refund_cents(args: RefundInput, ctx: ToolContext) -> dict[str, Any]:
        """Refund the customer."""
        made.append(args.cents)
        return {"refunded": args.cents}

    return made


def _body(cents: str, call_id: str) -> bytes:
    """A refundCents call whose `cents` is exactly this JSON text, as a model wrote it."""
    return f'{{"version":1,"op":"call","tool":"refundCents","callId":"{call_id}","input":{{"cents":{cents}}}}}'.encode()


def send(client: MedianTestClient, cents: str, call_id: str) -> TestAnswer:
    return client.send(signed_event("POST", _body(cents, call_id), key=client.key))


def test_a_retry_with_another_integer_past_2_53_is_refused_not_answered_with_the_first_refund(
    client: MedianTestClient, refunds: list[int]
) -> None:
    # GIVEN a refund of 9007199254740993 cents, written as a float, made once
    first = send(client, "9007199254740993.0", "call_big")
    assert first.body["output"] == {"refunded": 9007199254740993}
    # WHEN the callId comes again with 9007199254740992.0, the same double, another integer to the tool
    other = send(client, "9007199254740992.0", "call_big")
    # THEN it is refused as another call, not answered with the first's result; nothing more was refunded
    assert other.status == 409, other.body
    assert other.body["error"]["code"] == "call_id_reused"
    assert refunds == [9007199254740993]


@pytest.mark.parametrize(
    "again",
    [
        pytest.param("9007199254740993.0", id="as it was written"),
        pytest.param("9007199254740993", id="as the integer the tool got"),
        pytest.param("9.007199254740993e15", id="with an exponent"),
    ],
)
def test_a_retry_of_the_same_integer_past_2_53_is_answered_from_the_record(
    client: MedianTestClient, refunds: list[int], again: str
) -> None:
    # GIVEN a refund of 9007199254740993 cents, written as a float, made once
    first = send(client, "9007199254740993.0", "call_same")
    # WHEN it is retried with that integer, however written
    retry = send(client, again, "call_same")
    # THEN the retry gets the first answer, and the refund was made once
    assert retry.status == 200, retry.body
    assert retry.body == first.body
    assert refunds == [9007199254740993]


@pytest.mark.parametrize(
    ("written", "retried"),
    [
        pytest.param("25.0", "25.0", id="25.0"),
        pytest.param("-0.0", "-0.0", id="-0.0"),
        pytest.param("1e2", "1e2", id="1e2"),
        pytest.param("9007199254740991", "9007199254740991", id="an integer literal"),
    ],
)
def test_a_record_stored_before_this_rule_still_answers_its_retry(
    client: MedianTestClient, refunds: list[int], written: str, retried: str
) -> None:
    # GIVEN a call recorded as the earlier version recorded it: its identity over the input as parsed
    document = parse_body(_body(written, "call_before"))
    recorded = Answer(200, ok_body({"refunded": "as recorded before"}))
    ctx = ToolContext(call_id="call_before", request_id="before", lambda_context=FakeLambdaContext())
    assert at_most_once("refundCents", document["input"], ctx, lambda: recorded) == recorded
    # WHEN its retry arrives after the deploy
    retry = send(client, retried, "call_before")
    # THEN it is answered from that record, and the tool does not run
    assert retry.status == 200, retry.body
    assert retry.body["output"] == {"refunded": "as recorded before"}
    assert refunds == []


@pytest.mark.parametrize("retried", ["9007199254740992.0", "9007199254740993.0"])
def test_a_record_stored_before_for_a_number_a_double_cannot_tell_is_refused_never_replayed(
    client: MedianTestClient, refunds: list[int], retried: str
) -> None:
    # GIVEN a refund of 9007199254740993.0 recorded by the earlier version, whose identity held its double
    document = parse_body(_body("9007199254740993.0", "call_ambiguous"))
    recorded = Answer(200, ok_body({"refunded": 9007199254740993}))
    ctx = ToolContext(call_id="call_ambiguous", request_id="before", lambda_context=FakeLambdaContext())
    at_most_once("refundCents", document["input"], ctx, lambda: recorded)
    # WHEN a retry arrives after the deploy, with that number or its neighbour
    retry = send(client, retried, "call_ambiguous")
    # THEN which integer the record was for cannot be known: refused, neither replayed nor run
    assert retry.status == 409, retry.body
    assert retry.body["error"]["code"] == "call_id_reused"
    assert refunds == []
