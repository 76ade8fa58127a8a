"""Every answer can be sent: under Lambda's response limit, as UTF-8, and before the deadline.

Lambda returns at most MAX_RESPONSE_BYTES of response JSON; past it API Gateway answers its
own 502 and Median gets no JSON. UTF-8 cannot carry a lone surrogate, which json.loads makes
of a "\\ud800" escape and a tool can make of bad data: refused on the way in (the tool does not
run), replaced by U+FFFD on the way out (the tool's answer is kept).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda import ToolError, tool
from median_lambda.protocol import (
    MAX_BODY_BYTES,
    MAX_INPUT_ERROR_DETAILS,
    MAX_RESPONSE_BYTES,
    PROTOCOL_VERSION,
    TOOL_TIME_MARGIN_SECONDS,
)
from median_lambda.testing import FakeLambdaContext, signed_event
from pydantic import BaseModel, ConfigDict, Field

from tests.scratch_tools import NoteInput  # noqa: TC001 - @tool reads the annotation when it runs

if TYPE_CHECKING:
    from median_lambda.testing import MedianTestClient, TestAnswer

    from tests.conftest import LogCapture
    from tests.scratch_tools import ScratchTools


@pytest.fixture
def client(client_as_median: MedianTestClient) -> MedianTestClient:
    """Every call with a callId of its own, served as deployed: through the idempotency table."""
    return client_as_median


def response_bytes(answer: TestAnswer) -> int:
    """The size of the response as Lambda would return it: the body a JSON string inside the envelope."""
    envelope = {"statusCode": answer.status, "headers": answer.headers, "body": json.dumps(answer.body)}
    return len(json.dumps(envelope).encode("utf-8"))


def raw_call(client: MedianTestClient, document: dict[str, Any], **context: Any) -> TestAnswer:
    """A signed call whose body is this document, escaped as json.dumps escapes it (lone surrogates as \\uXXXX)."""
    body = json.dumps({"version": PROTOCOL_VERSION, "op": "call", **document}).encode("ascii")
    return client.send(signed_event("POST", body), FakeLambdaContext(**context))


# --- under Lambda's 6 MB ------------------------------------------------------------------------------------------
def test_a_mebibyte_of_unknown_fields_is_a_422_that_fits_and_counts_what_it_left_out(
    client: MedianTestClient, scratch: ScratchTools
) -> None:
    # GIVEN an input of nothing but unknown fields, as many as a body under the cap holds
    fields = {f"f{n}": 0 for n in range(MAX_BODY_BYTES // len('"f99999": 0, '))}
    assert len(json.dumps({"version": 1, "op": "call", "tool": "countRuns", "input": fields})) <= MAX_BODY_BYTES
    # WHEN it is called
    answer = raw_call(client, {"tool": "countRuns", "input": fields})
    # THEN a 422 lists the first problems, says how many it left out, and fits in a Lambda response
    assert answer.status == 422
    error = answer.body["error"]
    assert error["code"] == "invalid_input"
    assert len(error["details"]) == MAX_INPUT_ERROR_DETAILS
    assert error["omitted"] == len(fields) - MAX_INPUT_ERROR_DETAILS
    assert f"{len(fields):,} problems" in error["message"]
    assert response_bytes(answer) < MAX_RESPONSE_BYTES
    assert scratch.runs["countRuns"] == 0


def test_a_422_with_few_problems_lists_them_all_and_omits_nothing(
    client: MedianTestClient, scratch: ScratchTools
) -> None:
    # GIVEN an input with two unknown fields
    # WHEN it is called
    answer = raw_call(client, {"tool": "countRuns", "input": {"a": 1, "b": 2}})
    # THEN both are listed, and no `omitted` count is sent
    assert [detail["field"] for detail in answer.body["error"]["details"]] == ["a", "b"]
    assert "omitted" not in answer.body["error"]


@pytest.mark.parametrize(
    "blob",
    [
        pytest.param("x" * MAX_RESPONSE_BYTES, id="ASCII"),
        # Each quote is escaped in the body, and its escape escaped again in Lambda's response.
        pytest.param('"' * (MAX_RESPONSE_BYTES // 2), id="quotes"),
        pytest.param("\u00e9" * (MAX_RESPONSE_BYTES // 2), id="two-byte characters"),
    ],
)
def test_a_tool_answer_over_lambdas_limit_is_a_500_that_says_so(
    client: MedianTestClient, scratch: ScratchTools, logs: LogCapture, blob: str
) -> None:
    # GIVEN a tool whose output, as Lambda would return it, is over the limit
    @tool(risk="low", name="returnTooMuch")
    def return_too_much(args: NoteInput) -> dict[str, object]:
        """Return more than Lambda can send."""
        scratch.runs["returnTooMuch"] += 1
        return {"blob": blob}

    # WHEN it is called
    answer = client.call("returnTooMuch", {})
    # THEN Median gets a JSON 500 that says why, not Lambda's refusal; the log names the tool
    assert answer.status == 500
    assert answer.body["error"]["code"] == "internal_error"
    assert "too large to send" in answer.body["error"]["message"]
    assert scratch.runs["returnTooMuch"] == 1
    assert any("returnTooMuch" in record["message"] for record in logs.records())


def test_a_large_answer_under_the_limit_is_sent_whole(client: MedianTestClient, scratch: ScratchTools) -> None:
    # GIVEN a tool whose output is large, but fits
    @tool(risk="low", name="returnALot")
    def return_a_lot(args: NoteInput) -> dict[str, object]:
        """Return a lot, within what Lambda can send."""
        return {"blob": "x" * (MAX_RESPONSE_BYTES - 10_000)}

    # WHEN it is called
    answer = client.call("returnALot", {})
    # THEN it is sent as it is
    assert answer.status == 200
    assert len(answer.body["output"]["blob"]) == MAX_RESPONSE_BYTES - 10_000


# --- UTF-8 --------------------------------------------------------------------------------------------------------
LONE = "\ud800"


@pytest.mark.parametrize(
    ("member", "document"),
    [
        pytest.param("callId", {"tool": "countRuns", "callId": f"call_{LONE}"}, id="callId"),
        pytest.param(
            "conversation", {"tool": "countRuns", "conversation": {"id": f"conv{LONE}"}}, id="conversation id"
        ),
        pytest.param("conversation", {"tool": "countRuns", "conversation": {LONE: "x"}}, id="conversation key"),
        pytest.param(
            "conversation", {"tool": "countRuns", "conversation": {"visitor": {"name": "\udc00"}}}, id="nested value"
        ),
        pytest.param("input", {"tool": "countRuns", "input": {"note": f"a{LONE}b"}}, id="input string"),
        pytest.param("input", {"tool": "countRuns", "input": {LONE: "x"}}, id="input key"),
    ],
)
def test_a_lone_surrogate_in_the_call_is_a_400_before_the_tool_runs(
    client: MedianTestClient, scratch: ScratchTools, member: str, document: dict[str, Any]
) -> None:
    # GIVEN a call carrying a lone surrogate, escaped as JSON allows ("\ud800")
    # WHEN it arrives
    answer = raw_call(client, document)
    # THEN it is refused, naming the member, and the tool did not run
    assert answer.status == 400
    assert answer.body["error"]["code"] == "bad_request"
    assert answer.body["error"]["message"].startswith(f"{member} holds a lone surrogate")
    assert scratch.runs["countRuns"] == 0


def test_a_surrogate_pair_is_a_character_and_is_served(client: MedianTestClient, scratch: ScratchTools) -> None:
    # GIVEN a note holding an emoji, escaped as its UTF-16 pair ("\ud83d\ude00")
    # WHEN it is called
    answer = raw_call(client, {"tool": "countRuns", "input": {"note": "\U0001f600"}, "callId": "call_\U0001f600"})
    # THEN it is served as the character it is
    assert answer.status == 200
    assert answer.body["output"]["note"] == "\U0001f600"


def test_a_backslash_before_u_d_is_no_surrogate(client: MedianTestClient, scratch: ScratchTools) -> None:
    # GIVEN a note holding the text \ud800 itself: an escaped backslash, then letters
    # WHEN it is called
    answer = raw_call(client, {"tool": "countRuns", "input": {"note": "\\ud800"}})
    # THEN it is served: only a real lone surrogate is refused
    assert answer.status == 200
    assert answer.body["output"]["note"] == "\\ud800"


def test_a_lone_surrogate_a_tool_returns_is_replaced_and_its_answer_sent(
    client: MedianTestClient, scratch: ScratchTools
) -> None:
    # GIVEN tools that return, or decline with, text holding lone surrogates (decoded badly, say)
    @tool(risk="low", name="returnBrokenText")
    def return_broken_text(args: NoteInput) -> dict[str, object]:
        """Return text with lone surrogates, in a value and in a key."""
        scratch.runs["returnBrokenText"] += 1
        return {"text": f"a{LONE}b", "\udfff": "key"}

    @tool(risk="low", name="declineWithBrokenText")
    def decline_with_broken_text(args: NoteInput) -> dict[str, object]:
        """Decline with a message holding a lone surrogate."""
        raise ToolError(f"Cannot find {LONE}")

    # WHEN each is called
    returned = client.call("returnBrokenText", {})
    declined = client.call("declineWithBrokenText", {})
    # THEN each answer is sent, as UTF-8, with U+FFFD where the lone surrogate was
    assert returned.status == 200
    assert returned.body["output"] == {"text": "a\ufffdb", "\ufffd": "key"}
    assert declined.status == 200
    assert declined.body["error"] == {"code": "tool_error", "message": "Cannot find \ufffd"}
    assert scratch.runs["returnBrokenText"] == 1


def test_every_answer_body_encodes_as_utf8(client: MedianTestClient, scratch: ScratchTools) -> None:
    # GIVEN calls that end each way a lone surrogate can reach an answer
    @tool(risk="low", name="echoBroken")
    def echo_broken(args: NoteInput) -> dict[str, object]:
        """Echo the note after a lone surrogate."""
        return {"echo": LONE + args.note}

    from median_lambda.app import lambda_handler
    from median_lambda.testing import call_body, dev_key

    events = [
        signed_event("POST", call_body("echoBroken", {"note": "é"})),
        signed_event("POST", json.dumps({"version": 1, "op": "call", "tool": "echoBroken", "callId": LONE}).encode()),
        signed_event("POST", json.dumps({"version": 1, "op": "call", "tool": LONE}).encode()),
    ]
    # WHEN they arrive
    with dev_key(client.key):
        responses = [lambda_handler(event, FakeLambdaContext()) for event in events]  # type: ignore[arg-type]
    # THEN every body is text that UTF-8 can carry
    for response in responses:
        response["body"].encode("utf-8")


# --- the input is validated before the deadline -------------------------------------------------------------------
class SlowPatternInput(BaseModel):
    # Python's re backtracks exponentially on this pattern: a few dozen characters take minutes.
    model_config = ConfigDict(regex_engine="python-re")
    code: str = Field(pattern=r"^(a+)+$", description="A code of a's.")


def test_an_input_that_takes_too_long_to_validate_is_a_504_before_the_deadline(
    client: MedianTestClient, scratch: ScratchTools, logs: LogCapture
) -> None:
    # GIVEN a tool whose input model has a pattern that backtracks for minutes on a bad value
    @tool(risk="low", name="checkCode")
    def check_code(args: SlowPatternInput) -> dict[str, object]:
        """Check a code."""
        scratch.runs["checkCode"] += 1
        return {"code": args.code}

    context = FakeLambdaContext(timeout_seconds=3.0)
    call = {"version": 1, "op": "call", "callId": "call_slow", "tool": "checkCode", "input": {"code": "a" * 40 + "!"}}
    body = json.dumps(call)
    # WHEN it is called in a function with three seconds
    answer = client.send(signed_event("POST", body.encode()), context)
    # THEN the answer is a 504 that says the tool did not run, given while the function still had time
    assert answer.status == 504
    assert answer.body["error"]["code"] == "timeout"
    assert answer.body["error"]["message"] == (
        "Checking the input against the tool's schema took longer than the time this function had left, so the "
        f"tool did not run. Reference {context.aws_request_id}."
    )
    assert context.get_remaining_time_in_millis() > 0
    assert scratch.runs["checkCode"] == 0
    # AND the log names the tool, never the input
    assert any(record.get("tool") == "checkCode" for record in logs.records())
    assert "a" * 40 not in logs.text()
    # AND its line says what ran out, with the call and the seconds validation had, to the millisecond
    [record] = [record for record in logs.records() if record["level"] == "ERROR"]
    what_ran_out = "Validating the input took longer than the time left; answering 504, the tool did not run"
    assert record["message"] == what_ran_out
    assert (record["call_id"], record["tool"]) == ("call_slow", "checkCode")
    assert 0 < record["seconds"] <= 3.0 - TOOL_TIME_MARGIN_SECONDS
    assert record["seconds"] == round(record["seconds"], 3)
