"""Time limits that stop or interrupt what runs past them, where it blocks: the process's one SIGALRM handler.

A step's timeout (botocore's connect and read timeouts, httpx's, a socket's) bounds each wait for
bytes, never a whole call: a server that trickles a byte a second keeps every wait short and the
call going for as long as it likes. What bounds a whole call here is an interval timer whose
signal raises an exception in the code that runs past its time, wherever it blocks (a socket's
recv, a connect, a sleep), as the tool's own time limit always has (median_lambda/calls/deadline.py,
which says why a signal: ~1 us to arm, and the exception unwinds the code it stops, urllib3's
closing of a half-read connection included).

Limits nest, in one stack, and one timer serves them all, set for the earliest:

- a limit that *stops* raises its BaseException once, which no `except Exception` catches: a
  tool at its deadline, unwound to the handler's own frame, which answers 504;
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
raises in this module's own code, whose caller would be left without the limit to lift.

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
    from dis import Instruction
    from types import CodeType, FrameType

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
# sleep), the Python code that called that C function, in the middle of the call's CALL
# instruction (frame.f_lasti is its offset; CPython 3.13). Code that computes is found anywhere
# else: in a Python function's own instructions, or just after a C function it called has returned
# (CPython runs the handler once the call is over, at the same instruction). So a frame waits on
# the network when it is code of one of NETWORK_PACKAGES, stopped at a call of one of WAIT_CALLS:
# the standard library's socket, ssl and selectors, which wrap every such wait, and the HTTP and
# AWS clients that call a socket's methods themselves (httpcore's recv, urllib3's connect, http.client's
# sendall) or sleep between attempts (botocore's and urllib3's retries). A call of those names in
# their code is a wait, or the moment after one, still within the request it serves: never the
# computing a tool does with an answer that has come back (urllib.parse, json, http.cookies hold no such call).
NETWORK_PACKAGES = frozenset(
    {"socket", "ssl", "selectors", "http", "urllib", "urllib3", "h11", "httpcore", "httpx", "requests"}
    | {"botocore", "boto3", "s3transfer"}
)
WAIT_CALLS = frozenset(
    {"recv", "recv_into", "recvfrom", "recvfrom_into", "recvmsg", "recvmsg_into"}
    | {"send", "sendall", "sendto", "sendmsg", "sendfile", "connect", "connect_ex", "accept", "_accept"}
    | {"getaddrinfo", "do_handshake", "poll", "select", "_select", "control", "sleep"}
)
# ... and in ssl's own code, an SSL object's read and write, which wait on the socket beneath it. Elsewhere
# those names are a file's or a buffer's (http.client reads its headers from one), which never wait.
_SSL_WAIT_CALLS = WAIT_CALLS | {"read", "write"}
# Each code object's wait calls, by offset, found once (by `dis`, imported when first needed: a
# cold GET whose key read is never cut short never pays for it).
_wait_offsets: dict[CodeType, frozenset[int]] = {}


def waiting_on_network(frame: FrameType | None) -> bool:
    """Whether `frame`, where the signal found the main thread, is network code in the middle of one of its waits."""
    if frame is None:
        return False
    module = frame.f_globals.get("__name__")
    if not isinstance(module, str) or module.partition(".")[0] not in NETWORK_PACKAGES:
        return False
    code = frame.f_code
    offsets = _wait_offsets.get(code)
    if offsets is None:
        offsets = _wait_offsets[code] = calls_of(code, _SSL_WAIT_CALLS if module == "ssl" else WAIT_CALLS)
    return frame.f_lasti in offsets


def calls_of(code: CodeType, names: frozenset[str]) -> frozenset[int]:
    """The offsets of `code`'s calls of a function or method by one of `names`: `self._sock.recv_into(b)`,
    `time.sleep(backoff)`, `super().connect(address)`."""
    import dis

    instructions = list(dis.get_instructions(code))
    return frozenset(
        instruction.offset
        for index, instruction in enumerate(instructions)
        if instruction.opname in ("CALL", "CALL_KW") and _callee(instructions, index) in names
    )


def _callee(instructions: list[Instruction], call: int) -> str | None:
    """The name the call at `instructions[call]` calls by: the attribute or global that the instruction
    loading its callable names; None when it is not one (a local, another call's result).

    CPython 3.13 pushes the callable (and self, or NULL), then the arguments, then for CALL_KW a
    tuple of the keywords' names: reading back from the call, the instructions that leave exactly
    those arguments on the stack come first, and the one before them loaded the callable.
    """
    import dis

    above = (instructions[call].arg or 0) + (instructions[call].opname == "CALL_KW")
    index = call
    while above > 0 and index > 0:
        index -= 1
        try:
            above -= dis.stack_effect(instructions[index].opcode, instructions[index].arg, jump=False)
        except ValueError:  # an instruction whose effect dis cannot tell: the call is not read
            return None
    if above != 0 or index == 0:
        return None  # an argument that jumps (`a if b else c`) or nothing before: not read
    loader = instructions[index - 1]
    if loader.opname == "PUSH_NULL" and index >= 2:  # `module.function(...)`: the callable, then NULL
        loader = instructions[index - 2]
    if loader.opname in ("LOAD_ATTR", "LOAD_GLOBAL", "LOAD_SUPER_ATTR", "LOAD_NAME") and isinstance(loader.argval, str):
        return loader.argval
    return None


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
    _limits.append(Limit(now + seconds, stop, True, False))
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
    may = waiting_on_network(frame)
    # Again later: where it may not be raised yet, or, repeating, while its code goes on past it.
    inner.fires_at = now + REPEAT_SECONDS if inner.repeats or not may else _NEVER
    _set_timer(_next_due(), now)
    if may:
        inner.raised = True
        raise inner.raises()
