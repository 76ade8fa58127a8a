"""A failed save of a tool's answer where the call has no deadline at all (no Lambda context).

With no deadline there is no time to run out of: the save is tried once more, and a retry gets
the answer when that try lands; when it fails too, the log says the answer is not recorded, and
names no lapse (no invocation's end is known). Where a deadline is set, the same paths are tested
in tests/integration/test_idempotency_faults.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from median_lambda import app, tool
from median_lambda.calls import idempotency
from median_lambda.testing import answer_of, call_body, dev_key, signed_event

from tests.fault_relay import Fault
from tests.scratch_tools import NoteInput  # noqa: TC001 - @tool reads the annotation when it runs

# Powertools says so of every call without a Lambda context, which is what is tested here.
pytestmark = pytest.mark.filterwarnings("ignore:Couldn't determine the remaining time left:UserWarning")

if TYPE_CHECKING:
    from median_lambda.testing import MedianTestClient, TestAnswer

    from tests.conftest import LogCapture
    from tests.fault_relay import FaultRelay
    from tests.scratch_tools import ScratchTools


@pytest.fixture
def relay(fault_relay: FaultRelay, idempotency_table: str, clean_env: pytest.MonkeyPatch) -> FaultRelay:
    """The idempotency table, reached only through the relay, by a client made anew (a new container)."""
    clean_env.setenv("AWS_ENDPOINT_URL_DYNAMODB", fault_relay.endpoint)
    clean_env.setattr(idempotency, "_clients", [])
    clean_env.setattr(idempotency, "_stores", {})
    return fault_relay


def call_without_a_context(client: MedianTestClient, call_id: str) -> TestAnswer:
    event = signed_event("POST", call_body("refundThenBreakTheTable", {"note": "r"}, callId=call_id), key=client.key)
    with dev_key(client.key):
        return answer_of(app.lambda_handler(event, None))  # type: ignore[arg-type]


def register_refund(scratch: ScratchTools, relay: FaultRelay, fault: Any) -> None:
    @tool(risk="high", name="refundThenBreakTheTable")
    def refund_then_break_the_table(args: NoteInput) -> dict[str, object]:
        """Refund, while the idempotency table fails."""
        scratch.runs["refund"] += 1
        fault(relay)
        return {"refunded": args.note}


def test_with_no_deadline_a_save_lost_once_is_made_again(
    client: MedianTestClient, scratch: ScratchTools, relay: FaultRelay, logs: LogCapture
) -> None:
    # GIVEN no Lambda context, and a tool after which the table loses the next request only
    register_refund(scratch, relay, lambda relay: relay.fail(Fault.RESET, times=1))
    # WHEN it is called, and retried
    answer = call_without_a_context(client, "call_no_deadline_blip")
    retry = call_without_a_context(client, "call_no_deadline_blip")
    # THEN the save was made on a second try, and the retry got the answer without a second run
    assert answer.status == 200
    assert retry.body == answer.body
    assert scratch.runs["refund"] == 1
    [second_try] = [r for r in logs.records() if "second try" in r["message"]]
    assert second_try["message"] == "The answer was recorded on a second try"
    assert (second_try["call_id"], second_try["tool"]) == ("call_no_deadline_blip", "refundThenBreakTheTable")


def test_with_no_deadline_a_save_that_fails_twice_is_logged_with_no_lapse(
    client: MedianTestClient, scratch: ScratchTools, relay: FaultRelay, logs: LogCapture
) -> None:
    # GIVEN no Lambda context, and a tool after which the table refuses every request
    register_refund(scratch, relay, lambda relay: relay.answer_with_error("AccessDeniedException", "not authorized"))
    # WHEN it is called
    answer = call_without_a_context(client, "call_no_deadline_down")
    # THEN the tool's answer is sent, and the log says what a retry will
    # get, naming the call, the tool and AWS's error, and no lapse
    assert answer.status == 200
    assert answer.body["output"] == {"refunded": "r"}
    [unrecorded] = [r for r in logs.records() if r["message"].startswith("The answer is not recorded")]
    assert unrecorded["message"] == (
        "The answer is not recorded: a retry gets 409 in_progress until the in-progress mark lapses, "
        "and would then run the tool again"
    )
    assert unrecorded["level"] == "ERROR"
    assert (unrecorded["call_id"], unrecorded["tool"]) == ("call_no_deadline_down", "refundThenBreakTheTable")
    assert unrecorded["aws_error_code"] == "AccessDeniedException"
    assert unrecorded.get("lapses_at") is None
