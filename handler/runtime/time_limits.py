"""Time limits that stop or interrupt what runs past them, where it blocks: the process's one SIGALRM handler.

A step's timeout (botocore's connect and read timeouts, httpx's, a socket's) bounds each wait for
bytes, never a whole call: a server that trickles a byte a second keeps every wait short and the
call going for as long as it likes. What bounds a whole call here is an interval timer whose
signal raises an exception in the code that runs past its time, wherever it blocks (a socket's
recv, a connect, a sleep), as the tool's own time limit always has (handler/calls/deadline.py,
which says why a signal: ~1 us to arm, and the exception unwinds the code it stops, urllib3's
closing of a half-read connection included).

Limits nest, in one stack, and one timer serves them all, set for the earliest:

- a limit that *stops* raises its BaseException once, which no `except Exception` catches: a
  tool at its deadline, unwound to the handler's own frame, which answers 504;
- a limit that *interrupts* raises an Exception its code may catch: botocore's error family for
  an AWS call, raised once (botocore's retry is vetoed past it: handler/runtime/aws_clients.py);
  a TimeoutError for a sync tool's network calls, raised only in network code (never the tool's
  own, where an `except Exception` would take it for a mistake of its own) and again every
  REPEAT_SECONDS while that code goes on past it, so that a library's retry meets it at once
  instead of starting a request there is no time for.

When several are due, the outermost that stops wins (the tool's time is up, whatever it was
doing); else the innermost that interrupts, which holds the outer ones back while it is armed (an
AWS call inside a tool gets botocore's error, not the tool's TimeoutError). The handler never
raises in this module's own code, whose caller would be left without the limit to lift.

Signals reach only the main thread, where Lambda calls the handler: elsewhere (`make serve`'s
threads, a test calling from a thread) nothing is armed, `arm` answers None, and a caller falls
back (a tool to a worker thread; an outbound call to its per-step bounds). A SIGALRM handler
that something else installed is left alone, the same way.

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
# An interrupting limit past its time raises again this often while its code goes on.
REPEAT_SECONDS = 0.05
# The timer never fires early; a limit this close to its time when it fires is due.
_DUE_WITHIN_SECONDS = 0.0005
_NEVER = float("inf")

# The monotonic time by which the outbound calls of what runs now must have ended, or None: set by
# the tool's run (handler/calls/dispatch.py) and the Median key's read (handler/key/source.py), read
# by each AWS call the handler's clients make (handler/runtime/aws_clients.py). A ContextVar: a
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


class Limit:
    """One armed limit: when it is due, what it raises then, and, for one that interrupts, where and how often."""

    __slots__ = ("deadline", "fires_at", "only_in", "raised", "raises", "repeats", "stops")

    def __init__(
        self,
        deadline: float,
        raises: Callable[[], BaseException],
        stops: bool,
        only_in: Callable[[FrameType | None], bool] | None,
        repeats: bool,
    ) -> None:
        self.deadline = deadline
        self.fires_at = deadline
        self.raises = raises
        self.stops = stops
        self.only_in = only_in
        self.repeats = repeats
        self.raised = False


# The packages whose code a call to another system blocks in: a socket's wait (socket, ssl, select),
# and the HTTP and AWS clients over them. A limit that interrupts only there (`in_network_code`)
# never lands in a tool's own code, where an `except Exception` meant for its own mistakes would
# take it for one: a tool computing or waiting on a lock past its time meets its stopping limit.
NETWORK_PACKAGES = frozenset(
    {"socket", "ssl", "select", "selectors", "http", "urllib", "urllib3", "h11", "httpcore", "httpx", "requests"}
    | {"botocore", "boto3", "s3transfer"}
)


def in_network_code(frame: FrameType | None) -> bool:
    """Whether `frame`, where the signal found the main thread, is code of one of NETWORK_PACKAGES."""
    if frame is None:
        return False
    module = frame.f_globals.get("__name__")
    return isinstance(module, str) and module.partition(".")[0] in NETWORK_PACKAGES


_limits: list[Limit] = []  # armed, outermost first
_timer_at = _NEVER  # when the interval timer is set to fire, by time.monotonic()


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
    return False  # a tool's own code uses SIGALRM: leave it alone


def arm(
    deadline: float,
    raises: Callable[[], BaseException],
    *,
    stops: bool = False,
    only_in: Callable[[FrameType | None], bool] | None = None,
    repeats: bool = False,
) -> Limit | None:
    """Arm a limit inside those armed: at `deadline` (time.monotonic()) `raises()` is raised where the code is.

    One that interrupts may be raised only where `only_in` holds of the frame the signal finds
    (`in_network_code`), waiting for it there, and with `repeats`, again every REPEAT_SECONDS.
    None when no limit can be armed here (see `usable`). Lift it with `pop`, in a `finally`.
    """
    return push(deadline, raises, stops=stops, only_in=only_in, repeats=repeats) if usable() else None


def push(
    deadline: float,
    raises: Callable[[], BaseException],
    *,
    stops: bool = False,
    only_in: Callable[[FrameType | None], bool] | None = None,
    repeats: bool = False,
) -> Limit:
    """`arm`, where the caller has just found limits `usable()`."""
    limit = Limit(deadline, raises, stops, only_in, repeats)
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
    """A limit that stops in `seconds`, and inside it one that interrupts network code, repeating, in `interrupt_after`.

    What a sync tool runs under (handler/calls/deadline.py), in one call and one system call: it
    is on every warm POST, where each push would cost the interval timer a system call of its own
    (~1 us). Answers `depth()` before them, for `lift_to`; the caller has found limits `usable()`.
    """
    armed = len(_limits)
    now = time.monotonic()
    _limits.append(Limit(now + seconds, stop, True, None, False))
    first = seconds
    if interrupt_after is not None:
        interrupt_after = max(0.0, interrupt_after)
        _limits.append(Limit(now + interrupt_after, interrupt, False, in_network_code, True))
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
    if frame is not None and frame.f_globals.get("__name__") == __name__:
        # In this module's own code (a limit armed already due fires as `push` sets the timer): an
        # exception here would leave its caller without the limit to lift. A moment later, then.
        _set_timer(now + _DUE_WITHIN_SECONDS, now)
        return
    due_by = now + _DUE_WITHIN_SECONDS
    stopping = next((limit for limit in _limits if limit.stops and limit.fires_at <= due_by), None)
    if stopping is not None:
        stopping.fires_at = _NEVER  # once: its BaseException unwinds to the frame that armed it
        stopping.raised = True
        _set_timer(_next_due(), now)
        raise stopping.raises()
    inner = _innermost_interrupting()
    if inner is None or inner.fires_at > due_by:
        _set_timer(_next_due(), now)
        return
    may = inner.only_in is None or inner.only_in(frame)
    # Again later: where it may not be raised yet, or, repeating, while its code goes on past it.
    inner.fires_at = now + REPEAT_SECONDS if inner.repeats or not may else _NEVER
    _set_timer(_next_due(), now)
    if may:
        inner.raised = True
        raise inner.raises()
