"""The words of the idempotency table's 409s and 500s: the cause, the action, and the reference to search by.

Median's agent reads these answers, and an operator searches the logs by the reference a 500
carries; tests/integration/test_idempotency.py pins what happens, this pins what is said.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING

import pytest
from median_lambda.testing import FakeLambdaContext, call_body, signed_event

if TYPE_CHECKING:
    from median_lambda.testing import MedianTestClient, TestAnswer

    from tests.conftest import LogCapture
    from tests.scratch_tools import ScratchTools

pytestmark = pytest.mark.usefixtures("idempotency_table")

IN_PROGRESS = "A call with this callId is still running. Retry later to get its answer; the tool will not run twice."
REUSED = (
    "This callId was already used for a call with another tool, input or conversation. Give each call its own callId."
)


def test_a_retry_during_the_run_is_told_to_retry_later_and_that_the_tool_will_not_run_twice(
    client: MedianTestClient, scratch: ScratchTools, logs: LogCapture
) -> None:
    # GIVEN a first call whose tool is still running
    answers: list[TestAnswer] = []
    first = threading.Thread(
        target=lambda: answers.append(client.call("waitForRelease", {}, callId="call_busy")), daemon=True
    )
    first.start()
    assert scratch.started.wait(10), "the first call never reached its tool"
    # WHEN its retry arrives
    retry = client.call("waitForRelease", {}, callId="call_busy")
    scratch.release.set()
    first.join(10)
    # THEN the retry's 409 says what to do, and the log says which call was busy
    assert retry.status == 409
    assert retry.body == {"version": 1, "ok": False, "error": {"code": "in_progress", "message": IN_PROGRESS}}
    [busy] = [r for r in logs.records() if r["message"] == "A call with this callId is still running"]
    assert (busy["call_id"], busy["tool"]) == ("call_busy", "waitForRelease")


def test_a_reused_call_id_is_told_to_give_each_call_its_own(
    client: MedianTestClient, scratch: ScratchTools, logs: LogCapture
) -> None:
    # GIVEN a call that ran
    client.call("countRuns", {"note": "refund 20"}, callId="call_reused")
    # WHEN the same callId comes with another input
    reused = client.call("countRuns", {"note": "refund 500"}, callId="call_reused")
    # THEN the 409 names the cause and the fix, and the log names the callId and the tool, not the input
    assert reused.status == 409
    assert reused.body == {"version": 1, "ok": False, "error": {"code": "call_id_reused", "message": REUSED}}
    [warning] = [r for r in logs.records() if r["message"] == "A callId was reused for another call"]
    assert (warning["call_id"], warning["tool"]) == ("call_reused", "countRuns")
    assert "refund 500" not in logs.text()


def test_a_table_that_cannot_be_read_says_the_tool_did_not_run_and_gives_the_reference(
    client: MedianTestClient, scratch: ScratchTools, clean_env: pytest.MonkeyPatch, logs: LogCapture
) -> None:
    # GIVEN IDEMPOTENCY_TABLE naming a table that does not exist
    clean_env.setenv("IDEMPOTENCY_TABLE", "no-such-table")
    context = FakeLambdaContext()
    # WHEN a call with a callId arrives
    answer = client.send(
        signed_event("POST", call_body("countRuns", {"note": "x"}, callId="call_no_table"), key=client.key), context
    )
    # THEN the 500 says the tool did not run and to retry, with the reference the log line carries
    assert answer.status == 500
    assert answer.body == {
        "version": 1,
        "ok": False,
        "error": {
            "code": "internal_error",
            "message": "The server could not check whether this call already ran, so it did not run it; retry. "
            f"Reference {context.aws_request_id}.",
        },
    }
    assert scratch.runs["countRuns"] == 0
    [failure] = [r for r in logs.records() if r["message"].startswith("The idempotency table failed")]
    assert failure["message"] == "The idempotency table failed; the tool did not run"
    assert (failure["call_id"], failure["tool"]) == ("call_no_table", "countRuns")
    assert (failure["error_type"], failure["aws_error_code"]) == (
        "IdempotencyPersistenceLayerError",
        "ResourceNotFoundException",
    )


def test_an_answer_replayed_from_the_record_is_logged_and_counted_for_its_tool(
    client: MedianTestClient, scratch: ScratchTools, logs: LogCapture
) -> None:
    # GIVEN a call that ran
    client.call("countRuns", {"note": "refund 20"}, callId="call_replayed")
    first_lines = len(logs.lines())
    # WHEN it is retried
    retry = client.call("countRuns", {"note": "refund 20"}, callId="call_replayed")
    # THEN the retry's answer comes from the record: one info line says so with the callId, and
    # the invocation's metrics count one replayed call for the tool
    assert retry.status == 200
    assert scratch.runs["countRuns"] == 1
    [replayed] = [r for r in logs.records() if r["message"] == "Answered with the recorded answer of an earlier run"]
    assert (replayed["level"], replayed["call_id"]) == ("INFO", "call_replayed")
    retry_metrics = [json.loads(line) for line in logs.lines()[first_lines:] if line.startswith('{"_aws"')]
    [emf] = retry_metrics
    [directive] = emf["_aws"]["CloudWatchMetrics"]
    assert "ReplayedCalls" in {metric["Name"] for metric in directive["Metrics"]}
    assert emf["tool"] == "countRuns"
    assert emf["ReplayedCalls"] == [1.0]


def test_a_crash_through_the_table_answers_its_own_500_and_a_retry_runs_again(
    client: MedianTestClient, scratch: ScratchTools, logs: LogCapture
) -> None:
    # GIVEN a tool that crashes, called with a callId
    context = FakeLambdaContext()
    event = signed_event("POST", call_body("crashQuotingInput", {"note": "x"}, callId="call_crashed"), key=client.key)
    # WHEN it is called, and retried
    answer = client.send(event, context)
    retry = client.call("crashQuotingInput", {"note": "x"}, callId="call_crashed")
    # THEN the first answer is the crash's own, with its reference; the record was released, so the retry ran again
    assert answer.body == {
        "version": 1,
        "ok": False,
        "error": {
            "code": "internal_error",
            "message": f"The tool failed on the server; reference {context.aws_request_id}.",
        },
    }
    assert retry.status == 500
    assert scratch.runs["crashQuotingInput"] == 2
    # AND the table did not fail: the record was released as a crash's is, with nothing to report
    assert not [r for r in logs.records() if r["message"].startswith("The idempotency table failed")]
