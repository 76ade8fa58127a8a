"""A container without the idempotency table says so once, at its start, with what that means for a retry."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from median_lambda.calls.idempotency import applies, log_state_at_cold_start
from median_lambda.runtime.env import forget_settings

if TYPE_CHECKING:
    from tests.conftest import LogCapture

OFF = "Idempotency is off: IDEMPOTENCY_TABLE is not set, so a retried call runs its tool again"


@pytest.mark.parametrize("table", [None, "", "  "], ids=["unset", "empty", "blank"])
def test_without_a_table_the_cold_start_says_a_retry_runs_the_tool_again(
    clean_env: pytest.MonkeyPatch, logs: LogCapture, table: str | None
) -> None:
    # GIVEN no idempotency table named
    if table is None:
        clean_env.delenv("IDEMPOTENCY_TABLE", raising=False)
    else:
        clean_env.setenv("IDEMPOTENCY_TABLE", table)
    forget_settings()
    # WHEN the container starts
    log_state_at_cold_start()
    # THEN one info line says idempotency is off, and what a retry does; no call goes through a record
    assert [(r["level"], r["message"]) for r in logs.records()] == [("INFO", OFF)]
    assert not applies("call_1", idempotent_tool=True)


def test_with_a_table_the_cold_start_says_nothing_and_calls_go_through_it(
    clean_env: pytest.MonkeyPatch, logs: LogCapture
) -> None:
    # GIVEN a table named
    clean_env.setenv("IDEMPOTENCY_TABLE", "median-idempotency")
    forget_settings()
    # WHEN the container starts
    log_state_at_cold_start()
    # THEN nothing is said; a call with a callId to a tool that did not opt out goes through the table
    assert logs.records() == []
    assert applies("call_1", idempotent_tool=True)
    assert not applies("call_1", idempotent_tool=False)
    assert not applies(None, idempotent_tool=True)
    assert not applies("", idempotent_tool=True)
