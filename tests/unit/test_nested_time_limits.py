"""The process's one SIGALRM timer, shared by nested limits (handler/runtime/time_limits.py).

A tool's own limit stops it; inside it, the limits of its outbound calls interrupt them. Which
one is raised when several are due, where an interrupting one may land, and that nothing stays
armed once they are lifted: each is what a call cut short, or a tool left running, depends on.
"""

from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pytest
from median_lambda.runtime import time_limits

if TYPE_CHECKING:
    from collections.abc import Iterator

# Long enough that the wait below never ends on its own before a limit is due.
WAIT_SECONDS = 5.0


class Stopped(BaseException):
    pass


class Interrupted(Exception):
    pass


class InnerInterrupted(Exception):
    pass


@pytest.fixture(autouse=True)
def nothing_left_armed() -> Iterator[None]:
    yield
    time_limits.lift_all()
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def soon(seconds: float = 0.05) -> float:
    return time.monotonic() + seconds


def wait_in_network_code() -> None:
    """Wait as an HTTP client waits for its answer: in the socket module's reader (http.client's, urllib's)."""
    import socket

    left, right = socket.socketpair()
    try:
        left.settimeout(WAIT_SECONDS)
        with left.makefile("rb") as reader:
            reader.read(1)
    finally:
        left.close()
        right.close()


@contextmanager
def armed(*limits: time_limits.Limit | None) -> Iterator[None]:
    """Lift the limits however the block ends: one that repeats must not outlast its test."""
    try:
        yield
    finally:
        for limit in limits:
            time_limits.pop(limit)


def test_a_limit_that_stops_is_raised_where_the_code_waits() -> None:
    # GIVEN a limit that stops, due in a moment
    limit = time_limits.arm(soon(), Stopped, stops=True)
    # WHEN the code waits past it
    with pytest.raises(Stopped):
        time.sleep(WAIT_SECONDS)
    # THEN it was raised there, once
    assert time_limits.fired(limit)


def test_the_innermost_interrupting_limit_is_raised_and_holds_the_outer_one_back() -> None:
    # GIVEN an interrupting limit (a tool's outbound time) and one inside it (an AWS call's), due together
    outer = time_limits.arm(soon(), Interrupted, repeats=True)
    inner = time_limits.arm(soon(), InnerInterrupted)
    with armed(outer):
        # WHEN the code waits past both
        with pytest.raises(InnerInterrupted):
            time.sleep(WAIT_SECONDS)
        # THEN the inner one's error came, and the outer one is held back while the inner is armed
        time.sleep(3 * time_limits.REPEAT_SECONDS)
        assert not time_limits.fired(outer)
        # AND once the inner one is lifted, the outer one comes in turn
        time_limits.pop(inner)
        with pytest.raises(Interrupted):
            time.sleep(WAIT_SECONDS)


def test_a_due_limit_that_stops_wins_over_any_that_interrupts() -> None:
    # GIVEN a tool's limit that stops, and an outbound one inside it, both due
    tool = time_limits.arm(soon(), Stopped, stops=True)
    time_limits.arm(soon(), Interrupted, repeats=True)
    # WHEN the code waits past them
    # THEN the tool is stopped: its time is up, whatever it was doing
    with armed(tool), pytest.raises(Stopped):
        time.sleep(WAIT_SECONDS)


def test_an_interrupting_limit_meant_for_network_code_waits_for_it() -> None:
    # GIVEN a limit that may interrupt network code only, already due
    limit = time_limits.arm(soon(0.0), Interrupted, only_in=time_limits.in_network_code, repeats=True)
    with armed(limit):
        # WHEN the code first waits in its own code, then in a socket's
        time.sleep(3 * time_limits.REPEAT_SECONDS)
        assert not time_limits.fired(limit)
        # THEN it is raised only in the socket's wait
        with pytest.raises(Interrupted):
            wait_in_network_code()
        assert time_limits.fired(limit)


def test_a_repeating_limit_is_raised_again_while_its_code_goes_on() -> None:
    # GIVEN a repeating limit past due, its first error caught as a library's retry would catch it
    with armed(time_limits.arm(soon(0.0), Interrupted, repeats=True)):
        with pytest.raises(Interrupted):
            time.sleep(WAIT_SECONDS)
        # WHEN the code goes on waiting
        # THEN it meets the error again
        with pytest.raises(Interrupted):
            time.sleep(WAIT_SECONDS)


def test_a_limit_that_does_not_repeat_is_raised_once() -> None:
    # GIVEN an AWS call's limit past due, its error raised once
    with armed(time_limits.arm(soon(0.0), Interrupted)):
        with pytest.raises(Interrupted):
            time.sleep(WAIT_SECONDS)
        # WHEN botocore goes on with what it raised
        # THEN nothing more is raised: its veto on retries does the rest
        time.sleep(3 * time_limits.REPEAT_SECONDS)


def test_lifting_a_limit_lifts_those_armed_inside_it_and_disarms_the_timer() -> None:
    # GIVEN a limit with two inside it, and a lifted limit left nothing behind
    outer = time_limits.arm(soon(WAIT_SECONDS), Stopped, stops=True)
    time_limits.arm(soon(WAIT_SECONDS), Interrupted)
    time_limits.arm(soon(WAIT_SECONDS), InnerInterrupted)
    # WHEN the outer one is lifted (a tool's end, whatever its calls left armed)
    time_limits.pop(outer)
    # THEN no timer is left to fire
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_dropping_a_stale_limit_keeps_those_armed_inside_it() -> None:
    # GIVEN an AWS call's limit left armed by a call that ended early, and a tool's limit armed after it
    stale = time_limits.arm(soon(WAIT_SECONDS), Interrupted)
    assert stale is not None
    tool = time_limits.arm(soon(), Stopped, stops=True)
    with armed(tool):
        # WHEN the stale one is dropped alone
        time_limits.drop(stale)
        # THEN the tool's limit still holds
        with pytest.raises(Stopped):
            time.sleep(WAIT_SECONDS)
        assert time_limits.fired(tool)


def test_off_the_main_thread_no_limit_is_armed() -> None:
    # GIVEN code on a thread of its own, where no signal reaches
    armed: list[object] = []
    worker = threading.Thread(target=lambda: armed.append(time_limits.arm(soon(), Stopped, stops=True)))
    # WHEN it asks for a limit
    worker.start()
    worker.join(WAIT_SECONDS)
    # THEN none is armed, and its caller falls back to its own bounds
    assert armed == [None]


def test_the_invocations_deadline_keeps_the_time_asked_for_its_answer() -> None:
    # GIVEN a Lambda context with 3 s left, and one that is none
    class Context:
        def get_remaining_time_in_millis(self) -> int:
            return 3000

    # WHEN the outbound deadline is worked out, keeping half a second for the answer
    deadline = time_limits.invocation_deadline(Context(), 0.5)
    # THEN it is 2.5 s from now; without a context there is none
    assert deadline is not None
    assert deadline - time.monotonic() == pytest.approx(2.5, abs=0.1)
    assert time_limits.invocation_deadline(None, 0.5) is None
