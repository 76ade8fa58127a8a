"""A call runs its tool at most once per callId, against DynamoDB served by moto over HTTP."""

from __future__ import annotations

import json
import threading
import time
from typing import TYPE_CHECKING

import boto3
import pytest
from median_lambda import ToolContext, tool
from median_lambda.calls.dispatch import STORE_CALL_SECONDS
from median_lambda.protocol import IDEMPOTENCY_KEY_PREFIX, MAX_NESTING_DEPTH, TOOL_TIME_MARGIN_SECONDS
from median_lambda.testing import FakeLambdaContext, call_body, signed_event
from pydantic import BaseModel, Field

from tests.scratch_tools import NoteInput  # noqa: TC001 - @tool reads the annotation when it runs

if TYPE_CHECKING:
    from collections.abc import Callable

    from median_lambda.testing import MedianTestClient, TestAnswer

    from tests.conftest import LogCapture
    from tests.scratch_tools import ScratchTools

pytestmark = pytest.mark.usefixtures("idempotency_table")


def test_two_call_ids_run_the_tool_twice(client: MedianTestClient, scratch: ScratchTools) -> None:
    # GIVEN the counting tool
    # WHEN two distinct calls, with their own callIds, carry the same input
    first = client.call("countRuns", {"note": "refund 20"}, callId="call_a")
    second = client.call("countRuns", {"note": "refund 20"}, callId="call_b")
    # THEN each ran the tool
    assert scratch.runs["countRuns"] == 2
    assert [first.body["output"]["run"], second.body["output"]["run"]] == [1, 2]


def test_a_tool_error_is_recorded_and_replayed(client: MedianTestClient, scratch: ScratchTools) -> None:
    # GIVEN a tool that declines, saying on which run it did
    # WHEN the call is retried
    first = client.call("declineWithRunCount", {}, callId="call_declined")
    retry = client.call("declineWithRunCount", {}, callId="call_declined")
    # THEN the retry gets the first tool_error, and the tool did not run again
    assert scratch.runs["declineWithRunCount"] == 1
    assert retry.status == 200
    assert retry.body == first.body
    assert retry.body["error"] == {"code": "tool_error", "message": "Declined on run 1."}


def test_a_retry_while_the_first_run_is_going_gets_409_in_progress(
    client: MedianTestClient, scratch: ScratchTools
) -> None:
    # GIVEN a first call whose tool is still running, on another thread
    answers: list[TestAnswer] = []
    first = threading.Thread(
        target=lambda: answers.append(client.call("waitForRelease", {}, callId="call_slow")), daemon=True
    )
    first.start()
    assert scratch.started.wait(10), "the first call never reached its tool"
    # WHEN its retry arrives
    retry = client.call("waitForRelease", {}, callId="call_slow")
    # THEN the retry is told the call is in progress, and did not start the tool again
    assert retry.status == 409
    assert retry.body["ok"] is False
    assert retry.body["error"]["code"] == "in_progress"
    assert scratch.runs["waitForRelease"] == 1
    # AND once the first run ends, its answer is the one a later retry gets
    scratch.release.set()
    first.join(10)
    assert answers[0].status == 200
    later = client.call("waitForRelease", {}, callId="call_slow")
    assert later.body == answers[0].body
    assert scratch.runs["waitForRelease"] == 1


def test_a_crash_is_not_recorded_so_a_retry_runs_again(client: MedianTestClient, scratch: ScratchTools) -> None:
    # GIVEN a tool that crashes
    # WHEN the call is retried
    first = client.call("crashQuotingInput", {"note": "x"}, callId="call_crash")
    retry = client.call("crashQuotingInput", {"note": "x"}, callId="call_crash")
    # THEN both runs happened, and each answered 500
    assert (first.status, retry.status) == (500, 500)
    assert retry.body["error"]["code"] == "internal_error"
    assert scratch.runs["crashQuotingInput"] == 2


def test_a_timeout_is_not_recorded_so_a_retry_runs_again(client: MedianTestClient, scratch: ScratchTools) -> None:
    # GIVEN a Lambda with a moment left for the tool, beside the time kept for the table's two requests,
    # and a tool that overruns it
    def short_lived() -> FakeLambdaContext:
        return FakeLambdaContext(timeout_seconds=TOOL_TIME_MARGIN_SECONDS + 2 * STORE_CALL_SECONDS + 0.5)

    event = signed_event("POST", call_body("waitForRelease", {}, callId="call_timeout"))
    # WHEN the call times out and is retried
    first = client.send(event, short_lived())
    retry = client.send(event, short_lived())
    # THEN each answered 504, and the retry ran the tool again rather than hearing "in progress"
    assert (first.status, retry.status) == (504, 504)
    assert retry.body["error"]["code"] == "timeout"
    assert scratch.runs["waitForRelease"] == 2


def test_a_tool_that_opts_out_runs_on_every_call(client: MedianTestClient, scratch: ScratchTools) -> None:
    # GIVEN a tool declared with idempotent=False
    # WHEN the same callId comes twice
    first = client.call("countRunsFresh", {}, callId="call_fresh")
    second = client.call("countRunsFresh", {}, callId="call_fresh")
    # THEN it ran both times
    assert scratch.runs["countRunsFresh"] == 2
    assert [first.body["output"]["run"], second.body["output"]["run"]] == [1, 2]


@pytest.mark.parametrize("members", [{}, {"callId": ""}], ids=["no callId", "empty callId"])
def test_a_call_without_a_call_id_runs_every_time(
    client: MedianTestClient, scratch: ScratchTools, members: dict[str, str]
) -> None:
    # GIVEN calls that carry no callId
    # WHEN the same call comes twice
    client.call("countRuns", {"note": "hello"}, **members)
    client.call("countRuns", {"note": "hello"}, **members)
    # THEN it ran both times
    assert scratch.runs["countRuns"] == 2


def test_the_record_expires_after_the_configured_time(
    client: MedianTestClient, scratch: ScratchTools, idempotency_table: str, clean_env: pytest.MonkeyPatch
) -> None:
    # GIVEN an expiry of two minutes instead of the default hour
    clean_env.setenv("IDEMPOTENCY_EXPIRY_SECONDS", "120")
    # WHEN a call runs
    before = time.time()
    client.call("countRuns", {"note": "hi"}, callId="call_expiring")
    # THEN its record in the table carries an expiration two minutes out, which the table's TTL acts on
    items = boto3.client("dynamodb").scan(TableName=idempotency_table)["Items"]
    assert len(items) == 1
    assert items[0]["id"]["S"].startswith(f"{IDEMPOTENCY_KEY_PREFIX}#")
    assert items[0]["status"]["S"] == "COMPLETED"
    assert int(before) + 120 <= int(items[0]["expiration"]["N"]) <= time.time() + 121


def test_an_unreachable_table_refuses_the_call_rather_than_risk_a_second_run(
    client: MedianTestClient,
    scratch: ScratchTools,
    clean_env: pytest.MonkeyPatch,
    logs: LogCapture,
) -> None:
    # GIVEN IDEMPOTENCY_TABLE naming a table that does not exist
    clean_env.setenv("IDEMPOTENCY_TABLE", "no-such-table")
    # WHEN a call with a callId arrives
    answer = client.call("countRuns", {"note": "refund 20"}, callId="call_no_table")
    # THEN it is refused with a reference, the tool did not run, and the log names AWS's error
    assert answer.status == 500
    assert answer.body["error"]["code"] == "internal_error"
    assert "did not run it" in answer.body["error"]["message"]
    assert scratch.runs["countRuns"] == 0
    failures = [json.loads(line) for line in logs.lines() if "idempotency table failed" in line]
    assert [failure["aws_error_code"] for failure in failures] == ["ResourceNotFoundException"]


def test_a_table_lost_after_the_tool_ran_still_answers_what_the_tool_did(
    client: MedianTestClient, scratch: ScratchTools, idempotency_table: str
) -> None:
    # GIVEN a tool during whose run the idempotency table disappears
    @tool(risk="low", name="dropTheTable")
    def drop_the_table(args: NoteInput) -> dict[str, object]:
        """Delete the idempotency table, then succeed."""
        boto3.client("dynamodb").delete_table(TableName=idempotency_table)
        return {"done": True}

    # WHEN it is called with a callId
    answer = client.call("dropTheTable", {}, callId="call_lost_record")
    # THEN the caller still learns the tool's result: its work is done, though unrecorded
    assert answer.status == 200
    assert answer.body["output"] == {"done": True}


def test_a_call_id_reused_in_another_conversation_gets_409_not_that_conversations_answer(
    client: MedianTestClient, scratch: ScratchTools
) -> None:
    # GIVEN a call that ran in one conversation
    first = client.call("countRuns", {"note": "refund 20"}, callId="call_shared", conversation={"id": "conv_a"})
    # WHEN the same callId, tool and input come from another conversation
    other = client.call("countRuns", {"note": "refund 20"}, callId="call_shared", conversation={"id": "conv_b"})
    # THEN it is refused as a reused callId, and the first conversation's answer is not given out
    assert first.status == 200
    assert other.status == 409
    assert other.body["error"]["code"] == "call_id_reused"
    assert "conversation" in other.body["error"]["message"]
    assert "output" not in other.body
    assert scratch.runs["countRuns"] == 1


def test_a_retry_whose_conversation_gained_members_is_the_same_call(
    client: MedianTestClient, scratch: ScratchTools
) -> None:
    # GIVEN a call that ran in a conversation
    first = client.call("countRuns", {"note": "refund 20"}, callId="call_same_conv", conversation={"id": "conv_a"})
    # WHEN its retry carries the same conversation, known by the same id, with more said about it
    retry = client.call(
        "countRuns",
        {"note": "refund 20"},
        callId="call_same_conv",
        conversation={"id": "conv_a", "visitor": {"name": "Ada"}},
    )
    # THEN it is the same call: the retry gets the first answer and the tool ran once
    assert retry.status == 200
    assert retry.body == first.body
    assert scratch.runs["countRuns"] == 1


def test_conversations_without_an_id_are_told_apart_by_all_they_hold(
    client: MedianTestClient, scratch: ScratchTools
) -> None:
    # GIVEN a call that ran in a conversation that has no id
    client.call("countRuns", {"note": "refund 20"}, callId="call_no_conv_id", conversation={"channel": "chat"})
    # WHEN the same callId comes from a conversation that holds something else, and from the same one again
    other = client.call("countRuns", {"note": "refund 20"}, callId="call_no_conv_id", conversation={"channel": "mail"})
    same = client.call("countRuns", {"note": "refund 20"}, callId="call_no_conv_id", conversation={"channel": "chat"})
    # THEN the other is refused, the same one is replayed, and the tool ran once
    assert (other.status, other.body["error"]["code"]) == (409, "call_id_reused")
    assert same.status == 200
    assert scratch.runs["countRuns"] == 1


def test_a_call_without_a_conversation_and_one_with_an_empty_one_are_the_same_call(
    client: MedianTestClient, scratch: ScratchTools
) -> None:
    # GIVEN a call sent without a conversation, which the tool sees as an empty one
    first = client.call("countRuns", {"note": "hi"}, callId="call_conv_absent")
    # WHEN its retry carries an empty conversation
    retry = client.call("countRuns", {"note": "hi"}, callId="call_conv_absent", conversation={})
    # THEN it is the same call
    assert retry.body == first.body
    assert scratch.runs["countRuns"] == 1


# --- What the handler's own parsing makes, through Powertools: copied, hashed, stored ---------


class _AmountInput(BaseModel):
    amount: float = Field(default=0.0, description="Any number, such as a refund amount.")
    count: int = Field(default=0, description="Any integer.")


@pytest.fixture
def echo_call(scratch: ScratchTools) -> None:
    """echoCall: counts its runs and echoes its input and its conversation, as a tool may quote them."""

    @tool(risk="high", name="echoCall")
    def echo_call(args: _AmountInput, ctx: ToolContext) -> dict[str, object]:
        """Echo the input and the conversation."""
        scratch.runs["echoCall"] += 1
        return {"run": scratch.runs["echoCall"], "input": args.model_dump(), "conversation": ctx.conversation}


def _raw_call(input_json: str, conversation_json: str, call_id: str) -> bytes:
    """An echoCall whose input and conversation are exactly this JSON text, as a model or Median wrote it."""
    return (
        f'{{"version":1,"op":"call","tool":"echoCall","callId":"{call_id}",'
        f'"input":{input_json},"conversation":{conversation_json}}}'
    ).encode()


@pytest.mark.parametrize(
    ("input_json", "conversation_json"),
    [
        pytest.param('{"amount": 25.0}', "{}", id="a refund of 25.0"),
        pytest.param('{"count": 3.0}', "{}", id="3.0 for an int field"),
        pytest.param('{"count": 9007199254740993.0, "amount": 1e300}', "{}", id="past 2**53, and 1e300"),
        pytest.param('{"amount": -0.0, "count": 30e-1}', "{}", id="-0.0 and 30e-1"),
        pytest.param('{"amount": 1e-400}', "{}", id="1e-400 (0.0 as a double)"),
        pytest.param("{}", '{"id": "conv_9", "score": 1.0}', id="a score of 1.0 in the conversation"),
        pytest.param("{}", '{"score": 1.0, "turns": [2e0, {"at": 3.000}]}', id="nested, and no id"),
        pytest.param("{}", '{"id": 7.0}', id="a conversation id of 7.0"),
    ],
)
@pytest.mark.usefixtures("echo_call")
def test_a_whole_number_written_as_a_float_runs_once_and_is_replayed(
    input_json: str, conversation_json: str, client: MedianTestClient, scratch: ScratchTools
) -> None:
    # GIVEN a call whose input or conversation holds whole numbers written as floats, which the
    # handler's parser keeps with their literal (median_lambda/calls/whole_numbers.py)
    event = signed_event("POST", _raw_call(input_json, conversation_json, "call_whole"))
    # WHEN it arrives through the idempotency table, and again as a retry
    first = client.send(event)
    retry = client.send(signed_event("POST", _raw_call(input_json, conversation_json, "call_whole")))
    # THEN the tool ran once, answering 200 (not "could not check whether this call already ran"),
    # and the retry got that answer
    assert first.status == 200, first.body
    assert retry.status == 200, retry.body
    assert retry.body == first.body
    assert scratch.runs["echoCall"] == 1


@pytest.mark.usefixtures("echo_call")
def test_a_conversation_nested_to_the_limit_runs_once_and_is_replayed(
    client: MedianTestClient, scratch: ScratchTools
) -> None:
    # GIVEN a conversation as deep as a body may nest (the body's own object and the conversation
    # member take two of the levels), which the tool echoes into its answer and the record keeps
    inner = "[1.0]"
    for _ in range(MAX_NESTING_DEPTH - 3):
        inner = f'{{"turn": {inner}}}'
    body = _raw_call('{"amount": 2.0}', inner, "call_deep")
    # WHEN it arrives, and again as a retry
    first = client.send(signed_event("POST", body))
    retry = client.send(signed_event("POST", body))
    # THEN the tool ran once and the retry got its answer
    assert first.status == 200, first.body
    assert retry.body == first.body
    assert scratch.runs["echoCall"] == 1


@pytest.mark.parametrize(
    ("first_conversation", "other_conversation"),
    [
        pytest.param({"id": {"thread": "t1"}}, {"thread": "t1"}, id="an id that is an object, and that object"),
        pytest.param({"id": ["conv_9"]}, {"id": "conv_9"}, id="an id in a list, and that id"),
        pytest.param({"id": "conv_9"}, {"id": ["id", "conv_9"]}, id="an id, and one that spells its tag"),
        pytest.param({"id": ""}, {}, id="an empty id, and none"),
        pytest.param({"id": 0}, {"id": False}, id="0 and false"),
        pytest.param({"id": 1}, {"id": 1.0}, id="1 and 1.0"),
        pytest.param({"id": "1"}, {"id": 1}, id='"1" and 1'),
    ],
)
def test_a_call_id_reused_from_another_conversation_gets_409_however_alike_they_look(
    first_conversation: dict[str, object],
    other_conversation: dict[str, object],
    client: MedianTestClient,
    scratch: ScratchTools,
) -> None:
    # GIVEN a call that ran in one conversation
    first = client.call("countRuns", {"note": "refund 20"}, callId="call_alike", conversation=first_conversation)
    # WHEN the same callId, tool and input come from a conversation that differs only in how it is known
    other = client.call("countRuns", {"note": "refund 20"}, callId="call_alike", conversation=other_conversation)
    # THEN it is refused as a reused callId, and is not given the first conversation's answer
    assert first.status == 200
    assert (other.status, other.body["error"]["code"]) == (409, "call_id_reused")
    assert "output" not in other.body
    assert scratch.runs["countRuns"] == 1


@pytest.mark.parametrize(
    ("output", "recorded"),
    [
        pytest.param(lambda: [0] * 150_000, False, id="300 KB compact, 450 KB with Powertools' separators"),
        pytest.param(lambda: {f"k{n}": 0 for n in range(40_000)}, False, id="many members: ': ' and ', '"),
        pytest.param(lambda: "é" * 70_000, False, id="70,000 characters, 420 KB escaped"),
        pytest.param(lambda: "x" * 300_000, True, id="300 KB that fits"),
        pytest.param(lambda: [0] * 100_000, True, id="200 KB compact, 300 KB with separators: fits"),
    ],
)
def test_an_answer_near_the_records_size_is_kept_or_replaced_never_lost(
    output: Callable[[], object], recorded: bool, client: MedianTestClient, scratch: ScratchTools, logs: LogCapture
) -> None:
    # GIVEN a tool whose answer is near what a DynamoDB item holds, measured as Powertools writes it
    @tool(risk="high", name="exportNearTheLimit")
    def export_near_the_limit(args: NoteInput) -> object:
        """Export a large answer."""
        scratch.runs["export"] += 1
        return output()

    # WHEN it is called, and retried
    first = client.call("exportNearTheLimit", {}, callId="call_near_limit")
    retry = client.call("exportNearTheLimit", {}, callId="call_near_limit")
    # THEN the first call gets the whole answer; the retry gets it again if the record could keep
    # it, or a 500 saying the call ran; never a 409 in_progress and a second run once it lapses
    assert first.status == 200
    assert first.body["output"] == output()
    if recorded:
        assert retry.body == first.body
    else:
        assert retry.status == 500
        assert "already ran" in retry.body["error"]["message"]
    assert scratch.runs["export"] == 1
    assert "The idempotency table failed" not in logs.text()
