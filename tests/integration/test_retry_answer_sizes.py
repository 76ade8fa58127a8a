"""What a retry gets, for every size an answer can have: small, mid-sized, at the record's limit, one over.

The record keeps an answer as Powertools stores it (json.dumps of the status and body: sorted
keys, ASCII escapes, its default separators) within IDEMPOTENCY_MAX_RECORDED_ANSWER_BYTES; an
answer over that is still sent, and a retry gets a 500 saying the call ran. A rule that
misjudged the size would either give ordinary retries a 500 instead of their answer, or try to
keep an answer no item can hold. Sizes are measured as the record measures them: escaped, so
non-ASCII text counts six characters (and a character beyond the BMP twelve) for each it shows.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from median_lambda import tool
from median_lambda.protocol import IDEMPOTENCY_MAX_RECORDED_ANSWER_BYTES
from median_lambda.testing import FakeLambdaContext, call_body, signed_event

from tests.scratch_tools import NoteInput  # noqa: TC001 - @tool reads the annotation when it runs

if TYPE_CHECKING:
    from median_lambda.testing import MedianTestClient, TestAnswer

    from tests.conftest import LogCapture
    from tests.scratch_tools import ScratchTools

pytestmark = pytest.mark.usefixtures("idempotency_table")

LIMIT = IDEMPOTENCY_MAX_RECORDED_ANSWER_BYTES
# What one character of each kind takes once escaped as the record stores it.
ESCAPED_WIDTH = {"x": 1, "é": 6, "🙂": 12}


def answer_body(export: str) -> dict[str, object]:
    return {"version": 1, "ok": True, "output": {"export": export}}


def escaped_size(export: str) -> int:
    """The answer's size as the record measures it: the status and body as Powertools writes them."""
    return len(json.dumps({"status": 200, "body": answer_body(export)}, sort_keys=True))


def export_of_escaped_size(size: int, character: str) -> str:
    """An export of `character`s (padded with x) whose answer is exactly `size` escaped characters."""
    room = size - escaped_size("")
    export = character * (room // ESCAPED_WIDTH[character]) + "x" * (room % ESCAPED_WIDTH[character])
    assert escaped_size(export) == size
    return export


@pytest.fixture
def export(scratch: ScratchTools) -> dict[str, str]:
    """A tool, `exportText`, that returns the text the test puts here, counting its runs."""
    text = {"export": ""}

    @tool(risk="high", name="exportText")
    def export_text(args: NoteInput) -> dict[str, object]:
        """Return the export the test prepared."""
        scratch.runs["exportText"] += 1
        return {"export": text["export"]}

    return text


def call_twice(client: MedianTestClient, call_id: str) -> tuple[TestAnswer, TestAnswer, str]:
    """The call, its retry, and the first call's request id (what its answers call the reference)."""
    context = FakeLambdaContext()
    first = client.send(signed_event("POST", call_body("exportText", {}, callId=call_id), key=client.key), context)
    retry = client.call("exportText", {}, callId=call_id)
    return first, retry, context.aws_request_id


@pytest.mark.parametrize(
    "size",
    [
        pytest.param(200, id="small"),
        pytest.param(LIMIT // 12 + 1, id="mid-sized: over a twelfth of the limit, as if every character escaped"),
        pytest.param(LIMIT // 2, id="mid-sized: half the limit"),
        pytest.param(LIMIT - 1, id="one under the limit"),
        pytest.param(LIMIT, id="at the limit"),
    ],
)
@pytest.mark.parametrize("character", ["x", "é", "🙂"], ids=["ascii", "two-byte", "beyond the BMP"])
def test_a_retry_gets_the_recorded_answer_up_to_the_limit(
    client: MedianTestClient, scratch: ScratchTools, export: dict[str, str], size: int, character: str
) -> None:
    # GIVEN a tool whose answer is this large as the record measures it
    export["export"] = export_of_escaped_size(size, character)
    # WHEN it is called and retried
    first, retry, _ = call_twice(client, f"call_{size}_{ord(character)}")
    # THEN the retry gets the very answer the first call got, and the tool ran once
    assert first.status == retry.status == 200
    assert retry.body == first.body == answer_body(export["export"])
    assert scratch.runs["exportText"] == 1


@pytest.mark.parametrize(
    "size", [pytest.param(LIMIT + 1, id="one over the limit"), pytest.param(LIMIT * 2, id="twice the limit")]
)
@pytest.mark.parametrize("character", ["x", "é", "🙂"], ids=["ascii", "two-byte", "beyond the BMP"])
def test_a_retry_of_an_answer_over_the_limit_is_told_the_call_ran_and_how_to_find_it(
    client: MedianTestClient,
    scratch: ScratchTools,
    export: dict[str, str],
    logs: LogCapture,
    size: int,
    character: str,
) -> None:
    # GIVEN a tool whose answer is over the limit as the record measures it
    export["export"] = export_of_escaped_size(size, character)
    # WHEN it is called and retried
    first, retry, reference = call_twice(client, f"call_over_{size}_{ord(character)}")
    # THEN the first call gets its whole answer; the retry a 500 that names the cause, says the tool
    # will not run again, and gives the first call's reference, which its log line carries
    assert first.status == 200
    assert first.body == answer_body(export["export"])
    assert retry.status == 500
    assert retry.body == {
        "version": 1,
        "ok": False,
        "error": {
            "code": "internal_error",
            "message": f"This call already ran, but its answer was over the {LIMIT:,} bytes kept for a retry, "
            "so it cannot be sent again; the tool will not run again for this callId. "
            f"Reference {reference}.",
        },
    }
    assert scratch.runs["exportText"] == 1
    [warning] = [r for r in logs.records() if r["message"].startswith("The answer is too large to record")]
    assert warning["message"] == "The answer is too large to record; a retry will get a 500 saying the call ran"
    assert warning["call_id"] == f"call_over_{size}_{ord(character)}"
    assert warning["answer_characters"] == len(json.dumps(first.body, separators=(",", ":"), ensure_ascii=False))
