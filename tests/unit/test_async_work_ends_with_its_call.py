"""What an async tool starts ends with its call: nothing it left on the container's event loop runs afterwards.

The loop is kept from call to call (a client made once keeps its connections), so a task a call
made and left (`asyncio.create_task` never awaited, the inner write of an `asyncio.shield`) would
run during the next call, in its invocation, with its environment, and in a project's tests during
the next test. So once the tool's coroutine has ended, whatever its outcome, every other task on
the loop is cancelled and given 0.05 s to end (median_lambda/calls/event_loop.py); one that will not
end makes the loop be replaced, never to run it again, and counts as work the call left running,
as work it handed to a thread does (`asyncio.to_thread`), which nothing can stop: its 500 or 504
is then recorded, so a retry never runs the tool again while that work may still be writing.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from median_lambda import tool
from median_lambda.calls.dispatch import STORE_CALL_SECONDS
from median_lambda.protocol import IDEMPOTENCY_TABLE_ENV, TOOL_TIME_MARGIN_SECONDS, TOOLS_PACKAGE_ENV
from median_lambda.testing import FakeLambdaContext, call_body, signed_event
from pydantic import BaseModel

if TYPE_CHECKING:
    from median_lambda.authoring.registry import Registry
    from median_lambda.testing import MedianTestClient, TestAnswer

# A Lambda this close to its timeout leaves its input's validation 0.2 s, beside the idempotency table's two
# requests, and its tool that and the second request's time: 1.2 s.
SHORT_LAMBDA_SECONDS = TOOL_TIME_MARGIN_SECONDS + 0.2 + 2 * STORE_CALL_SECONDS
TOOL_SECONDS = SHORT_LAMBDA_SECONDS - TOOL_TIME_MARGIN_SECONDS - STORE_CALL_SECONDS
# How long a task left behind waits before it writes: past the end of the call that left it, and well within
# the next call, which waits longer.
WRITES_AFTER_SECONDS = TOOL_SECONDS + 0.3
NEXT_CALL_SECONDS = WRITES_AFTER_SECONDS + 0.5
PROJECT_ROOT = Path(__file__).resolve().parents[2]


class NoteInput(BaseModel):
    note: str = ""


@pytest.fixture
def client(client_as_median: MedianTestClient) -> MedianTestClient:
    """Every call with a callId of its own, served as deployed: through the idempotency table."""
    return client_as_median


@pytest.fixture
def writes(scratch_registry: Registry) -> list[str]:
    """What the tools' writes left behind have written, and `nextCall`, a tool that awaits for a second."""
    written: list[str] = []

    @tool(risk="low", idempotent=False)
    async def next_call(args: NoteInput) -> str:
        """Wait on a slow service, as the next call of the container does."""
        await asyncio.sleep(NEXT_CALL_SECONDS)
        return "waited"

    return written


async def write_later(written: list[str], what: str) -> None:
    await asyncio.sleep(WRITES_AFTER_SECONDS)
    written.append(what)


def call_in_short_lambda(client: MedianTestClient, name: str, call_id: str) -> tuple[TestAnswer, int]:
    """The tool called with little time left, and the milliseconds Lambda had left when the answer came."""
    context = FakeLambdaContext(timeout_seconds=SHORT_LAMBDA_SECONDS)
    answer = client.send(signed_event("POST", call_body(name, {}, callId=call_id)), context)
    return answer, context.get_remaining_time_in_millis()


def test_a_timed_out_calls_shielded_write_never_runs_during_the_next_call(
    writes: list[str], client: MedianTestClient
) -> None:
    # GIVEN an async tool whose write, shielded from its cancellation, would land after its deadline
    @tool(risk="high")
    async def shielded_refund(args: NoteInput) -> str:
        """Refund, shielding the write."""
        await asyncio.shield(write_later(writes, "refund"))
        return "refunded"

    # WHEN it is cut at its deadline, and the container then serves a call that lasts past the write's time
    answer, left = call_in_short_lambda(client, "shieldedRefund", f"call_{uuid.uuid4().hex}")
    after = client.call("nextCall", {})
    # THEN the first was answered 504 in time, the next one as ever, and the write never ran
    assert (answer.status, left > 0) == (504, True)
    assert after.body["output"] == "waited"
    assert writes == []


def test_a_task_a_call_created_and_left_never_runs_during_the_next_call(
    writes: list[str], client: MedianTestClient
) -> None:
    # GIVEN an async tool that answers at once, leaving a task of its own to write later
    kept: list[asyncio.Task[None]] = []

    @tool(risk="high")
    async def refund_in_background(args: NoteInput) -> str:
        """Refund, in the background."""
        kept.append(asyncio.get_running_loop().create_task(write_later(writes, "refund")))
        return "queued"

    # WHEN it is called, and the container then serves a call that lasts past the write's time
    answer = client.call("refundInBackground", {})
    after = client.call("nextCall", {})
    # THEN both were answered, and the task left behind was cancelled with the call that made it: it never wrote
    assert (answer.body["output"], after.body["output"]) == ("queued", "waited")
    assert writes == []
    assert kept[0].cancelled()


def test_a_task_that_will_not_end_is_work_left_running_and_its_loop_is_replaced(
    writes: list[str], client: MedianTestClient
) -> None:
    # GIVEN an async tool that starts a task that refuses its cancellation, then crashes
    stubborn_loops: list[asyncio.AbstractEventLoop] = []

    async def refuses_to_stop() -> None:
        while True:
            try:
                await asyncio.sleep(WRITES_AFTER_SECONDS)
                writes.append("late write")
            except asyncio.CancelledError:
                continue

    @tool(risk="high")
    async def refund_and_crash(args: NoteInput) -> str:
        """Refund, then summarise."""
        stubborn_loops.append(asyncio.get_running_loop())
        asyncio.get_running_loop().create_task(refuses_to_stop())
        await asyncio.sleep(0)
        raise KeyError("summary")

    call_id = f"call_{uuid.uuid4().hex}"
    # WHEN Median calls it, retries the call, and the container serves another call
    first = client.call("refundAndCrash", {}, callId=call_id)
    retried = client.call("refundAndCrash", {}, callId=call_id)
    after = client.call("nextCall", {})
    # THEN its 500 says its work may still be running, and is the retry's answer: the tool ran once
    assert first.status == 500
    assert "work it started may still be running" in first.body["error"]["message"]
    assert (retried.status, retried.body) == (500, first.body)
    assert len(stubborn_loops) == 1
    # AND the loop it was left on was closed, the task never to run again, and the next call was served on another
    assert stubborn_loops[0].is_closed()
    assert after.body["output"] == "waited"
    assert writes == []


def test_work_handed_to_a_thread_that_outlives_its_timed_out_call_keeps_its_record(
    scratch_registry: Registry, client: MedianTestClient
) -> None:
    # GIVEN an async tool that hands a slow write to a thread (asyncio.to_thread), once its executor has a thread
    @tool(risk="high")
    async def write_on_a_thread(args: NoteInput) -> str:
        """Write, on a thread."""
        await asyncio.to_thread(time.sleep, float(args.note or "0"))
        return "written"

    assert client.call("writeOnAThread", {"note": "0"}).body["output"] == "written"
    call_id = f"call_{uuid.uuid4().hex}"
    # WHEN it is cut at its deadline, with the thread's work still running, and the call is retried
    slow = {"note": str(TOOL_SECONDS + 1.0)}
    first, left = call_in_short_lambda_with(client, "writeOnAThread", call_id, slow)
    retried, _ = call_in_short_lambda_with(client, "writeOnAThread", call_id, slow)
    # THEN its 504 says that work may still be running, in time, and is the retry's answer
    assert (first.status, left > 0) == (504, True)
    assert "work it started may still be running" in first.body["error"]["message"]
    assert (retried.status, retried.body) == (504, first.body)


def call_in_short_lambda_with(
    client: MedianTestClient, name: str, call_id: str, tool_input: dict[str, str]
) -> tuple[TestAnswer, int]:
    context = FakeLambdaContext(timeout_seconds=SHORT_LAMBDA_SECONDS)
    answer = client.send(signed_event("POST", call_body(name, tool_input, callId=call_id)), context)
    return answer, context.get_remaining_time_in_millis()


_TOOLS = """
import asyncio
import os

from pydantic import BaseModel

from median_lambda import tool

WRITES = []


class Nothing(BaseModel):
    pass


async def write_later():
    await asyncio.sleep(0.3)
    WRITES.append(os.environ.get("WHICH_TEST"))


@tool(risk="high", idempotent=False)
async def refund_in_background(args: Nothing) -> str:
    '''Refund, in the background.'''
    asyncio.get_running_loop().create_task(write_later())
    return "queued"


@tool(risk="low", idempotent=False)
async def wait_a_moment(args: Nothing) -> str:
    '''Wait on a slow service.'''
    await asyncio.sleep(0.8)
    return "waited"
"""

_TESTS = """
from median_lambda.testing import MedianTestClient

from {package} import ledger


def test_a_leaves_a_task(monkeypatch):
    monkeypatch.setenv("WHICH_TEST", "a")
    assert MedianTestClient().call("refundInBackground", {{}}).body["output"] == "queued"


def test_b_sees_none_of_it(monkeypatch):
    monkeypatch.setenv("WHICH_TEST", "b")
    assert MedianTestClient().call("waitAMoment", {{}}).body["output"] == "waited"
    assert ledger.WRITES == []
"""


def test_a_task_left_by_one_of_a_projects_tests_never_runs_during_the_next(tmp_path: Path) -> None:
    # GIVEN a project whose async tool leaves a task that writes a moment later, with its test's environment,
    # and two tests: the first calls that tool, the second a tool that waits past the write's time
    package = f"async_tools_{uuid.uuid4().hex[:8]}"
    (tmp_path / package).mkdir()
    (tmp_path / package / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / package / "ledger.py").write_text(_TOOLS, encoding="utf-8")
    (tmp_path / "test_in_turn.py").write_text(_TESTS.format(package=package), encoding="utf-8")
    environment = {**os.environ, "PYTHONPATH": str(tmp_path), TOOLS_PACKAGE_ENV: package}
    environment.pop(IDEMPOTENCY_TABLE_ENV, None)
    # WHEN the project's tests run, in that order
    finished = subprocess.run(  # noqa: S603 - this interpreter, this test's own files
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_in_turn.py")],
        env=environment,
        cwd=tmp_path,
        capture_output=True,
        check=False,
        timeout=120,
    )
    # THEN both pass: the second test's call never ran the first's task
    assert finished.returncode == 0, finished.stdout.decode()[-3000:]
    assert "2 passed" in finished.stdout.decode()
