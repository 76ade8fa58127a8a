"""Retries (docs/protocol.md §6, "Retries and callId"): with the idempotency table on, as template.yaml
deploys it, a callId runs its tool at most once.

The table is made on moto's DynamoDB with the keys and time to live template.yaml declares, and
named to the function as template.yaml names it. The tools that run are the suite's own
(median_lambda/contract/contract_tools/ledger.py), which count their runs: never yours.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from median_lambda.protocol import IDEMPOTENCY_KEY_PREFIX

if TYPE_CHECKING:
    from types import ModuleType

    from median_lambda.contract.deployed import Endpoint


def test_a_retried_call_is_answered_from_its_record_without_running_the_tool_again(
    contract_endpoint: Endpoint, contract_tools: ModuleType
) -> None:
    # GIVEN a call that ran, its answer recorded in the table
    first = contract_endpoint.call("addEntry", {"note": "refund 20"}, callId="call_retry")
    records = contract_endpoint.records()
    assert len(records) == 1, f"the call left {len(records)} records in the table, not one: {records}"
    [record] = records
    assert record["id"]["S"].startswith(f"{IDEMPOTENCY_KEY_PREFIX}#")
    assert record["status"]["S"] == "COMPLETED"
    # WHEN Median sends the same call again, as a network retry does
    retry = contract_endpoint.call("addEntry", {"note": "refund 20"}, callId="call_retry")
    # THEN the retry gets the first answer, and the tool did not run again
    assert first.status == retry.status == 200
    assert retry.body == first.body == {"version": 1, "ok": True, "output": {"run": 1, "note": "refund 20"}}
    assert contract_tools.RUNS["addEntry"] == 1


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [("addEntry", {"note": "refund 500"}), ("removeEntry", {"note": "refund 20"})],
    ids=["other input", "other tool"],
)
def test_a_call_id_reused_for_another_call_is_409_call_id_reused(
    tool: str, tool_input: dict[str, str], contract_endpoint: Endpoint, contract_tools: ModuleType
) -> None:
    # GIVEN a call that ran
    contract_endpoint.call("addEntry", {"note": "refund 20"}, callId="call_once")
    # WHEN the same callId comes with another input, or for another tool
    reused = contract_endpoint.call(tool, tool_input, callId="call_once")
    # THEN it is refused, saying what to do, and no tool ran for it
    assert reused.status == 409
    assert reused.body["error"]["code"] == "call_id_reused"
    assert "Give each call its own callId" in reused.body["error"]["message"]
    assert sum(contract_tools.RUNS.values()) == 1
