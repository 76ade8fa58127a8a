"""A failed save of a tool's answer when the time kept for it is used up: no second try, and a log line that says so.

The tool runs until little of its time is left; the table then loses the save (a read timeout,
which takes the whole of the time kept for it). Another try would outlast the Lambda, so the
answer is sent unrecorded, and the log says what a retry will meet and when the mark lapses.
"""

from __future__ import annotations

import datetime
import time
from typing import TYPE_CHECKING

import pytest
from median_lambda import ToolContext, tool
from median_lambda.calls import idempotency
from median_lambda.calls.dispatch import STORE_CALL_SECONDS
from median_lambda.protocol import IDEMPOTENCY_MAX_RECORDED_ANSWER_BYTES, TOOL_TIME_MARGIN_SECONDS
from median_lambda.testing import FakeLambdaContext, call_body, signed_event

from tests.fault_relay import Fault
from tests.scratch_tools import NoteInput  # noqa: TC001 - @tool reads the annotation when it runs

if TYPE_CHECKING:
    from median_lambda.testing import MedianTestClient

    from tests.conftest import LogCapture
    from tests.fault_relay import FaultRelay
    from tests.scratch_tools import ScratchTools

# Enough for the in-progress write and the input's validation, and a second of the tool's own.
LAMBDA_SECONDS = TOOL_TIME_MARGIN_SECONDS + 2 * STORE_CALL_SECONDS + 1.0
# What the tool leaves of its time: less than a lost save takes, more than a sleep overshoots.
LEFT_SECONDS = 0.3


@pytest.fixture
def relay(fault_relay: FaultRelay, idempotency_table: str, clean_env: pytest.MonkeyPatch) -> FaultRelay:
    clean_env.setenv("AWS_ENDPOINT_URL_DYNAMODB", fault_relay.endpoint)
    clean_env.setattr(idempotency, "_clients", [])
    clean_env.setattr(idempotency, "_stores", {})
    return fault_relay


def test_a_save_lost_with_no_time_left_is_not_tried_again_and_says_when_the_mark_lapses(
    client: MedianTestClient, scratch: ScratchTools, relay: FaultRelay, logs: LogCapture
) -> None:
    # GIVEN a tool that works until LEFT_SECONDS of its time remain, then the table loses requests
    @tool(risk="high", name="refundUntilTheEnd")
    def refund_until_the_end(args: NoteInput, ctx: ToolContext) -> dict[str, object]:
        """Refund, using nearly all the time there is."""
        remaining = ctx.remaining_seconds()
        assert remaining is not None
        time.sleep(max(0.0, remaining - LEFT_SECONDS))
        relay.fail(Fault.SWALLOW)
        return {"refunded": args.note}

    # WHEN it is called
    event = signed_event("POST", call_body("refundUntilTheEnd", {"note": "r"}, callId="call_late"), key=client.key)
    called_at = time.time()
    answer = client.send(event, FakeLambdaContext(timeout_seconds=LAMBDA_SECONDS))
    # THEN the tool's answer is sent; the save was not tried again, and the log says so, with the lapse
    assert answer.status == 200
    assert answer.body["output"] == {"refunded": "r"}
    assert not [r for r in logs.records() if r["message"] == "The answer was recorded on a second try"]
    [unrecorded] = [r for r in logs.records() if r["message"].startswith("The answer is not recorded")]
    assert (unrecorded["call_id"], unrecorded["tool"]) == ("call_late", "refundUntilTheEnd")
    assert "error_type" not in unrecorded  # no second try, so no second failure to describe
    # the lapse is the invocation's end, in UTC to the second: after the call began, by the Lambda's timeout at most
    lapses_at = datetime.datetime.strptime(unrecorded["lapses_at"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC)
    assert int(called_at) <= lapses_at.timestamp() <= called_at + LAMBDA_SECONDS


def test_a_save_that_fails_twice_with_time_left_names_the_invocations_end_as_the_lapse(
    client: MedianTestClient, scratch: ScratchTools, relay: FaultRelay, logs: LogCapture
) -> None:
    # GIVEN a Lambda with 30 s, and a tool after which the table refuses every request
    @tool(risk="high", name="refundThenDenied")
    def refund_then_denied(args: NoteInput) -> dict[str, object]:
        """Refund, while the table denies access."""
        relay.answer_with_error("AccessDeniedException", "not authorized")
        return {"refunded": args.note}

    event = signed_event("POST", call_body("refundThenDenied", {"note": "r"}, callId="call_denied"), key=client.key)
    called_at = time.time()
    # WHEN it is called
    answer = client.send(event, FakeLambdaContext(timeout_seconds=30))
    # THEN the answer is sent, and the lapse the log names is the invocation's end, about 30 s on
    assert answer.status == 200
    [unrecorded] = [r for r in logs.records() if r["message"].startswith("The answer is not recorded")]
    lapses_at = datetime.datetime.strptime(unrecorded["lapses_at"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC)
    assert called_at + 20 <= lapses_at.timestamp() <= called_at + 30


def test_a_save_lost_with_under_a_second_left_is_still_tried_again(
    client: MedianTestClient, scratch: ScratchTools, relay: FaultRelay, logs: LogCapture
) -> None:
    # GIVEN a tool that leaves a little over half a second of its time, after which the table refuses one request
    @tool(risk="high", name="refundNearTheEnd")
    def refund_near_the_end(args: NoteInput, ctx: ToolContext) -> dict[str, object]:
        """Refund, leaving a moment for the answer's save."""
        remaining = ctx.remaining_seconds()
        assert remaining is not None
        time.sleep(max(0.0, remaining - 0.6))
        relay.answer_with_error("ThrottlingException", "Rate exceeded", times=1)
        return {"refunded": args.note}

    # WHEN it is called, and the answer's first save is refused at once
    event = signed_event("POST", call_body("refundNearTheEnd", {"note": "r"}, callId="call_near"), key=client.key)
    answer = client.send(event, FakeLambdaContext(timeout_seconds=LAMBDA_SECONDS))
    # THEN the time still there is used for a second save, which lands: a retry will get this answer
    assert answer.status == 200
    [saved] = [r for r in logs.records() if r["message"] == "The answer was recorded on a second try"]
    assert (saved["call_id"], saved["tool"]) == ("call_near", "refundNearTheEnd")
    assert not [r for r in logs.records() if r["message"].startswith("The answer is not recorded")]


def test_an_answer_too_large_to_record_whose_save_is_refused_is_recorded_on_the_second_try_as_a_500(
    client: MedianTestClient, scratch: ScratchTools, relay: FaultRelay, logs: LogCapture
) -> None:
    # GIVEN a tool whose answer is over what a record keeps, after which the table refuses one request
    @tool(risk="high", name="exportThenThrottled")
    def export_then_throttled(args: NoteInput) -> dict[str, object]:
        """Export, while the table throttles the answer's first save."""
        scratch.runs["exportThenThrottled"] += 1
        relay.answer_with_error("ThrottlingException", "Rate exceeded", times=1)
        return {"export": "x" * IDEMPOTENCY_MAX_RECORDED_ANSWER_BYTES}

    event = signed_event("POST", call_body("exportThenThrottled", {"note": "r"}, callId="call_big"), key=client.key)
    context = FakeLambdaContext(timeout_seconds=30)
    # WHEN it is called, its answer's first save is refused, and Median retries the callId
    first = client.send(event, context)
    retry = client.call("exportThenThrottled", {"note": "r"}, callId="call_big")
    # THEN the first call got its answer; the second save kept what a record can: the 500 that says the call ran,
    # and the tool did not run again
    assert first.status == 200
    assert [r["message"] for r in logs.records() if "second try" in r["message"]] == [
        "The answer was recorded on a second try"
    ]
    assert retry.status == 500
    assert retry.body["error"]["message"] == (
        f"This call already ran, but its answer was over the {IDEMPOTENCY_MAX_RECORDED_ANSWER_BYTES:,} bytes kept "
        "for a retry, so it cannot be sent again; the tool will not run again for this callId. "
        f"Reference {context.aws_request_id}."
    )
    assert scratch.runs["exportThenThrottled"] == 1


def test_a_save_that_cannot_reach_the_table_twice_is_logged_by_its_type_and_the_answer_sent(
    client: MedianTestClient, scratch: ScratchTools, relay: FaultRelay, logs: LogCapture
) -> None:
    # GIVEN a Lambda with 30 s, and a tool after which nothing listens where the table was
    @tool(risk="high", name="refundThenUnreachable")
    def refund_then_unreachable(args: NoteInput) -> dict[str, object]:
        """Refund, while the table's address stops answering."""
        relay.close()
        return {"refunded": args.note}

    event = signed_event("POST", call_body("refundThenUnreachable", {"note": "r"}, callId="call_gone"), key=client.key)
    # WHEN it is called, and both saves of its answer find the connection refused: no AWS error, no error code
    answer = client.send(event, FakeLambdaContext(timeout_seconds=30))
    # THEN the answer is sent, and the log names what failed by its type, with no AWS error code to give
    assert answer.status == 200
    assert answer.body["output"] == {"refunded": "r"}
    [unrecorded] = [r for r in logs.records() if r["message"].startswith("The answer is not recorded")]
    assert (unrecorded["call_id"], unrecorded["tool"]) == ("call_gone", "refundThenUnreachable")
    assert unrecorded["error_type"] == unrecorded["cause_type"] == "EndpointConnectionError"
    assert "aws_error_code" not in unrecorded  # a None field is left out of the line
