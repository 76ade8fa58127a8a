"""Run a tool with a time limit, so that a slow tool gets a 504 `timeout` answer instead of Lambda's abrupt kill.

Why SIGALRM, with a thread as the fallback: the limit must be cheap on the happy path,
where a warm POST is measured against HMAC + json.loads + json.dumps (~7 us). Arming and
disarming an interval timer costs ~1 us; starting and joining a thread costs ~120 us. The
alarm also stops the tool (its exception unwinds the tool's `finally` blocks), where a
thread left behind would run on into the next invocation. Signal handlers run only in the
main thread, which is where Lambda calls the handler; elsewhere (a threaded server, a test
calling from a thread), or when something else owns SIGALRM, the tool runs in a worker
thread instead and is abandoned, still running, when its time is up.
"""

from __future__ import annotations

import signal
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType

_HAS_ITIMER = hasattr(signal, "setitimer")  # not on Windows, where `make serve` may run
# The handler now in place, checked before every tool run. signal.getsignal converts it to a
# `Handlers` enum member, which for a function (ours) means raising and catching a ValueError
# whose message holds the function's repr. The C function it wraps, CPython's private
# `_signal.getsignal`, answers the same, the handlers as they were installed (SIG_DFL as the
# int 0, which `== signal.SIG_DFL`); the public one where it is missing. It stays because it
# holds up two of make bench's targets (bench/README.md, "Simple where a microsecond is all it
# buys"): with the public one, "warm POST" went 4.93x -> 5.49x its floor (target 5x) and "warm
# POST against the peer's" 0.93x -> 1.01x (target 1.0x); the check alone costs 0.37x the floor.
try:
    from _signal import getsignal as _installed_handler  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # pragma: no cover - every CPython has it; another Python may not
    _installed_handler = signal.getsignal
_MAIN_THREAD_ID = threading.main_thread().ident
_armed = False


class ToolTimedOut(Exception):
    """The tool did not finish in the time it had; whether its work was done is unknown."""


class _DeadlinePassed(BaseException):
    """Raised inside the tool by the alarm: a BaseException, so a tool's `except Exception` cannot swallow it."""


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    # A signal already on its way when the timer was disarmed arrives here with _armed False.
    if _armed:
        raise _DeadlinePassed


def _alarm_usable() -> bool:
    if not _HAS_ITIMER or threading.get_ident() != _MAIN_THREAD_ID:
        return False
    current = _installed_handler(signal.SIGALRM)
    if current is _on_alarm:
        return True
    if current == signal.SIG_DFL:
        # Installed once and left in place: signal.signal costs more than the rest put together.
        signal.signal(signal.SIGALRM, _on_alarm)
        return True
    return False  # the tool's own code uses SIGALRM: leave it alone


def call_within(seconds: float, function: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """function(**kwargs), or ToolTimedOut once `seconds` have passed. Exceptions of the function propagate."""
    if seconds <= 0:
        raise ToolTimedOut
    if _alarm_usable():
        return _with_alarm(seconds, function, kwargs)
    return in_worker_thread(seconds, function, kwargs)


def _with_alarm(seconds: float, function: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    global _armed
    try:
        _armed = True
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            return function(**kwargs)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            _armed = False
    except _DeadlinePassed:
        _armed = False
        raise ToolTimedOut from None


def in_worker_thread(seconds: float | None, function: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """function(**kwargs) in a thread of its own, left behind with ToolTimedOut after `seconds` (None: waited for)."""
    outcome: list[tuple[bool, Any]] = []

    def work() -> None:
        try:
            outcome.append((True, function(**kwargs)))
        except BaseException as error:  # handed to the caller's thread, which decides what it means
            outcome.append((False, error))

    worker = threading.Thread(target=work, name="median-tool", daemon=True)
    worker.start()
    worker.join(seconds)
    if not outcome:
        raise ToolTimedOut
    finished, value = outcome[0]
    if finished:
        return value
    raise value
