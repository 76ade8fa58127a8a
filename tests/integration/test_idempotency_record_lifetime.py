"""How long a call's record is kept: IDEMPOTENCY_EXPIRY_SECONDS, and never under one second; and its
in-progress mark, until the invocation would time out.

DynamoDB deletes a record once its `expiration` (epoch seconds, the table's TTL attribute) has
passed; until then a retry of the callId is answered from it. The record is read from moto's
DynamoDB, as the table holds it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from median_lambda import tool
from median_lambda.testing import FakeLambdaContext, MedianTestClient, call_body, signed_event

from tests.scratch_tools import NoteInput  # noqa: TC001 - @tool reads the annotation when it runs

if TYPE_CHECKING:
    from median_lambda.authoring.registry import Registry

    from tests.scratch_tools import ScratchTools


def _expiration_of_the_one_record(table: str) -> int:
    [item] = boto3.client("dynamodb").scan(TableName=table)["Items"]
    return int(item["expiration"]["N"])


@pytest.mark.parametrize(
    ("setting", "kept_seconds"),
    [
        pytest.param("7200", 7200, id="two hours, as set"),
        pytest.param("1", 1, id="one second, the least"),
        pytest.param("0.5", 1, id="half a second, kept for one"),
        pytest.param("0", 1, id="zero, kept for one"),
    ],
)
def test_a_record_is_kept_for_the_expiry_set_and_never_under_a_second(
    idempotency_table: str,
    clean_env: pytest.MonkeyPatch,
    scratch: ScratchTools,
    setting: str,
    kept_seconds: int,
) -> None:
    # GIVEN the idempotency table, and an expiry set for its records
    clean_env.setenv("IDEMPOTENCY_EXPIRY_SECONDS", setting)
    # WHEN a call runs through it
    before = int(time.time())
    answer = MedianTestClient().call("countRuns", {"note": "refund"}, callId="call_lifetime_1")
    after = int(time.time())
    # THEN its record expires that many whole seconds after the call, and not one second less
    assert answer.status == 200
    expiration = _expiration_of_the_one_record(idempotency_table)
    assert before + kept_seconds <= expiration <= after + kept_seconds


def test_an_in_progress_record_lapses_when_the_invocation_would_time_out(
    idempotency_table: str, scratch_registry: Registry
) -> None:
    # GIVEN a tool that looks at its own call's record while it runs, in a Lambda with 30 seconds
    seen: list[dict[str, Any]] = []

    @tool(risk="high", name="lookAtMyRecord")
    def look_at_my_record(args: NoteInput) -> dict[str, object]:
        """Refund, and see the table's mark meanwhile."""
        seen.extend(boto3.client("dynamodb").scan(TableName=idempotency_table)["Items"])
        return {"refunded": args.note}

    # WHEN it is called
    context = FakeLambdaContext(timeout_seconds=30)
    before_ms = int(time.time() * 1000)
    client = MedianTestClient()
    answer = client.send(signed_event("POST", call_body("lookAtMyRecord", {"note": "r"}, callId="call_mark")), context)
    after_ms = int(time.time() * 1000)
    # THEN its record said "in progress" until the invocation's end: a crashed one lapses then, not in an hour
    assert answer.status == 200
    [mark] = seen
    assert mark["status"]["S"] == "INPROGRESS"
    assert before_ms + 29_000 <= int(mark["in_progress_expiration"]["N"]) <= after_ms + 30_000


def test_a_changed_expiry_applies_to_the_next_call_in_the_same_process(
    idempotency_table: str, clean_env: pytest.MonkeyPatch, scratch: ScratchTools
) -> None:
    # GIVEN a call recorded under a two-hour expiry
    clean_env.setenv("IDEMPOTENCY_EXPIRY_SECONDS", "7200")
    client = MedianTestClient()
    assert client.call("countRuns", {"note": "refund"}, callId="call_two_hours").status == 200
    # WHEN the setting changes to a minute within the process, as a test's monkeypatch does, and another call runs
    clean_env.setenv("IDEMPOTENCY_EXPIRY_SECONDS", "60")
    before = int(time.time())
    assert client.call("countRuns", {"note": "refund"}, callId="call_one_minute").status == 200
    after = int(time.time())
    # THEN the new call's record is kept for the minute now set, not the two hours Powertools was first given
    items = boto3.client("dynamodb").scan(TableName=idempotency_table)["Items"]
    [one_minute] = [int(item["expiration"]["N"]) for item in items if int(item["expiration"]["N"]) < before + 3600]
    assert before + 60 <= one_minute <= after + 60
