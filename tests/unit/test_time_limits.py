"""A tool that overruns the Lambda's remaining time gets a clear 504 `timeout`, not an abrupt Lambda timeout."""

from __future__ import annotations

import json
import signal
import threading
from typing import TYPE_CHECKING

import pytest
from median_lambda.calls.dispatch import STORE_CALL_SECONDS
from median_lambda.calls.idempotency import table_name
from median_lambda.protocol import TOOL_TIME_MARGIN_SECONDS
from median_lambda.testing import FakeLambdaContext, call_body, signed_event

from tests.conftest import with_call_id

if TYPE_CHECKING:
    from median_lambda.testing import MedianTestClient, TestAnswer

    from tests.conftest import LogCapture
    from tests.scratch_tools import ScratchTools

# Time the tool gets: a Lambda this close to its timeout leaves it a fraction of a second.
SHORT_LAMBDA_SECONDS = TOOL_TIME_MARGIN_SECONDS + 0.3


# As deployed: every call goes through the idempotency table, which keeps time for its requests.
pytestmark = pytest.mark.usefixtures("configuration")


def kept_for_the_table() -> float:
    """What a call through the table keeps out of its tool's time: one table request (the answer's save)."""
    return STORE_CALL_SECONDS if table_name() else 0.0


def call_in_short_lambda(client: MedianTestClient, tool: str, call_id: str) -> TestAnswer:
    # As deployed, the Lambda also has room for the in-progress write, before validation.
    timeout = SHORT_LAMBDA_SECONDS + 2 * kept_for_the_table()
    event = signed_event("POST", call_body(tool, {}, callId=call_id))
    return client.send(event, FakeLambdaContext(timeout_seconds=timeout))


def test_a_tool_past_the_remaining_time_is_answered_504_and_logged_with_its_call_id(
    client: MedianTestClient, scratch: ScratchTools, logs: LogCapture
) -> None:
    # GIVEN a tool that runs until released, in a Lambda with little time left
    # WHEN it is called
    answer = call_in_short_lambda(client, "waitForRelease", "call_overrun")
    # THEN the answer is a 504 timeout Median can act on
    assert answer.status == 504
    assert answer.body["ok"] is False
    assert answer.body["error"]["code"] == "timeout"
    assert "unknown whether it did its work" in answer.body["error"]["message"]
    # AND the log says which call timed out
    records = [json.loads(line) for line in logs.lines() if '"level"' in line]
    timed_out = [record for record in records if "timed out" in record["message"]]
    assert [record["call_id"] for record in timed_out] == ["call_overrun"]


def test_a_tool_cannot_swallow_its_timeout(client: MedianTestClient, scratch: ScratchTools) -> None:
    # GIVEN a tool that catches every Exception while it waits
    # WHEN it overruns
    answer = call_in_short_lambda(client, "swallowEveryException", "call_swallow")
    # THEN the endpoint still answers timeout, not the tool's made-up success
    assert answer.status == 504
    assert answer.body["error"]["code"] == "timeout"


def test_a_tool_called_off_the_main_thread_times_out_too(client: MedianTestClient, scratch: ScratchTools) -> None:
    # GIVEN a request handled on a thread other than the main one, as a threaded server would
    answers: list[TestAnswer] = []
    worker = threading.Thread(
        target=lambda: answers.append(call_in_short_lambda(client, "waitForRelease", "call_thread")), daemon=True
    )
    # WHEN its tool overruns
    worker.start()
    worker.join(10)
    # THEN it is answered 504 all the same
    assert answers and answers[0].status == 504
    assert answers[0].body["error"]["code"] == "timeout"


def test_a_tool_sees_the_time_it_has_left_less_the_margin(client: MedianTestClient, scratch: ScratchTools) -> None:
    # GIVEN a Lambda with its longest timeout, fifteen minutes
    # WHEN a tool asks how long it has
    body = with_call_id(call_body("remainingTime"))
    answer = client.send(signed_event("POST", body), FakeLambdaContext(timeout_seconds=900))
    # THEN it is told the time before the endpoint would answer timeout, not the Lambda's own deadline
    # (as deployed, less the time kept for the answer's record): Lambda's time less those, to a tenth of a second
    output = answer.body["output"]
    assert 0 < output["remaining"] <= 900 - TOOL_TIME_MARGIN_SECONDS - kept_for_the_table()
    expected = output["lambdaRemaining"] - TOOL_TIME_MARGIN_SECONDS - kept_for_the_table()
    assert output["remaining"] == pytest.approx(expected, abs=0.1)


def test_a_tool_that_finishes_in_time_leaves_no_alarm_behind(client: MedianTestClient, scratch: ScratchTools) -> None:
    # GIVEN a tool that finishes at once, in a Lambda with little time left
    # WHEN it is called
    answer = call_in_short_lambda(client, "countRunsFresh", "call_quick")
    # THEN it answers normally, and no timer is left to interrupt whatever runs next
    assert answer.status == 200
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_sigalrm_handler_of_the_tools_own_is_left_in_place_and_the_limit_still_holds(
    client: MedianTestClient, scratch: ScratchTools
) -> None:
    # GIVEN a SIGALRM handler that a tool's library installed for its own timeouts
    def library_handler(signum: int, frame: object) -> None:
        raise AssertionError("the endpoint's time limit fired the library's handler")

    previous = signal.signal(signal.SIGALRM, library_handler)
    try:
        # WHEN a tool overruns
        answer = call_in_short_lambda(client, "waitForRelease", "call_foreign_alarm")
        # THEN it is answered 504 timeout all the same
        assert answer.status == 504
        assert answer.body["error"]["code"] == "timeout"
        # AND the library's handler is still the one installed, and no timer of the endpoint's is left armed
        assert signal.getsignal(signal.SIGALRM) is library_handler
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    finally:
        scratch.release.set()
        signal.signal(signal.SIGALRM, previous)


def _carrier_library_alarm(signum: int, frame: object) -> None:
    """A SIGALRM handler as a tool's library installs one for timeouts of its own."""


def test_a_container_whose_sigalrm_is_anothers_says_once_that_its_limits_are_degraded(
    client: MedianTestClient, scratch: ScratchTools, logs: LogCapture
) -> None:
    # GIVEN a container where a tool's library has installed its own SIGALRM handler
    previous = signal.signal(signal.SIGALRM, _carrier_library_alarm)
    try:
        # WHEN Median calls tools in it, again and again
        answers = [call_in_short_lambda(client, "countRunsFresh", f"call_degraded_{n}") for n in range(3)]
    finally:
        signal.signal(signal.SIGALRM, previous)
    # THEN the calls are answered
    assert [answer.status for answer in answers] == [200, 200, 200]
    # AND the container said once, as a warning naming the handler in place, that no time limit can be armed,
    # what that costs, and where to read more
    said = [record for record in logs.records() if "SIGALRM has a handler of another's" in record["message"]]
    assert [(record["level"], record["sigalrm_handler"]) for record in said] == [
        ("WARNING", f"{__name__}._carrier_library_alarm")
    ]
    assert "a tool stopped at its deadline goes on running" in said[0]["message"]
    assert "README.md's security guide" in said[0]["message"]
    # AND counted it once, a metric of the service's and its version's own, apart from the tools' metrics
    emf = [json.loads(line) for line in logs.lines() if line.startswith('{"_aws"')]
    degraded = [document for document in emf if "TimeLimitsDegraded" in document]
    assert [document["_aws"]["CloudWatchMetrics"][0]["Dimensions"] for document in degraded] == [
        [["function_version", "service"]]
    ]
    assert all("TimeLimitsDegraded" not in document for document in emf if "tool" in document)


def test_a_container_whose_sigalrm_is_its_own_says_nothing(
    client: MedianTestClient, scratch: ScratchTools, logs: LogCapture
) -> None:
    # GIVEN a container whose SIGALRM nothing else has taken
    # WHEN Median calls a tool
    answer = call_in_short_lambda(client, "countRunsFresh", "call_not_degraded")
    # THEN it is answered, and nothing is said of SIGALRM
    assert answer.status == 200
    assert not [line for line in logs.lines() if "SIGALRM" in line or "TimeLimitsDegraded" in line]
