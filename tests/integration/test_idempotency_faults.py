"""Every way the idempotency table can fail leaves a true answer, met on the wire through the fault relay.

The handler's own boto3 client reaches moto's DynamoDB through tests/fault_relay.py, which
stalls, drops, resets, refuses, or answers throttling and access-denied errors (the JSON
shape DynamoDB documents, which moto's server cannot be made to return) on command. A
test-owned tool sets the fault from inside its run to fail the write after the tool.

What each case answers, and what a retry gets, is the table in median_lambda/calls/idempotency.py.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda import tool
from median_lambda.calls import idempotency
from median_lambda.calls.dispatch import STORE_CALL_SECONDS
from median_lambda.protocol import IDEMPOTENCY_MAX_RECORDED_ANSWER_BYTES, TOOL_TIME_MARGIN_SECONDS
from median_lambda.testing import FakeLambdaContext, call_body, signed_event

from tests.fault_relay import Fault
from tests.scratch_tools import NoteInput  # noqa: TC001 - @tool reads the annotation when it runs

if TYPE_CHECKING:
    from collections.abc import Callable

    from median_lambda.testing import MedianTestClient, TestAnswer

    from tests.conftest import LogCapture
    from tests.fault_relay import FaultRelay
    from tests.scratch_tools import ScratchTools

# In the input and in the output: neither may reach the log.
NOTE = "refund 20 to visitor 7781"

# The shortest function timeout a call through the table is run in: the answer's margin, the
# two table requests' longest time, and half a second for the tool.
SHORT_TIMEOUT_SECONDS = TOOL_TIME_MARGIN_SECONDS + 2 * STORE_CALL_SECONDS + 0.5


@dataclass(frozen=True)
class TableFault:
    """A way the table fails, set on the relay; what botocore raises for it; whether a write still lands."""

    set_on: Callable[[FaultRelay], None]
    cause_types: tuple[str, ...]
    aws_error_code: str | None = None
    write_lands: bool = False


def _answering(code: str, message: str) -> Callable[[FaultRelay], None]:
    return lambda relay: relay.answer_with_error(code, message)


FAULTS = {
    "lost (read timeout)": TableFault(lambda relay: relay.fail(Fault.SWALLOW), ("ReadTimeoutError",)),
    "dropped": TableFault(lambda relay: relay.fail(Fault.DROP), ("ConnectionClosedError",)),
    "reset": TableFault(lambda relay: relay.fail(Fault.RESET), ("ConnectionClosedError",)),
    "dropped after the request": TableFault(
        lambda relay: relay.fail(Fault.DROP_AFTER_REQUEST), ("ConnectionClosedError",), write_lands=True
    ),
    "refused": TableFault(lambda relay: relay.fail(Fault.REFUSE), ("EndpointConnectionError", "ConnectionClosedError")),
    "throttled (provisioned)": TableFault(
        _answering("ProvisionedThroughputExceededException", "The level of configured provisioned throughput ..."),
        ("ProvisionedThroughputExceededException",),
        "ProvisionedThroughputExceededException",
    ),
    "throttled (on demand)": TableFault(
        _answering("ThrottlingException", "Rate of requests exceeds the allowed throughput."),
        ("ThrottlingException",),
        "ThrottlingException",
    ),
    "access denied": TableFault(
        _answering("AccessDeniedException", "User: arn:aws:sts::123456789012:assumed-role/x is not authorized"),
        ("AccessDeniedException",),
        "AccessDeniedException",
    ),
}


@pytest.fixture
def relay(fault_relay: FaultRelay, idempotency_table: str, clean_env: pytest.MonkeyPatch) -> FaultRelay:
    """The idempotency table, reached by the handler only through the relay, from a client made anew
    as in a new container (the handler keeps one client per container)."""
    clean_env.setenv("AWS_ENDPOINT_URL_DYNAMODB", fault_relay.endpoint)
    clean_env.setattr(idempotency, "_clients", [])
    clean_env.setattr(idempotency, "_stores", {})
    return fault_relay


def failures(logs: LogCapture) -> list[dict[str, Any]]:
    return [record for record in logs.records() if record["message"].startswith("The idempotency table failed")]


def assert_no_customer_data(logs: LogCapture) -> None:
    # The log is its JSON lines, records and metrics. Off Lambda, a crash is also explained on stderr
    # for its author, quoting the tool's own message (median_lambda/authoring/local_crash.py); a deployed function
    # prints no such thing (tests/integration/test_deployed_logs_hold_no_secrets.py).
    log = [line for line in logs.lines() if line.startswith("{")]
    assert log
    assert not [line for line in log if NOTE in line]


def call(
    client: MedianTestClient, tool_name: str, call_id: str, context: FakeLambdaContext | None = None
) -> TestAnswer:
    return client.send(signed_event("POST", call_body(tool_name, {"note": NOTE}, callId=call_id)), context)


# --- before the tool runs -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", FAULTS)
def test_a_table_failing_before_the_tool_answers_500_and_the_tool_does_not_run(
    client: MedianTestClient, scratch: ScratchTools, relay: FaultRelay, logs: LogCapture, name: str
) -> None:
    fault = FAULTS[name]
    # GIVEN a table that fails as named
    fault.set_on(relay)
    # WHEN a call with a callId arrives
    answer = call(client, "countRuns", f"call_before_{len(name)}")
    # THEN it is answered 500, saying the tool did not run; the tool did not run
    assert answer.status == 500
    assert answer.body["error"]["code"] == "internal_error"
    assert "did not run it" in answer.body["error"]["message"]
    assert scratch.runs["countRuns"] == 0
    # AND the log names what failed, and carries neither input nor output
    [failure] = failures(logs)
    assert failure["message"].endswith("the tool did not run")
    assert failure["cause_type"] in fault.cause_types or failure.get("aws_error_code") in fault.cause_types
    assert failure.get("aws_error_code") == fault.aws_error_code
    assert_no_customer_data(logs)


@pytest.mark.parametrize("name", FAULTS)
def test_a_retry_after_a_failure_before_the_tool_runs_it_once_or_hears_it_is_in_progress(
    client: MedianTestClient, scratch: ScratchTools, relay: FaultRelay, name: str
) -> None:
    fault = FAULTS[name]
    # GIVEN a call refused because the table failed before its tool ran
    fault.set_on(relay)
    call(client, "countRuns", "call_retried")
    # WHEN the table is back and Median retries
    relay.fail(Fault.NONE)
    retry = call(client, "countRuns", "call_retried")
    # THEN the retry runs the tool once; unless the in-progress write had landed unseen, when it
    # is told the call is in progress until that mark lapses, and the tool has still not run
    if fault.write_lands:
        assert (retry.status, retry.body["error"]["code"]) == (409, "in_progress")
        assert scratch.runs["countRuns"] == 0
    else:
        assert retry.status == 200
        assert retry.body["output"] == {"run": 1, "note": NOTE}
        assert scratch.runs["countRuns"] == 1


def test_a_landed_in_progress_write_lapses_with_its_invocation_and_the_tool_then_runs_once(
    client: MedianTestClient, scratch: ScratchTools, relay: FaultRelay
) -> None:
    # GIVEN a call whose in-progress write landed but whose answer was lost, in a short function
    relay.fail(Fault.DROP_AFTER_REQUEST)
    first_context = FakeLambdaContext(timeout_seconds=SHORT_TIMEOUT_SECONDS)
    assert call(client, "countRuns", "call_lapsing", first_context).status == 500
    relay.fail(Fault.NONE)
    # WHEN Median retries after that invocation's end
    time.sleep(first_context.get_remaining_time_in_millis() / 1000 + 1.0)
    retry = call(client, "countRuns", "call_lapsing")
    # THEN the tool runs, once
    assert retry.status == 200
    assert scratch.runs["countRuns"] == 1


# --- after the tool ran -------------------------------------------------------------------------------------------
def register_tool_that_breaks_the_table(
    scratch: ScratchTools, relay: FaultRelay, set_fault: Callable[[FaultRelay], None], *, then_crash: bool = False
) -> str:
    """A refund-like tool that breaks the table while it runs, so that the write after it meets the fault."""

    @tool(risk="high", name="refundThenBreakTheTable")
    def refund_then_break_the_table(args: NoteInput) -> dict[str, object]:
        """Refund, while the idempotency table fails."""
        scratch.runs["refund"] += 1
        set_fault(relay)
        if then_crash:
            raise RuntimeError(f"crashed on {args.note}")
        return {"refunded": args.note, "run": scratch.runs["refund"]}

    return "refundThenBreakTheTable"


@pytest.mark.parametrize("name", FAULTS)
def test_a_table_failing_after_the_tool_ran_answers_what_the_tool_did_and_never_runs_it_twice(
    client: MedianTestClient, scratch: ScratchTools, relay: FaultRelay, logs: LogCapture, name: str
) -> None:
    fault = FAULTS[name]
    # GIVEN a tool during whose run the table starts failing as named
    tool_name = register_tool_that_breaks_the_table(scratch, relay, fault.set_on)
    # WHEN it is called with a callId
    answer = call(client, tool_name, "call_after")
    # THEN the answer is the tool's own: its work is done, though its record may not be
    assert answer.status == 200
    assert answer.body["output"] == {"refunded": NOTE, "run": 1}
    # AND the log says the save failed after the tool ran, with no input or output in it
    [failure, *_] = failures(logs)
    assert failure["message"].endswith("saving the answer of a tool that ran")
    assert failure.get("aws_error_code") == fault.aws_error_code
    assert_no_customer_data(logs)
    # AND a retry, once the table is back, never runs the tool again: it gets the answer if
    # the lost save landed, else hears the call is in progress
    relay.fail(Fault.NONE)
    retry = call(client, tool_name, "call_after")
    assert scratch.runs["refund"] == 1
    if fault.write_lands:
        assert retry.body == answer.body
    else:
        assert (retry.status, retry.body["error"]["code"]) == (409, "in_progress")
        [unrecorded] = [r for r in logs.records() if r["message"].startswith("The answer is not recorded")]
        assert unrecorded["call_id"] == "call_after"
        assert unrecorded["lapses_at"]


@pytest.mark.parametrize(
    "blip",
    [
        pytest.param(lambda relay: relay.fail(Fault.RESET, times=1), id="one reset"),
        pytest.param(lambda relay: relay.fail(Fault.DROP, times=1), id="one drop"),
        pytest.param(
            lambda relay: relay.answer_with_error("ThrottlingException", "Rate exceeded", times=1), id="one throttle"
        ),
    ],
)
def test_a_save_lost_to_a_blip_is_made_again_so_a_retry_gets_the_answer(
    client: MedianTestClient,
    scratch: ScratchTools,
    relay: FaultRelay,
    logs: LogCapture,
    blip: Callable[[FaultRelay], None],
) -> None:
    # GIVEN a tool after which the table fails the next request only
    tool_name = register_tool_that_breaks_the_table(scratch, relay, blip)
    # WHEN it is called, and then retried
    answer = call(client, tool_name, "call_blip")
    retry = call(client, tool_name, "call_blip")
    # THEN the answer was saved on the second try, and the retry got it without a second run
    assert answer.status == 200
    assert retry.body == answer.body
    assert scratch.runs["refund"] == 1
    assert any(record["message"] == "The answer was recorded on a second try" for record in logs.records())


@pytest.mark.parametrize("name", ["lost (read timeout)", "reset", "access denied"])
def test_a_table_failing_after_a_crash_answers_the_crash_and_does_not_raise(
    client: MedianTestClient, scratch: ScratchTools, relay: FaultRelay, logs: LogCapture, name: str
) -> None:
    # GIVEN a tool that breaks the table and then crashes, so the record cannot be released
    tool_name = register_tool_that_breaks_the_table(scratch, relay, FAULTS[name].set_on, then_crash=True)
    # WHEN it is called
    answer = call(client, tool_name, "call_crash_after")
    # THEN Median gets the crash's 500, not a failure of the handler
    assert answer.status == 500
    assert answer.body["error"]["code"] == "internal_error"
    assert "tool failed" in answer.body["error"]["message"]
    [failure] = failures(logs)
    assert failure["message"].endswith("releasing the record of a call that crashed or timed out")
    # AND a retry hears the call is in progress until its mark lapses, as after any crash
    relay.fail(Fault.NONE)
    retry = call(client, tool_name, "call_crash_after")
    assert (retry.status, retry.body["error"]["code"]) == (409, "in_progress")
    assert scratch.runs["refund"] == 1
    assert_no_customer_data(logs)


def test_an_answer_too_large_to_record_is_sent_and_a_retry_is_told_the_call_ran(
    client: MedianTestClient, scratch: ScratchTools, idempotency_table: str, logs: LogCapture
) -> None:
    # GIVEN a tool whose answer is larger than a DynamoDB item can hold
    @tool(risk="high", name="exportEverything")
    def export_everything(args: NoteInput) -> dict[str, object]:
        """Export more than the record can keep."""
        scratch.runs["export"] += 1
        return {"export": "x" * (IDEMPOTENCY_MAX_RECORDED_ANSWER_BYTES + 1)}

    # WHEN it is called, and retried
    answer = call(client, "exportEverything", "call_large")
    retry = call(client, "exportEverything", "call_large")
    # THEN the first call gets the whole answer; the retry gets a 500 that says the call ran, and no second run
    assert answer.status == 200
    assert len(answer.body["output"]["export"]) == IDEMPOTENCY_MAX_RECORDED_ANSWER_BYTES + 1
    assert retry.status == 500
    assert "already ran" in retry.body["error"]["message"]
    assert "will not run again" in retry.body["error"]["message"]
    assert scratch.runs["export"] == 1
    assert not failures(logs)


# --- before Lambda's deadline -------------------------------------------------------------------------------------
def test_a_stalled_table_before_the_tool_is_answered_500_before_the_deadline(
    client: MedianTestClient, scratch: ScratchTools, relay: FaultRelay
) -> None:
    # GIVEN a function with a short timeout, and a table that takes requests and never answers
    relay.fail(Fault.STALL)
    context = FakeLambdaContext(timeout_seconds=SHORT_TIMEOUT_SECONDS)
    # WHEN a call with a callId arrives
    answer = call(client, "countRuns", "call_stalled_before", context)
    # THEN its JSON 500 is returned while the function still has time left
    assert answer.status == 500
    assert answer.headers["Content-Type"] == "application/json"
    assert context.get_remaining_time_in_millis() > 0
    assert scratch.runs["countRuns"] == 0


def test_a_table_stalling_after_the_tool_is_answered_with_its_output_before_the_deadline(
    client: MedianTestClient, scratch: ScratchTools, relay: FaultRelay
) -> None:
    # GIVEN a function with a short timeout, and a tool after which the table stalls
    tool_name = register_tool_that_breaks_the_table(scratch, relay, lambda relay: relay.fail(Fault.STALL))
    context = FakeLambdaContext(timeout_seconds=SHORT_TIMEOUT_SECONDS)
    # WHEN it is called
    answer = call(client, tool_name, "call_stalled_after", context)
    # THEN the tool's answer is returned while the function still has time left
    assert answer.status == 200
    assert answer.body["output"]["refunded"] == NOTE
    assert context.get_remaining_time_in_millis() > 0


def test_a_tool_overrunning_with_the_table_stalled_is_answered_504_before_the_deadline(
    client: MedianTestClient, scratch: ScratchTools, relay: FaultRelay
) -> None:
    # GIVEN a function with a short timeout, and a tool that stalls the table and then runs on
    @tool(risk="low", name="stallTheTableAndRunOn")
    def stall_the_table_and_run_on(args: NoteInput) -> dict[str, object]:
        """Stall the table, then wait to be released."""
        relay.fail(Fault.STALL)
        scratch.release.wait(10)
        return {}

    context = FakeLambdaContext(timeout_seconds=SHORT_TIMEOUT_SECONDS)
    # WHEN it is called: it times out, and releasing its record then stalls
    answer = call(client, "stallTheTableAndRunOn", "call_overrun_stalled", context)
    # THEN the 504 is returned while the function still has time left
    assert answer.status == 504
    assert answer.body["error"]["code"] == "timeout"
    assert context.get_remaining_time_in_millis() > 0


def test_a_function_with_too_little_time_for_the_table_answers_504_and_touches_nothing(
    client: MedianTestClient, scratch: ScratchTools, relay: FaultRelay, logs: LogCapture
) -> None:
    # GIVEN a function with less time left than the table's two requests and the answer may take
    context = FakeLambdaContext(timeout_seconds=TOOL_TIME_MARGIN_SECONDS + 2 * STORE_CALL_SECONDS - 0.3)
    # WHEN a call with a callId arrives
    answer = call(client, "countRuns", "call_no_time", context)
    # THEN it is answered 504 at once, saying the tool did not run; neither the table nor the tool was touched
    assert answer.status == 504
    assert "did not run" in answer.body["error"]["message"]
    assert "raise the function's timeout" in answer.body["error"]["message"]
    assert relay.requests == 0
    assert scratch.runs["countRuns"] == 0
    assert any(record.get("tool") == "countRuns" for record in logs.records())


@pytest.mark.usefixtures("idempotency_table")
def test_the_tool_is_told_the_time_kept_for_its_record(client: MedianTestClient, scratch: ScratchTools) -> None:
    # GIVEN a function with 30 s, and a call through the table
    context = FakeLambdaContext(timeout_seconds=30)
    # WHEN a tool asks how long it has
    answer = client.send(signed_event("POST", call_body("remainingTime", {}, callId="call_time")), context)
    # THEN it is told the time less the margin and the record's save, which it must leave to the handler
    assert 0 < answer.body["output"]["remaining"] <= 30 - TOOL_TIME_MARGIN_SECONDS - STORE_CALL_SECONDS


@pytest.mark.usefixtures("idempotency_table")
def test_a_table_that_never_accepts_the_connection_is_a_500_before_the_deadline(
    client: MedianTestClient,
    scratch: ScratchTools,
    clean_env: pytest.MonkeyPatch,
    unanswered_port: int,
    logs: LogCapture,
) -> None:
    # GIVEN a table whose address never completes a connection, in a short function
    clean_env.setenv("AWS_ENDPOINT_URL_DYNAMODB", f"http://127.0.0.1:{unanswered_port}")
    clean_env.setattr(idempotency, "_clients", [])
    clean_env.setattr(idempotency, "_stores", {})
    context = FakeLambdaContext(timeout_seconds=SHORT_TIMEOUT_SECONDS)
    # WHEN a call arrives
    answer = call(client, "countRuns", "call_connect_timeout", context)
    # THEN it is a 500 with the tool not run, returned while the function has time left, and logged as a connect timeout
    assert answer.status == 500
    assert "did not run it" in answer.body["error"]["message"]
    assert context.get_remaining_time_in_millis() > 0
    assert scratch.runs["countRuns"] == 0
    [failure] = failures(logs)
    assert (failure["call_id"], failure["cause_type"]) == ("call_connect_timeout", "ConnectTimeoutError")
    assert_no_customer_data(logs)
