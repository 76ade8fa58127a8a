"""A tool's time limit on and off the main thread: what the tool runs on, what its caller gets back.

On Lambda's main thread the tool runs right there, under an interval timer, so that stopping it
unwinds its own `finally` blocks. Off it (a threaded server, a test calling from a thread) it
runs in a worker thread of its own; every outcome a tool can have must come back through it
unchanged: its output, its ToolError, its crash. A tool left behind at its deadline must not
hold the process open, and a SIGALRM after the call must find nothing armed.
"""

from __future__ import annotations

import signal
import threading
from typing import TYPE_CHECKING

import pytest
from median_lambda import tool
from median_lambda.calls.deadline import ToolTimedOut, call_within
from median_lambda.testing import FakeLambdaContext, call_body, signed_event

from tests.scratch_tools import NoteInput  # noqa: TC001 - @tool reads the annotation when it runs

if TYPE_CHECKING:
    from collections.abc import Callable

    from median_lambda.testing import MedianTestClient, TestAnswer

    from tests.scratch_tools import ScratchTools

# Time enough for any tool here that does not wait; the ones that wait are released by the test.
AMPLE_SECONDS = 30


def off_the_main_thread(send: Callable[[], TestAnswer]) -> TestAnswer:
    answers: list[TestAnswer] = []
    worker = threading.Thread(target=lambda: answers.append(send()), daemon=True)
    worker.start()
    worker.join(AMPLE_SECONDS)
    assert answers, "the request handled off the main thread never answered"
    return answers[0]


@pytest.fixture
def thread_of_the_tool(scratch: ScratchTools) -> list[threading.Thread]:
    """A tool, `whereDoIRun`, that notes the thread it runs on."""
    seen: list[threading.Thread] = []

    @tool(risk="low", name="whereDoIRun", idempotent=False)
    def where_do_i_run(args: NoteInput) -> dict[str, object]:
        """Say which thread runs this tool."""
        seen.append(threading.current_thread())
        return {"note": args.note}

    return seen


def test_on_the_main_thread_the_tool_runs_right_there(
    client: MedianTestClient, thread_of_the_tool: list[threading.Thread]
) -> None:
    # GIVEN a request handled on the main thread, as Lambda handles each
    # WHEN its tool is called
    answer = client.call("whereDoIRun", {"note": "here"})
    # THEN the tool ran on the main thread itself, so a timeout would unwind its own finally blocks
    assert answer.status == 200
    assert thread_of_the_tool == [threading.main_thread()]


@pytest.mark.parametrize(
    ("tool_name", "status", "outcome"),
    [
        pytest.param("whereDoIRun", 200, {"note": "there"}, id="its output"),
        pytest.param(
            "declineWithRunCount", 200, {"code": "tool_error", "message": "Declined on run 1."}, id="its ToolError"
        ),
        pytest.param("crashQuotingInput", 500, "internal_error", id="its crash"),
    ],
)
def test_off_the_main_thread_every_outcome_of_the_tool_comes_back_unchanged(
    client: MedianTestClient,
    thread_of_the_tool: list[threading.Thread],
    tool_name: str,
    status: int,
    outcome: object,
) -> None:
    # GIVEN a request handled on a thread other than the main one, with time enough
    # WHEN its tool returns, declines or crashes
    answer = off_the_main_thread(
        lambda: client.send(
            signed_event("POST", call_body(tool_name, {"note": "there"}), key=client.key),
            FakeLambdaContext(timeout_seconds=AMPLE_SECONDS),
        )
    )
    # THEN the caller gets that very outcome, as it would on the main thread
    assert answer.status == status
    if status == 500:
        assert answer.body["error"]["code"] == outcome
    elif "code" in outcome:  # type: ignore[operator]
        assert answer.body["error"] == outcome
    else:
        assert answer.body["output"] == outcome


def test_a_tool_left_behind_at_its_deadline_does_not_hold_the_process_open(scratch: ScratchTools) -> None:
    # GIVEN a tool that runs on after its time is up, called off the main thread
    left_behind: list[threading.Thread] = []

    def overrun() -> None:
        left_behind.append(threading.current_thread())
        scratch.release.wait(AMPLE_SECONDS)

    outcome: list[BaseException] = []

    def caller() -> None:
        try:
            call_within(0.05, overrun, {})
        except ToolTimedOut as timed_out:
            outcome.append(timed_out)

    # Not a daemon itself, as a threaded server's request threads are not: the tool's thread must
    # be made a daemon, not inherit its caller's flag.
    worker = threading.Thread(target=caller, daemon=False)
    # WHEN its time is up
    worker.start()
    worker.join(AMPLE_SECONDS)
    # THEN the caller gets ToolTimedOut, and the thread left running the tool is a daemon
    # (the interpreter does not wait for it to exit), named so a thread dump shows what it is
    assert [type(error) for error in outcome] == [ToolTimedOut]
    [thread] = left_behind
    assert thread.daemon is True
    assert thread.name == "median-tool"
    scratch.release.set()


@pytest.mark.parametrize("overruns", [False, True], ids=["finished in time", "timed out"])
def test_after_a_call_a_sigalrm_finds_nothing_armed(scratch: ScratchTools, overruns: bool) -> None:
    # GIVEN a call on the main thread that finished in time, or was stopped at its deadline
    def tool_function() -> str:
        if overruns:
            scratch.release.wait(AMPLE_SECONDS)
        return "done"

    try:
        call_within(0.05 if overruns else AMPLE_SECONDS, tool_function, {})
    except ToolTimedOut:
        assert overruns
    # WHEN a SIGALRM arrives afterwards (a late one, or another library's)
    signal.raise_signal(signal.SIGALRM)
    # THEN it stops nothing: whatever runs next runs on
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_no_time_left_is_a_timeout_before_the_tool_starts(scratch: ScratchTools) -> None:
    # GIVEN no time left at all
    started: list[bool] = []
    # WHEN a tool would be called
    # THEN it is a timeout, and the tool never started
    with pytest.raises(ToolTimedOut):
        call_within(0, lambda: started.append(True), {})
    assert started == []


def test_with_no_sigalrm_handler_yet_the_first_call_installs_the_limit_and_leaves_it(scratch: ScratchTools) -> None:
    # GIVEN a process where SIGALRM has its default action, as a fresh Lambda container's has
    previous = signal.signal(signal.SIGALRM, signal.SIG_DFL)
    ran_on: list[threading.Thread] = []

    def overrun() -> None:
        ran_on.append(threading.current_thread())
        scratch.release.wait(AMPLE_SECONDS)

    try:
        # WHEN a tool overruns on the main thread
        with pytest.raises(ToolTimedOut):
            call_within(0.05, overrun, {})
        # THEN it ran on the main thread and was stopped there, and the endpoint's handler stays
        # installed for the next call (installing it costs more than the rest of the limit)
        assert ran_on == [threading.main_thread()]
        installed = signal.getsignal(signal.SIGALRM)
        assert callable(installed)
        assert installed not in (signal.SIG_DFL, signal.SIG_IGN)
    finally:
        signal.signal(signal.SIGALRM, previous)
