"""Time limits that stop or interrupt what runs past them, where it blocks: the process's one SIGALRM handler.

A step's timeout (botocore's connect and read timeouts, httpx's, a socket's) bounds each wait for
bytes, never a whole call: a server that trickles a byte a second keeps every wait short and the
call going for as long as it likes. What bounds a whole call here is an interval timer whose
signal raises an exception in the code that runs past its time, wherever it blocks (a socket's
recv, a connect, a sleep), as the tool's own time limit always has (median_lambda/calls/deadline.py,
which says why a signal: ~1 us to arm, and the exception unwinds the code it stops, urllib3's
closing of a half-read connection included).

Limits nest, in one stack, and one timer serves them all, set for the earliest:

- a limit that *stops* raises its BaseException (`Stopped`), which no `except Exception` catches:
  a tool at its deadline, unwound to the handler's own frame, which answers 504. It is raised
  again every REPEAT_SECONDS until it comes back to that frame, so that whatever the tool's
  unwinding waits on (a `with ThreadPoolExecutor` block's join of its workers, a `finally` that
  waits on a lock or a queue: each of those waits is interrupted by a signal) is cut short too, and
  the answer still comes in time. Where it was raised is noted: in code waiting on another
  thread's or a process's work, that work may still be running once the call is answered
  (median_lambda/calls/deadline.py says what follows);
- a limit that *interrupts* raises an Exception its code may catch: botocore's error family for
  an AWS call, raised once (botocore's retry is vetoed past it: median_lambda/runtime/aws_clients.py);
  a TimeoutError for a sync tool's network calls, raised again every REPEAT_SECONDS while that
  code goes on past it, so that a library's retry meets it at once instead of starting a request
  there is no time for.

A limit that interrupts is raised only while the thread waits on the network (`waiting_on_network`):
blocked in a socket's, an SSL socket's or a selector's wait, or in an HTTP or AWS client's sleep
between two attempts. Never while it computes, in the tool's own code or in a network library's
(urllib.parse, http.cookies, botocore's parsers): an answer that has come back is never lost to a
limit past its time, so a write that ran is never run again because a limit fired after it. Until
it may be raised, a due limit looks again every REPEAT_SECONDS; pure code runs on, to the limit
that stops.

When several are due, the outermost that stops wins (the tool's time is up, whatever it was
doing); else the innermost that interrupts, which holds the outer ones back while it is armed (an
AWS call inside a tool gets botocore's error, not the tool's TimeoutError). The handler never
raises in median_lambda's own code (this module's, the frame that armed a stop, and what runs
between it and the tool), whose caller would be left without the limit to lift or its cleanup
undone, nor in asyncio's, whose event loop would be left marking the thread as running it: it
looks again a moment later.

Signals reach only the main thread, where Lambda calls the handler: elsewhere (`make serve`'s
threads, a test calling from a thread) nothing is armed, `arm` answers None, and a caller falls
back (a tool to a worker thread; an outbound call to its per-step bounds). A SIGALRM handler
that something else installed (a tool's library, for timeouts of its own) is left alone, the
same way, and said once per container, a warning and the metric TimeLimitsDegraded: every limit
is degraded there, and a tool stopped at its deadline runs on (docs/security.md).

Light to import: a cold GET's key read is bounded by it.
"""

from __future__ import annotations

import signal
import threading
import time
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType

_HAS_ITIMER = hasattr(signal, "setitimer")  # not on Windows, where `make serve` may run
# The handler now in place is read with the public signal.getsignal before every limit is armed.
# On Python 3.13, the runtime's, it answers a function handler (ours) as it is, with no enum
# conversion (earlier Pythons raised and caught a ValueError for one): make bench's idea rows put
# the check on the warm POST floor at 1.03x with it and 1.01x with CPython's private
# `_signal.getsignal`, ~0.15 us of an ~87 us warm POST (0.2%): no reason left for the private one.
_MAIN_THREAD_ID = threading.main_thread().ident
_PACKAGE = __name__.partition(".")[0]
# Packages a stop is never raised in (see _on_alarm): median_lambda's own, and asyncio's. There asyncio's loop
# runs a callback inside an `except BaseException` that logs the stop as an "Exception in callback" and goes on;
# and it marks the thread as running it in run_forever's setup and unmarks it in its `finally`, which a stop
# would leave undone: asyncio.run() refused in every later call of the container.
_NEVER_STOPPED_IN = frozenset({_PACKAGE, "asyncio"})
# A limit past its time raises again this often while its code goes on: one that interrupts while
# it waits on the network, one that stops wherever it is.
REPEAT_SECONDS = 0.05
# The timer never fires early; a limit this close to its time when it fires is due.
_DUE_WITHIN_SECONDS = 0.0005
_NEVER = float("inf")

# The monotonic time by which the outbound calls of what runs now must have ended, or None: set by
# the tool's run (median_lambda/calls/dispatch.py) and the Median key's read (median_lambda/key/source.py), read
# by each AWS call the handler's clients make (median_lambda/runtime/aws_clients.py). A ContextVar: a
# threaded server's requests each have their own, and an async tool's event loop runs in a copy.
OUTBOUND_DEADLINE: ContextVar[float | None] = ContextVar("median_outbound_deadline", default=None)


def invocation_deadline(context: object, kept_seconds: float) -> float | None:
    """When an invocation's outbound calls must end: Lambda's deadline less `kept_seconds` for its answer.

    None for a context that is no Lambda context (a call without one is bounded by its steps alone).
    """
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    if remaining is None:
        return None
    return time.monotonic() + float(remaining()) / 1000 - kept_seconds


class Stopped(BaseException):
    """What a limit that stops raises where the code is. A BaseException: no `except Exception` catches it, and
    code that catches any BaseException (the runtime's own answer to a crash) lets this one through, to the
    frame that armed the limit.

    `waiting_on_other_work`: it was raised where the code waited on work running elsewhere, another thread's
    or a process's, which may still be running once the stopped code has unwound."""

    waiting_on_other_work = False


class Limit:
    """One armed limit: when it is due, what it raises then, and, for one that interrupts, how often."""

    __slots__ = ("deadline", "fires_at", "raised", "raises", "repeats", "stops")

    def __init__(self, deadline: float, raises: Callable[[], BaseException], stops: bool, repeats: bool) -> None:
        self.deadline = deadline
        self.fires_at = deadline
        self.raises = raises
        self.stops = stops
        self.repeats = repeats
        self.raised = False


# Where the signal finds a thread that waits on the network. The handler is given the innermost
# Python frame: for a thread blocked in C (a socket's recv, an SSL read, a selector's poll, a
# connect, a sleep), the Python function that made that call, which does not return to the
# interpreter until its wait is over. Each function below does that one wait and nothing else
# (each checked against its library's source, as locked: CPython 3.13's socket, ssl, selectors and
# http.client, which wrap every such wait, and urllib3 2.8, httpcore 1.0 and botocore 1.43, which
# call a socket's methods themselves or sleep between two attempts), by its module and qualified
# name: a frame's `f_globals["__name__"]` and `f_code.co_qualname`, public on every CPython since
# 3.11 (no bytecode, offset or opcode is read). A frame anywhere else computes, in the tool's own
# code or in a library's working on an answer that has come back (urllib.parse, http.cookies, json,
# h11's and botocore's parsers), and a limit that interrupts is never raised there. The names are
# frames' identities, matched as text: no module of those listed is imported here, its private ones
# (httpcore's backend) included.
NETWORK_WAITS: dict[str, frozenset[str]] = {
    "socket": frozenset({"SocketIO.readinto", "SocketIO.write", "create_connection", "getaddrinfo"}),
    "ssl": frozenset(
        {"SSLSocket.read", "SSLSocket.write", "SSLSocket.recv", "SSLSocket.recv_into"}
        | {"SSLSocket.send", "SSLSocket.sendall", "SSLSocket.do_handshake"}
    ),
    # Each selector's wait; PollSelector's and DevpollSelector's is their base class's.
    "selectors": frozenset(
        {"SelectSelector.select", "_PollLikeSelector.select", "EpollSelector.select", "KqueueSelector.select"}
    ),
    "http.client": frozenset({"HTTPConnection.send"}),
    "urllib3.util.connection": frozenset({"create_connection"}),
    "urllib3.util.wait": frozenset({"select_wait_for_socket", "poll_wait_for_socket.<locals>.do_poll"}),
    "urllib3.util.retry": frozenset({"Retry.sleep_for_retry", "Retry._sleep_backoff"}),
    "httpcore._backends.sync": frozenset({"SyncStream.read", "SyncStream.write", "SyncBackend.sleep"}),
}
# botocore sleeps between two attempts in a function that does more: Endpoint._needs_retry asks the
# client's handlers whether to retry an attempt's outcome, an answer that came included, and sleeps
# only once one has answered with the seconds to wait (its local `handler_response`). Its frame waits
# on the network from then on, and computes with an answer before.
_WAITS_ONCE_DECIDED = {("botocore.endpoint", "Endpoint._needs_retry"): "handler_response"}
# Where a stopped thread was waiting on work running elsewhere: another thread's (a join, a future's
# result, an event, a queue) or a child process's.
_WAITS_ON_OTHER_WORK = frozenset({"threading", "queue", "concurrent", "multiprocessing", "subprocess"})


def waiting_on_network(frame: FrameType | None) -> bool:
    """Whether `frame`, where the signal found the main thread, is one of NETWORK_WAITS (or botocore's
    retry sleep): a wait on the network, or the moment just before or after one, within the request it serves."""
    if frame is None:
        return False
    module = frame.f_globals.get("__name__")
    waits = NETWORK_WAITS.get(module)  # type: ignore[arg-type]
    name = frame.f_code.co_qualname
    if waits is not None:
        return name in waits
    decided_by = _WAITS_ONCE_DECIDED.get((module, name))  # type: ignore[arg-type]
    return decided_by is not None and bool(frame.f_locals.get(decided_by))


_limits: list[Limit] = []  # armed, outermost first
_timer_at = _NEVER  # when the interval timer is set to fire, by time.monotonic()
# Whether this container has said that SIGALRM is another's: once, at the first limit it could not arm.
_other_owner_said = False


def usable() -> bool:
    """Whether limits can be armed here: the main thread, an interval timer, SIGALRM ours or no one's."""
    if not _HAS_ITIMER or threading.get_ident() != _MAIN_THREAD_ID:
        return False
    current = signal.getsignal(signal.SIGALRM)
    if current is _on_alarm:
        return True
    if current == signal.SIG_DFL:
        # Installed once and left in place: signal.signal costs more than the rest put together.
        signal.signal(signal.SIGALRM, _on_alarm)
        return True
    if not _other_owner_said:  # a tool's own code uses SIGALRM: leave it alone, and say what that costs
        _say_sigalrm_is_anothers(current)
    return False


def _say_sigalrm_is_anothers(current: object) -> None:
    """Warn, once per container, that no limit can be armed here, naming the handler in place; count it."""
    global _other_owner_said
    _other_owner_said = True
    from median_lambda.runtime import observability

    if current == signal.SIG_IGN:
        owner = "SIG_IGN: ignored"
    elif current is None:
        owner = "one not installed from Python"
    else:
        owner = f"{getattr(current, '__module__', '?')}.{getattr(current, '__qualname__', repr(current))}"
    try:  # said where it can be: the call it is said in goes on, and is answered, either way
        observability.logger.warning(
            f"SIGALRM has a handler of another's ({owner}), so this container arms no time limit: each call "
            "is bounded by its steps' timeouts only, and a tool stopped at its deadline goes on running in a "
            "worker thread, into the next requests, its writes landing under their ids. Leave SIGALRM to the "
            "handler (README.md's security guide). Said once per container",
            extra={"sigalrm_handler": owner},
        )
        observability.record_time_limits_degraded()
    except Exception:  # noqa: S110 - a log line or a metric that cannot be written must not cost the answer
        pass


def forget_what_was_said() -> None:
    """Say again that SIGALRM is another's, at the next limit that cannot be armed: a fresh container's (tests)."""
    global _other_owner_said
    _other_owner_said = False


def arm(
    deadline: float, raises: Callable[[], BaseException], *, stops: bool = False, repeats: bool = False
) -> Limit | None:
    """Arm a limit inside those armed: at `deadline` (time.monotonic()) `raises()` is raised where the code is.

    One that stops is raised wherever the code is; one that interrupts only while it waits on the
    network (`waiting_on_network`), looking for that every REPEAT_SECONDS once due, and with
    `repeats`, raised again that often. None when no limit can be armed here (see `usable`). Lift
    it with `pop`, in a `finally`.
    """
    return push(deadline, raises, stops=stops, repeats=repeats) if usable() else None


def push(deadline: float, raises: Callable[[], BaseException], *, stops: bool = False, repeats: bool = False) -> Limit:
    """`arm`, where the caller has just found limits `usable()`."""
    limit = Limit(deadline, raises, stops, repeats)
    _limits.append(limit)
    # Alone (an AWS call outside a tool: the key's read, the table's requests), it is the next due.
    _set_timer(deadline if len(_limits) == 1 else _next_due(), time.monotonic())
    return limit


def push_stop_and_interrupt(
    seconds: float,
    stop: Callable[[], BaseException],
    interrupt_after: float | None,
    interrupt: Callable[[], BaseException],
) -> int:
    """A limit that stops in `seconds`, and inside it one that interrupts waits, repeating, in `interrupt_after`.

    What a sync tool runs under (median_lambda/calls/deadline.py), in one call and one system call: it
    is on every warm POST, where each push would cost the interval timer a system call of its own
    (~1 us). Answers `depth()` before them, for `lift_to`; the caller has found limits `usable()`.
    """
    armed = len(_limits)
    now = time.monotonic()
    _limits.append(Limit(now + seconds, stop, True, True))
    first = seconds
    if interrupt_after is not None:
        interrupt_after = max(0.0, interrupt_after)
        _limits.append(Limit(now + interrupt_after, interrupt, False, True))
        first = min(seconds, interrupt_after)
    if armed:
        _set_timer(_next_due(), now)
    else:  # the common case, outermost: the sooner of the two is the next due, with no search
        _set_timer(now + first, now)
    return armed


def pop(limit: Limit | None) -> None:
    """Lift `limit`, and every limit armed inside it that is still armed (their own `pop` may never run)."""
    if limit is None:
        return
    for index in range(len(_limits) - 1, -1, -1):
        if _limits[index] is limit:
            del _limits[index:]
            _set_timer(_next_due(), time.monotonic())
            return


def depth() -> int:
    """How many limits are armed: `lift_to(depth())` later lifts every one armed in between."""
    return len(_limits)


def lift_to(armed: int) -> None:
    """Lift every limit armed since `depth()` answered `armed`, even one whose `push` never returned to its caller."""
    global _timer_at
    if len(_limits) > armed:
        del _limits[armed:]
        if _limits:
            _set_timer(_next_due(), time.monotonic())
        else:  # the common case: nothing left armed
            signal.setitimer(signal.ITIMER_REAL, 0)
            _timer_at = _NEVER


def lift_all() -> None:
    """Lift every limit: an invocation's end, which none may outlast."""
    if _limits:
        _limits.clear()
        _set_timer(_NEVER, time.monotonic())


def drop(limit: Limit) -> None:
    """Lift `limit` alone, leaving any armed inside it: one left armed by code that ended without lifting it."""
    if limit in _limits:
        _limits.remove(limit)
        _set_timer(_next_due(), time.monotonic())


def fired(limit: Limit | None) -> bool:
    """Whether `limit` has raised its exception at least once."""
    return limit is not None and limit.raised


def _innermost_interrupting() -> Limit | None:
    for limit in reversed(_limits):
        if not limit.stops:
            return limit
    return None


def _next_due() -> float:
    """When the timer must fire next: the earliest limit that stops, or the innermost that interrupts.

    An interrupting limit armed inside another holds the outer one back until it is lifted: an
    AWS call's error, already raised and on its way through botocore, is not overtaken by the
    tool's TimeoutError. A plain loop: it runs on every warm POST, where a generator costs a microsecond.
    """
    due = _NEVER
    inner_seen = False
    for limit in reversed(_limits):
        if limit.stops or not inner_seen:
            inner_seen = inner_seen or not limit.stops
            if limit.fires_at < due:
                due = limit.fires_at
    return due


def _set_timer(at: float, now: float) -> None:
    global _timer_at
    if at == _NEVER:
        if _timer_at != _NEVER:
            signal.setitimer(signal.ITIMER_REAL, 0)
    else:
        signal.setitimer(signal.ITIMER_REAL, max(at - now, 1e-6))
    _timer_at = at


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    # A signal already on its way when the last limit was lifted finds nothing due, and does nothing.
    now = time.monotonic()
    due_by = now + _DUE_WITHIN_SECONDS
    stopping = next((limit for limit in _limits if limit.stops and limit.fires_at <= due_by), None)
    if stopping is not None:
        module = frame.f_globals.get("__name__", "") if frame is not None else ""
        package = module.partition(".")[0] if isinstance(module, str) else ""
        if package in _NEVER_STOPPED_IN:
            # In median_lambda's own code: this module's (a limit armed already due fires as `push` sets the
            # timer), the frame that armed the stop (its exception has come back to it) and what runs between
            # it and the tool (an event loop's turn handed back): an exception there would leave its caller
            # without the limit to lift, or its cleanup undone. In asyncio's, an event loop's setup or cleanup
            # undone. A moment later, then: in the tool's code, or in the selector's wait the loop turns in.
            _set_timer(due_by, now)
            return
        # Again while its code goes on: a join or a wait in a `finally` the tool's unwinding meets is cut
        # short too, until its exception comes back to the frame that armed it, which lifts it.
        stopping.fires_at = now + REPEAT_SECONDS
        stopping.raised = True
        _set_timer(_next_due(), now)
        stopped = stopping.raises()
        if package in _WAITS_ON_OTHER_WORK and isinstance(stopped, Stopped):
            stopped.waiting_on_other_work = True
        raise stopped
    inner = _innermost_interrupting()
    if inner is None or inner.fires_at > due_by:
        _set_timer(_next_due(), now)
        return
    may = waiting_on_network(frame)
    # Again later: where it may not be raised yet, or, repeating, while its code goes on past it.
    inner.fires_at = now + REPEAT_SECONDS if inner.repeats or not may else _NEVER
    _set_timer(_next_due(), now)
    if may:
        inner.raised = True
        raise inner.raises()
