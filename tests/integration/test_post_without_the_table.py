"""The table-less path, as `make serve` runs: every call runs its tool, and answers as it would deployed.

The POST suites run as deployed (tests/conftest.py, `configuration`). What differs without the
idempotency table is only that no call is recorded: so each case here is sent without the
table and then, with a callId of its own, through it, and the two answers must be the same.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda import tool
from median_lambda.calls.dispatch import STORE_CALL_SECONDS
from median_lambda.protocol import IDEMPOTENCY_TABLE_ENV, MAX_NESTING_DEPTH, TOOL_TIME_MARGIN_SECONDS
from median_lambda.testing import FakeLambdaContext, signed_event

from tests.scratch_tools import NoteInput  # noqa: TC001 - @tool reads the annotation when it runs

if TYPE_CHECKING:
    from median_lambda.authoring.registry import Registry
    from median_lambda.testing import MedianTestClient, TestAnswer

    from tests.scratch_tools import ScratchTools


@pytest.fixture(autouse=True)
def _tools(sample_tools: Registry, scratch: ScratchTools) -> None:
    """The sample tools and the scratch tools, and one that returns what JSON cannot carry."""

    @tool(risk="low", name="returnASet")
    def return_a_set(args: NoteInput) -> object:
        """Return a set."""
        return {args.note}

    @tool(risk="low", name="asyncOverrun")
    async def async_overrun(args: NoteInput) -> object:
        """Wait past any deadline here."""
        await asyncio.sleep(10)
        return "done"

    @tool(risk="low", name="returnTooDeep")
    def return_too_deep(args: NoteInput) -> object:
        """Return lists nested deeper than any JSON encoder here will write."""
        nested: list[object] = []
        for _ in range(100_000):
            nested = [nested]
        return nested


def _deep_conversation() -> str:
    text = "1.0"
    for _ in range(MAX_NESTING_DEPTH - 2):
        text = f'{{"turn": {text}}}'
    return text


# Each case: the tool, and its input and conversation as JSON text, exactly as sent.
CASES = {
    "200 ok": ("ticketStatus", '{"ticketNumber": "TCK-1042"}', '{"id": "conv_9"}'),
    "200 tool_error": ("ticketStatus", '{"ticketNumber": "TCK-0000"}', "{}"),
    "200 with whole floats": (
        "setPriority",
        '{"ticketNumber": "TCK-1043", "queue": "shipping", "priority": 2.0}',
        '{"score": 1.0}',
    ),
    "200 nested to the limit": ("ticketStatus", '{"ticketNumber": "TCK-1042"}', _deep_conversation()),
    "422 invalid_input": ("setPriority", '{"ticketNumber": "TCK-1043", "priority": "3"}', "{}"),
    "404 unknown_tool": ("noSuchTool", "{}", "{}"),
    "500 a crash": ("crashQuotingInput", '{"note": "x"}', "{}"),
    "500 not JSON": ("returnASet", '{"note": "x"}', "{}"),
    "500 nested too deep to write": ("returnTooDeep", "{}", "{}"),
}


def _send(
    client: MedianTestClient, call: tuple[str, str, str], call_id: str, timeout_seconds: float = 30.0
) -> TestAnswer:
    tool_name, input_json, conversation_json = call
    body = (
        f'{{"version":1,"op":"call","tool":"{tool_name}","callId":"{call_id}",'
        f'"input":{input_json},"conversation":{conversation_json}}}'
    ).encode()
    # One request id for both: an error's message names it.
    context = FakeLambdaContext(aws_request_id="req-alike", timeout_seconds=timeout_seconds)
    return client.send(signed_event("POST", body), context)


@pytest.mark.parametrize("case", list(CASES))
def test_a_call_answers_the_same_without_the_table_as_through_it(
    case: str, client: MedianTestClient, request: pytest.FixtureRequest
) -> None:
    # GIVEN a call, served first as `make serve` serves it, with no idempotency table
    assert IDEMPOTENCY_TABLE_ENV not in os.environ
    served = _send(client, CASES[case], f"call_{uuid.uuid4().hex}")
    # WHEN the same call, with a callId of its own, is served as deployed, through the table
    request.getfixturevalue("idempotency_table")
    deployed = _send(client, CASES[case], f"call_{uuid.uuid4().hex}")
    # THEN both answer alike: the same status and the same body
    assert served.status == deployed.status == int(case.split()[0]), served.body
    assert served.body == deployed.body


@pytest.mark.parametrize("tool_name", ["waitForRelease", "asyncOverrun"])
def test_a_timeout_answers_the_same_without_the_table_as_through_it(
    tool_name: str, client: MedianTestClient, scratch: ScratchTools, request: pytest.FixtureRequest
) -> None:
    # GIVEN a tool (plain or async) that overruns a Lambda leaving it a fraction of a second,
    # served first without the table
    call = (tool_name, "{}", "{}")
    tool_seconds = TOOL_TIME_MARGIN_SECONDS + 0.3
    served = _send(client, call, f"call_{uuid.uuid4().hex}", tool_seconds)
    # WHEN it is served through the table, in a Lambda with room for the table's two requests besides
    request.getfixturevalue("idempotency_table")
    deployed = _send(client, call, f"call_{uuid.uuid4().hex}", tool_seconds + 2 * STORE_CALL_SECONDS)
    scratch.release.set()
    # THEN both are the same 504 timeout, saying it is unknown whether the tool did its work
    assert served.status == deployed.status == 504, served.body
    assert served.body == deployed.body
    assert "unknown whether it did its work" in served.body["error"]["message"]


def test_without_the_table_a_retried_call_id_runs_the_tool_again(
    client: MedianTestClient, scratch: ScratchTools
) -> None:
    # GIVEN no idempotency table, as `make serve` runs
    # WHEN the same call comes twice with one callId
    first = client.call("countRuns", {"note": "refund 20"}, callId="call_twice")
    second = client.call("countRuns", {"note": "refund 20"}, callId="call_twice")
    # THEN the tool ran each time: nothing is recorded, so nothing is replayed
    assert [first.body["output"]["run"], second.body["output"]["run"]] == [1, 2]
    assert scratch.runs["countRuns"] == 2


def test_without_the_table_a_reused_call_id_is_not_refused(client: MedianTestClient, scratch: ScratchTools) -> None:
    # GIVEN no idempotency table
    # WHEN one callId comes with two inputs
    answers: list[Any] = [
        client.call("countRuns", {"note": note}, callId="call_reused") for note in ("refund 20", "refund 500")
    ]
    # THEN both run: without a record, no reuse can be told
    assert [answer.status for answer in answers] == [200, 200]
    assert scratch.runs["countRuns"] == 2
