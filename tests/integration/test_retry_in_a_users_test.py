"""A retry can be tried in a user's test: MedianTestClient's callIds and retry(), and the idempotency table as deployed.

MedianTestClient sends every call with a fresh callId, as Median does, and `retry()` sends the
last one again with the same callId. `median_aws.idempotency_table()` turns the table on for
one test, shaped as template.yaml makes it, so a retried call runs its tool once; without it
(as under `make serve`), the tool runs again, which the test can see too.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest
from median_lambda import ToolContext, tool
from median_lambda.project.sam_config import load_template
from median_lambda.testing import MedianAWS, MedianTestClient
from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from median_lambda.authoring.registry import Registry

    from tests.scratch_tools import ScratchTools


class NoteInput(BaseModel):
    note: str = Field(default="", description="Anything; the tool says it back.")


@pytest.fixture
def seen_call_ids(scratch_registry: Registry) -> list[str | None]:
    """A tool, `whichCall`, that records the callId each of its runs was given."""
    seen: list[str | None] = []

    @tool(risk="low", name="whichCall")
    def which_call(args: NoteInput, ctx: ToolContext) -> dict[str, object]:
        """Say which callId this run was given."""
        seen.append(ctx.call_id)
        return {"callId": ctx.call_id, "note": args.note}

    return seen


def test_each_call_carries_a_fresh_call_id_as_medians_do(seen_call_ids: list[str | None]) -> None:
    # GIVEN a user's test client
    client = MedianTestClient()
    # WHEN it calls a tool twice
    first, second = client.call("whichCall", {}), client.call("whichCall", {})
    # THEN each call carried a callId of its own, which the tool saw, and the client remembers the last
    assert first.body["output"]["callId"] != second.body["output"]["callId"]
    assert all(str(call_id).startswith("call_") for call_id in seen_call_ids)
    assert client.last_call_id == seen_call_ids[-1]


def test_a_call_id_can_be_named_or_left_out(seen_call_ids: list[str | None]) -> None:
    # GIVEN a user's test client, and one made to send none
    client, bare = MedianTestClient(), MedianTestClient(call_ids=False)
    # WHEN a call names its callId, another says None, and the bare client names none
    client.call("whichCall", {}, callId="call_1")
    client.call("whichCall", {}, callId=None)
    bare.call("whichCall", {})
    # THEN the tool sees the named one, then none, then none: ctx.call_id is None without a callId
    assert seen_call_ids == ["call_1", None, None]
    assert (client.last_call_id, bare.last_call_id) == (None, None)


def test_retry_sends_the_last_call_again_with_its_call_id(seen_call_ids: list[str | None]) -> None:
    # GIVEN a call made, with no idempotency table to answer a retry from
    client = MedianTestClient()
    first = client.call("whichCall", {"note": "credit 5"})
    # WHEN it is retried
    again = client.retry()
    # THEN the tool ran again on the same call: its callId and input, as Median retries a call it got no answer to
    assert again.body == first.body
    assert seen_call_ids == [client.last_call_id, client.last_call_id]


def test_retry_before_any_call_says_what_to_do_first() -> None:
    # GIVEN a client that has made no call
    # WHEN a test retries
    # THEN it is told to make the call first
    with pytest.raises(RuntimeError, match=r"make a call with call\(\) first"):
        MedianTestClient().retry()


def test_with_the_table_on_a_retried_call_runs_its_tool_once(median_aws: MedianAWS, scratch: ScratchTools) -> None:
    # GIVEN the idempotency table on, as deployed
    name = median_aws.idempotency_table()
    client = MedianTestClient()
    # WHEN a call is made, then retried twice
    first = client.call("countRuns", {"note": "credit 5"})
    retries = [client.retry(), client.retry()]
    # THEN the tool ran once, and each retry got the first answer
    assert scratch.runs["countRuns"] == 1
    assert [retry.body for retry in retries] == [first.body, first.body]
    # AND the table is named for this test alone
    assert os.environ["IDEMPOTENCY_TABLE"] == name


def test_without_the_table_a_retried_call_runs_its_tool_again(median_aws: MedianAWS, scratch: ScratchTools) -> None:
    # GIVEN no idempotency table: the earlier test's is not this one's
    assert "IDEMPOTENCY_TABLE" not in os.environ
    client = MedianTestClient()
    # WHEN a call is made, then retried
    client.call("countRuns", {"note": "credit 5"})
    client.retry()
    # THEN the tool ran twice, as under make serve
    assert scratch.runs["countRuns"] == 2


def test_the_tests_table_is_the_one_template_yaml_deploys(median_aws: MedianAWS) -> None:
    # GIVEN template.yaml's idempotency table, and the one a test turns on
    deployed = load_template()["Resources"]["IdempotencyTable"]["Properties"]
    name = median_aws.idempotency_table()
    dynamodb = median_aws.client("dynamodb")
    # WHEN moto describes the test's table
    table = dynamodb.describe_table(TableName=name)["Table"]
    ttl = dynamodb.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
    # THEN its key and its time to live are the deployed table's, which Powertools reads and writes
    assert table["KeySchema"] == deployed["KeySchema"]
    assert table["AttributeDefinitions"] == deployed["AttributeDefinitions"]
    assert (ttl["TimeToLiveStatus"], ttl["AttributeName"]) == (
        "ENABLED",
        deployed["TimeToLiveSpecification"]["AttributeName"],
    )
