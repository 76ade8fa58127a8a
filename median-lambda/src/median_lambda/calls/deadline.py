"""Run a tool with a time limit, so that a slow tool gets a 504 `timeout` answer instead of Lambda's abrupt kill.

Why SIGALRM, with a thread as the fallback: the limit must be cheap on the happy path,
where a warm POST is measured against HMAC + json.loads + json.dumps (~9 us). Arming and
disarming an interval timer costs ~1 us; starting and joining a thread costs ~180 us, and
handing the tool to a thread kept for it ~19 us (a SimpleQueue each way; ~60 us through a
ThreadPoolExecutor of one: measured here, docs/performance.md). The alarm also stops the tool
(its exception unwinds the tool's `finally` blocks), where a thread left behind would run on
into the next invocation. Signal handlers run only in the main thread, which is where Lambda
calls the handler; elsewhere (a threaded server, a test calling from a thread), or when
something else owns SIGALRM, the tool runs in a worker thread instead and is abandoned, still
running, when its time is up.

The stop is raised again every time_limits.REPEAT_SECONDS until it is back here, so what the
tool's unwinding waits on (a `with ThreadPoolExecutor` block's join, a `finally` waiting on a
lock or a queue) is cut short too, and the answer still comes in time. Python cannot stop a
thread, though: ToolTimedOut says when the work the call started may still be running (its
stop landed in code waiting on another thread's or a process's work, or it was left running in
a worker thread), which dispatch answers by keeping the call's record rather than letting a
retry run the tool beside it (median_lambda/calls/dispatch.py).

What no signal reaches is a C call that does not return to the interpreter until it is done
(sqlite3 waiting on a locked database, libpq, getaddrinfo): Python runs a handler only between
two steps of Python code, so such a tool runs past every limit, to Lambda's own timeout
(docs/writing-tools.md says what follows, and which timeouts to set). Answering in time all the
same would take the tool off the main thread on every call, at the costs above.

The timer is the process's one (median_lambda/runtime/time_limits.py), shared with the limits armed
inside a tool's: its AWS calls', and, with `interrupt_after`, the time by which its own outbound
calls must have ended, past which a sync tool's waits on the network (an HTTP or AWS client's, a
socket's; never its own code, nor a library's code computing with an answer that came) are
interrupted with `OutboundTimeUp`, a TimeoutError its HTTP library reports as its own timeout.
"""

from __future__ import annotations

import threading
from contextvars import copy_context
from typing import TYPE_CHECKING, Any

from median_lambda.runtime import time_limits

if TYPE_CHECKING:
    from collections.abc import Callable


class ToolTimedOut(Exception):
    """The tool did not finish in the time it had; whether its work was done is unknown.

    `work_left_running`: work the call started may still be running (see the module's docstring).
    `stopped`: what the limit raised where the tool was, its traceback showing the place; `left_in`: the
    worker thread left running it. Either tells the author where it was (median_lambda/authoring/local_crash.py).
    """

    def __init__(
        self,
        *,
        work_left_running: bool = False,
        stopped: BaseException | None = None,
        left_in: threading.Thread | None = None,
    ) -> None:
        super().__init__("the tool did not finish in the time it had")
        self.work_left_running = work_left_running
        self.stopped = stopped
        self.left_in = left_in


class DeadlinePassed(time_limits.Stopped):
    """Raised inside the tool by the alarm: a BaseException, so a tool's `except Exception` cannot swallow it."""


class OutboundTimeUp(TimeoutError):
    """Raised in a sync tool's wait on the network once the time for its outbound calls is up.

    A TimeoutError, as a socket's own timeout is: httpx reports it as httpx.ReadTimeout (or
    ConnectTimeout), requests and urllib3 as their read timeouts, urllib as the TimeoutError it
    is, so the tool's `except` for its library's errors turns it into its own ToolError.
    """

    def __init__(self) -> None:
        super().__init__("the time this call had for its outbound calls is up")


def call_within(
    seconds: float, function: Callable[..., Any], kwargs: dict[str, Any], interrupt_after: float | None = None
) -> Any:
    """function(**kwargs), or ToolTimedOut once `seconds` have passed. Exceptions of the function propagate.

    With `interrupt_after`, OutboundTimeUp is raised in its waits on the network after that many
    seconds, and again every time_limits.REPEAT_SECONDS until it returns (on the main thread
    only: see above).
    """
    if seconds <= 0:
        raise ToolTimedOut
    if time_limits.usable():
        return _with_alarm(seconds, function, kwargs, interrupt_after)
    return in_worker_thread(seconds, function, kwargs)


def _with_alarm(
    seconds: float, function: Callable[..., Any], kwargs: dict[str, Any], interrupt_after: float | None
) -> Any:
    # Lifted by depth, not by the Limits pushed: a limit inside may be left armed by code that never lifted it.
    armed = time_limits.depth()
    try:
        try:
            time_limits.push_stop_and_interrupt(seconds, DeadlinePassed, interrupt_after, OutboundTimeUp)
            return function(**kwargs)
        finally:
            time_limits.lift_to(armed)
    except DeadlinePassed as stopped:
        raised = _raised(stopped)
        waited = any(each.waiting_on_other_work for each in raised)
        raise ToolTimedOut(work_left_running=waited, stopped=raised[0]) from None


def _raised(stopped: DeadlinePassed) -> list[DeadlinePassed]:
    """Each DeadlinePassed the stop raised while the tool unwound, the first first: where the tool was, then
    where its unwinding waited (each raised while the one before was handled, its `__context__`)."""
    raised = [stopped]
    link = stopped.__context__
    while link is not None and len(raised) < _MOST_REPEATS_READ:
        if isinstance(link, DeadlinePassed):
            raised.append(link)
        link = link.__context__
    raised.reverse()
    return raised


# A tool that swallows its stop again and again makes a chain as long as it lasts: read this much of it.
_MOST_REPEATS_READ = 100


def in_worker_thread(seconds: float | None, function: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """function(**kwargs) in a thread of its own, left behind, still running, with ToolTimedOut after `seconds`
    (None: waited for).

    It runs in a copy of the caller's context: what the call set in a ContextVar (the time its
    outbound calls must end by) holds in the thread too.
    """
    outcome: list[tuple[bool, Any]] = []
    context = copy_context()

    def work() -> None:
        try:
            outcome.append((True, context.run(function, **kwargs)))
        except BaseException as error:  # handed to the caller's thread, which decides what it means
            outcome.append((False, error))

    worker = threading.Thread(target=work, name="median-tool", daemon=True)
    worker.start()
    worker.join(seconds)
    if not outcome:
        raise ToolTimedOut(work_left_running=True, left_in=worker)
    finished, value = outcome[0]
    if finished:
        return value
    raise value
