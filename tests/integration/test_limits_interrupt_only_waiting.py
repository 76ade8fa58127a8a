"""A time limit interrupts a call only while it waits on the network, never while its code computes.

Past the time for its outbound calls, a tool's waits on the network are cut short with its
library's own timeout error (tests/integration/test_whole_call_limits.py). What must not be cut is
a tool whose calls have all come back and which goes on computing, in its own code or in a network
library's pure code (urllib.parse, http.cookies, http.client's header parsing, requests' URL
helpers, boto3's DynamoDB types, json): its write is done, and its answer is its own. Were it
interrupted there, it would answer 504, its idempotency record would be released, and Median's
retry would run the write again. The same holds for an AWS call's own limit: an answer that has
come back is never lost to it while botocore goes on with it.

Every server here is real, on loopback: a ledger that counts the writes it takes, answering at
once, and the fault relay (tests/fault_relay.py) in front of it when it must trickle.
"""

from __future__ import annotations

import http.client
import http.cookies
import io
import json
import urllib.parse
import urllib.request
import uuid
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda import tool
from median_lambda.authoring.api import ToolContext  # noqa: TC002 - @tool reads the annotation at run time
from median_lambda.testing import FakeLambdaContext, call_body, signed_event
from pydantic import BaseModel

from tests.fault_relay import FaultRelay

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from median_lambda.authoring.registry import Registry
    from median_lambda.testing import MedianAWS, MedianTestClient, TestAnswer

    from tests.support.ledger import Ledger

# A short function: the tool has about two seconds, its outbound calls half a second less.
FUNCTION_SECONDS = 4.0
# How long the tool computes on past the time for its outbound calls (TOOL_MARGIN_SECONDS, 0.5 s,
# before its own deadline): well past it, and well before its own deadline.
COMPUTES_UNTIL_SECONDS_LEFT = 0.25
TRICKLE_SECONDS = 0.2


class RefundInput(BaseModel):
    order: str = "O-1"


# What a tool computes once its call has come back, each in a network library's code or json's.
_QUERY = "&".join(f"item{i}=refund%20line%20{i}" for i in range(400))
_COOKIES = "; ".join(f"session{i}=value{i}" for i in range(100))
_HEADERS = b"".join(f"X-Line-{i}: value {i}\r\n".encode() for i in range(90)) + b"\r\n"
_URI = "https://carrier.example/" + "/".join(f"parcel%20{i}" for i in range(400))
_ITEM = {"M": {f"line{i}": {"N": str(i)} for i in range(300)}}
_DOCUMENT = {"lines": [{"line": i, "note": "refund line"} for i in range(300)]}


def _in_urllib_parse() -> None:
    urllib.parse.parse_qsl(_QUERY)


def _in_http_cookies() -> None:
    http.cookies.SimpleCookie(_COOKIES)


def _in_http_client() -> None:
    http.client.parse_headers(io.BytesIO(_HEADERS))


def _in_requests() -> None:
    import requests.utils

    requests.utils.requote_uri(_URI)


def _in_boto3() -> None:
    from boto3.dynamodb.types import TypeDeserializer

    TypeDeserializer().deserialize(_ITEM)


def _in_json() -> None:
    json.loads(json.dumps(_DOCUMENT))


COMPUTATIONS: dict[str, Callable[[], None]] = {
    "urllib.parse": _in_urllib_parse,
    "http.cookies": _in_http_cookies,
    "http.client": _in_http_client,
    "requests": _in_requests,
    "boto3.dynamodb.types": _in_boto3,
    "json": _in_json,
}


def compute_past_the_outbound_time(ctx: ToolContext, compute: Callable[[], None]) -> int:
    """Compute until the time for outbound calls is well past, and the tool's own deadline is not near."""
    rounds = 0
    while (ctx.remaining_seconds() or 0.0) > COMPUTES_UNTIL_SECONDS_LEFT:
        compute()
        rounds += 1
    return rounds


def post_refund(url: str, ctx: ToolContext) -> dict[str, Any]:
    request = urllib.request.Request(url, data=b'{"order": "O-1"}', method="POST")  # noqa: S310 - the test's own server
    with urllib.request.urlopen(request, timeout=ctx.http_timeout()) as response:  # noqa: S310 - as above
        answer: dict[str, Any] = json.loads(response.read())
        return answer


def called(client: MedianTestClient, tool_name: str, call_id: str) -> tuple[TestAnswer, int]:
    """The tool called as Median calls it (a callId, through the idempotency table), and the time left
    before Lambda's deadline when its answer came back."""
    body = call_body(tool_name, {}, callId=call_id)
    context = FakeLambdaContext(timeout_seconds=FUNCTION_SECONDS)
    answer = client.send(signed_event("POST", body, key=client.key), context)
    return answer, context.get_remaining_time_in_millis()


def called_then_retried(client: MedianTestClient, tool_name: str) -> tuple[TestAnswer, int, TestAnswer]:
    """`called`, then that call retried, as Median retries a call whose answer it lost."""
    call_id = f"call_{uuid.uuid4().hex}"
    first, left = called(client, tool_name, call_id)
    retried, _ = called(client, tool_name, call_id)
    return first, left, retried


@pytest.mark.parametrize("library", list(COMPUTATIONS))
def test_a_tool_computing_past_its_outbound_time_after_its_write_gets_its_answer_and_writes_once(
    ledger: Ledger, scratch_registry: Registry, client: MedianTestClient, idempotency_table: str, library: str
) -> None:
    # GIVEN a tool whose one write is answered at once, and which then computes in `library`'s code,
    # past the time its outbound calls had, catching nothing
    compute = COMPUTATIONS[library]

    @tool(risk="high")
    def refund_and_summarise(args: RefundInput, ctx: ToolContext) -> dict[str, Any]:
        """Record a refund, then summarise it."""
        refund = post_refund(ledger.url, ctx)
        return {"refund": refund["refund"], "rounds": compute_past_the_outbound_time(ctx, compute) > 0}

    # WHEN Median calls it, and retries the call
    first, left, retried = called_then_retried(client, "refundAndSummarise")
    # THEN its own code was not interrupted: it answered its output, before the deadline
    assert first.status == 200, first.body
    assert first.body["output"] == {"refund": "R-1", "rounds": True}
    assert left > 0
    # AND the retry got that answer from its record: the write ran once
    assert (retried.status, retried.body) == (200, first.body)
    assert ledger.writes == 1


@pytest.fixture
def refunds_table(median_aws: MedianAWS, idempotency_table: str) -> str:
    name = f"refunds-{uuid.uuid4().hex[:8]}"
    median_aws.client("dynamodb").create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "order", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "order", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    return name


def test_an_aws_write_whose_answer_came_is_not_lost_to_its_calls_limit_while_botocore_goes_on(
    refunds_table: str, median_aws: MedianAWS, scratch_registry: Registry, client: MedianTestClient
) -> None:
    # GIVEN a tool whose DynamoDB write is answered at once, and botocore, with the answer in hand, working on
    # past the time that call had (a handler of the client's own events, botocore's public hook, computing in
    # boto3's code, as a slow parse of a large answer would)
    @tool(risk="high")
    def refund_in_table(args: RefundInput, ctx: ToolContext) -> dict[str, Any]:
        """Record a refund in the refunds table."""
        table = ctx.aws_client("dynamodb")

        def after_the_answer(**_: Any) -> None:
            compute_past_the_outbound_time(ctx, _in_boto3)

        table.meta.events.register(
            "needs-retry.dynamodb.UpdateItem", after_the_answer, unique_id="test-after-the-answer"
        )
        table.update_item(
            TableName=refunds_table,
            Key={"order": {"S": args.order}},
            UpdateExpression="ADD writes :one",
            ExpressionAttributeValues={":one": {"N": "1"}},
        )
        return {"recorded": True}

    # WHEN Median calls it, and retries the call
    first, left, retried = called_then_retried(client, "refundInTable")
    # THEN the call's answer was kept: the tool answered its output, before the deadline
    assert first.status == 200, first.body
    assert first.body["output"] == {"recorded": True}
    assert left > 0
    # AND the retry got that answer: the write ran once
    assert (retried.status, retried.body) == (200, first.body)
    row = median_aws.client("dynamodb").get_item(TableName=refunds_table, Key={"order": {"S": "O-1"}})
    assert row["Item"]["writes"] == {"N": "1"}


@pytest.fixture
def trickling_ledger(ledger: Ledger) -> Iterator[str]:
    """The ledger's URL behind a relay that sends its answers back a byte every TRICKLE_SECONDS."""
    with FaultRelay("127.0.0.1", ledger.server_address[1]) as relay:
        relay.trickle(every_seconds=TRICKLE_SECONDS)
        yield relay.endpoint + "/refunds"


def test_the_same_tool_whose_write_is_answered_a_byte_at_a_time_is_still_cut_short_in_time(
    trickling_ledger: str, scratch_registry: Registry, client: MedianTestClient, idempotency_table: str
) -> None:
    # GIVEN the tool above, its write's answer trickling back, each byte well within its read timeout
    @tool(risk="high")
    def refund_and_summarise(args: RefundInput, ctx: ToolContext) -> dict[str, Any]:
        """Record a refund, then summarise it."""
        refund = post_refund(trickling_ledger, ctx)
        return {"refund": refund["refund"], "rounds": compute_past_the_outbound_time(ctx, _in_urllib_parse) > 0}

    # WHEN Median calls it
    answer, left = called(client, "refundAndSummarise", f"call_{uuid.uuid4().hex}")
    # THEN its wait was cut short at its time, and answered as what it is, a timeout whose work is in doubt
    assert answer.status == 504, answer.body
    assert answer.body["error"]["code"] == "timeout"
    assert left > 0
