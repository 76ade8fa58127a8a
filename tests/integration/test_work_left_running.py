"""A call is answered in time whatever threads its tool started wait on, and while their work may still run,
its record is kept: a retry gets its answer, and the tool never runs twice for one callId.

Python cannot stop a thread. A tool's time limit stops the tool on Lambda's main thread, and stops
it again every 0.05 s until it has unwound to the handler (median_lambda/runtime/time_limits.py), so
that a `with ThreadPoolExecutor` block's join, or a `finally` that waits, is cut short and the answer
still comes before the deadline. The threads' own work runs on. Where it may (the tool was stopped
waiting on another thread's work, a thread it started is still alive, or it ran in a worker thread
of its own, off the main thread), its 500 or 504 says so and is recorded instead of released: a
retry gets it, and never runs the tool again while the first run's work may still be writing.

Every server here is real, on loopback: a ledger that counts the writes it takes, behind the fault
relay (tests/fault_relay.py), which sends its answers back a byte every 0.2 s, under every read timeout.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import threading
import time
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda import tool
from median_lambda.authoring.api import ToolContext  # noqa: TC002 - @tool reads the annotation at run time
from median_lambda.testing import FakeLambdaContext, call_body, signed_event
from pydantic import BaseModel

from tests.conftest import AS_DEPLOYED, BOTH
from tests.fault_relay import FaultRelay

if TYPE_CHECKING:
    from collections.abc import Iterator

    from median_lambda.authoring.registry import Registry
    from median_lambda.testing import MedianTestClient, TestAnswer

    from tests.conftest import LogCapture
    from tests.support.ledger import Ledger

# A short function: the tool has about a second and a half, the trickled answers would take half a minute.
FUNCTION_SECONDS = 4.0
TRICKLE_SECONDS = 0.2
TIMED_OUT_LEFT_RUNNING = (
    "The tool did not finish in the time this function had left, and work it started may still be running, so "
    "it is unknown whether it did its work; check before calling it again, with a new callId. Reference {}."
)
CRASHED_LEFT_RUNNING = (
    "The tool failed on the server, and work it started may still be running, so it is unknown whether it did "
    "its work; check before calling it again, with a new callId. Reference {}."
)


class RefundInput(BaseModel):
    order: str = "O-1"


@pytest.fixture
def trickling_ledger(ledger: Ledger) -> Iterator[str]:
    """The ledger's URL behind a relay that sends its answers back a byte every TRICKLE_SECONDS. Closed after the
    test, which ends every request still waiting on it: no thread a tool left outlives its test."""
    with FaultRelay("127.0.0.1", ledger.server_address[1]) as relay:
        relay.trickle(every_seconds=TRICKLE_SECONDS)
        yield relay.endpoint + "/refunds"


@pytest.fixture
def runs(scratch_registry: Registry) -> list[str]:
    """Each run of a tool of the test's, by name."""
    return []


def post_refund(url: str, timeout: float) -> dict[str, Any]:
    """A refund as a tool's worker posts it: with a per-request timeout, which a trickled answer never meets."""
    request = urllib.request.Request(url, data=b'{"order": "O-1"}', method="POST")  # noqa: S310 - the test's own server
    with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - as above
        answer: dict[str, Any] = json.loads(response.read())
        return answer


def post_refund_on_a_thread(url: str) -> None:
    """post_refund, as a thread of the tool's own runs it: its end, when the test closes the relay, is no news."""
    with contextlib.suppress(OSError, http.client.HTTPException):
        post_refund(url, 30.0)


class Called:
    """A call as Median makes it, with FUNCTION_SECONDS left: its answer, its request id, and the milliseconds
    Lambda had left when the answer came."""

    def __init__(self, client: MedianTestClient, tool_name: str, call_id: str) -> None:
        context = FakeLambdaContext(timeout_seconds=FUNCTION_SECONDS)
        body = call_body(tool_name, {}, callId=call_id)
        self.answer: TestAnswer = client.send(signed_event("POST", body, key=client.key), context)
        self.left_ms = context.get_remaining_time_in_millis()
        self.request_id = context.aws_request_id


def left_running_said(logs: LogCapture, tool_name: str, request_id: str) -> None:
    """The log says, once, at ERROR, that the call's work may have outlived its answer, and the tool's first
    invocation's metrics count it."""
    said = [
        record
        for record in logs.records()
        if record["message"].startswith(f"Tool {tool_name} left work running after its answer")
    ]
    assert [record["level"] for record in said if record["reference"] == request_id] == ["ERROR"]
    first_line = next(line for line in logs.metrics() if line.get("tool") == tool_name)
    assert first_line["ToolWorkLeftRunning"] == [1.0]


@pytest.mark.parametrize("configuration", BOTH, indirect=True)
def test_a_tool_fanning_out_in_a_with_block_is_answered_in_time_and_says_its_work_may_still_run(
    trickling_ledger: str,
    runs: list[str],
    client: MedianTestClient,
    configuration: str,
    logs: LogCapture,
) -> None:
    # GIVEN a tool that posts two refunds at once from a pool in a `with` block, to an API whose answers trickle,
    # each within its request's timeout
    @tool(risk="high")
    def refund_both(args: RefundInput, ctx: ToolContext) -> list[dict[str, Any]]:
        """Refund both parts of an order."""
        runs.append("refundBoth")
        with ThreadPoolExecutor(max_workers=2) as pool:
            refunds = [pool.submit(post_refund, trickling_ledger, ctx.http_timeout()) for _ in range(2)]
            return [refund.result() for refund in refunds]

    call_id = f"call_{uuid.uuid4().hex}"
    # WHEN Median calls it, and retries the call
    first = Called(client, "refundBoth", call_id)
    retried = Called(client, "refundBoth", call_id).answer
    # THEN the answer came before the deadline, the block's join of its workers cut short: a 504 saying that
    # the work may still be running, and to check before calling again
    assert first.left_ms > 0
    assert first.answer.status == 504
    assert first.answer.body["error"] == {
        "code": "timeout",
        "message": TIMED_OUT_LEFT_RUNNING.format(first.request_id),
    }
    left_running_said(logs, "refundBoth", first.request_id)
    if configuration == AS_DEPLOYED:
        # AND the retry got that answer, from its record: the tool never ran again while its writes may still land
        assert (retried.status, retried.body) == (504, first.answer.body)
        assert runs == ["refundBoth"]
    else:
        # AND without the table (make serve), nothing is recorded: the retry ran the tool again
        assert runs == ["refundBoth", "refundBoth"]


def test_a_tool_waiting_on_a_pool_it_keeps_is_answered_in_time_and_its_record_kept(
    trickling_ledger: str,
    runs: list[str],
    client: MedianTestClient,
    idempotency_table: str,
    logs: LogCapture,
) -> None:
    # GIVEN a tool that posts a refund from a pool it keeps between calls, and waits for its answer
    pool = ThreadPoolExecutor(max_workers=2)

    @tool(risk="high")
    def refund_from_kept_pool(args: RefundInput, ctx: ToolContext) -> dict[str, Any]:
        """Refund an order."""
        runs.append("refundFromKeptPool")
        return pool.submit(post_refund, trickling_ledger, ctx.http_timeout()).result()

    call_id = f"call_{uuid.uuid4().hex}"
    try:
        # WHEN Median calls it, and retries the call
        first = Called(client, "refundFromKeptPool", call_id)
        retried = Called(client, "refundFromKeptPool", call_id).answer
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    # THEN it was stopped waiting on the pool's work, which runs on: its 504 says so, in time, and is the
    # retry's answer too; the tool ran once
    assert first.left_ms > 0
    assert first.answer.body["error"]["message"] == TIMED_OUT_LEFT_RUNNING.format(first.request_id)
    assert (retried.status, retried.body) == (504, first.answer.body)
    assert runs == ["refundFromKeptPool"]
    left_running_said(logs, "refundFromKeptPool", first.request_id)


@pytest.mark.parametrize("started_a_thread", [True, False], ids=["its thread still running", "no thread"])
def test_a_tool_that_crashes_while_a_thread_it_started_runs_keeps_its_record(
    trickling_ledger: str,
    runs: list[str],
    client: MedianTestClient,
    idempotency_table: str,
    started_a_thread: bool,
) -> None:
    # GIVEN a tool that starts posting a refund on a thread of its own (or does not), then crashes
    @tool(risk="high")
    def refund_then_summarise(args: RefundInput) -> dict[str, Any]:
        """Refund an order, then summarise it."""
        runs.append("refundThenSummarise")
        if started_a_thread:
            threading.Thread(target=post_refund_on_a_thread, args=(trickling_ledger,)).start()
        raise KeyError("summary")  # the bug after the write started

    call_id = f"call_{uuid.uuid4().hex}"
    # WHEN Median calls it, and retries the call
    first = Called(client, "refundThenSummarise", call_id)
    retried = Called(client, "refundThenSummarise", call_id).answer
    assert first.answer.status == 500
    if started_a_thread:
        # THEN its 500 says its work may still be running, and is the retry's answer: the tool ran once
        assert first.answer.body["error"]["message"] == CRASHED_LEFT_RUNNING.format(first.request_id)
        assert (retried.status, retried.body) == (500, first.answer.body)
        assert runs == ["refundThenSummarise"]
    else:
        # THEN (with nothing left running) its record was released, as any crash's: the retry ran it again
        assert first.answer.body["error"]["message"] == f"The tool failed on the server; reference {first.request_id}."
        assert runs == ["refundThenSummarise", "refundThenSummarise"]


def test_a_tool_whose_finally_waits_is_still_answered_in_time(
    runs: list[str], client: MedianTestClient, idempotency_table: str
) -> None:
    # GIVEN a tool that overruns in its own code, and whose `finally` then waits for a signal from another thread
    # that never comes
    never = threading.Event()

    @tool(risk="high")
    def clean_up_slowly(args: RefundInput) -> dict[str, Any]:
        """Refund, and clean up after."""
        runs.append("cleanUpSlowly")
        try:
            while True:
                time.sleep(0.01)
        finally:
            never.wait(30)

    # WHEN Median calls it
    called = Called(client, "cleanUpSlowly", f"call_{uuid.uuid4().hex}")
    # THEN the wait in its `finally` was cut short too: the 504 came before the deadline
    assert called.answer.status == 504
    assert called.answer.body["error"]["code"] == "timeout"
    assert called.left_ms > 0


def test_a_tool_left_running_in_a_worker_thread_keeps_its_record(
    runs: list[str], client: MedianTestClient, idempotency_table: str, logs: LogCapture
) -> None:
    # GIVEN a call handled off the main thread (as a threaded server handles it), where no time limit can be
    # armed: its tool runs in a worker thread of its own, and overruns
    released = threading.Event()

    @tool(risk="high")
    def refund_slowly(args: RefundInput) -> dict[str, Any]:
        """Refund an order."""
        runs.append("refundSlowly")
        ends = time.monotonic() + 30
        while not released.is_set() and time.monotonic() < ends:
            time.sleep(0.01)
        return {"refunded": True}

    call_id = f"call_{uuid.uuid4().hex}"
    answers: list[tuple[TestAnswer]] = []
    caller = threading.Thread(target=lambda: answers.append(Called(client, "refundSlowly", call_id)), daemon=True)
    try:
        # WHEN Median calls it, and retries the call
        caller.start()
        caller.join(3 * FUNCTION_SECONDS)
        retried = Called(client, "refundSlowly", call_id).answer
    finally:
        released.set()
    # THEN the worker thread still running it is said, in time, and its 504 is the retry's answer: the tool ran once
    [first] = answers
    assert first.left_ms > 0
    assert first.answer.body["error"]["message"] == TIMED_OUT_LEFT_RUNNING.format(first.request_id)
    assert (retried.status, retried.body) == (504, first.answer.body)
    assert runs == ["refundSlowly"]
    left_running_said(logs, "refundSlowly", first.request_id)
