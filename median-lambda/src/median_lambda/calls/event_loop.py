"""The container's event loop: where `async def` tools and diagnostics are awaited, within their time limit.

One loop per container (process), kept from call to call, because what an async tool keeps
between calls belongs to the loop it was made on: an aiohttp ClientSession, an httpx.AsyncClient
or an aioboto3 client created once, as AWS advises for SDK clients, and the connections they pool.
A loop per call (`asyncio.run`) would close those after the first call, and the next one would
fail with "Event loop is closed" or "attached to a different loop".

The loop runs in the thread that handles the request (Lambda's main thread), so the tool sees
that thread's state, X-Ray's segment included, and each call's contextvars. Where that thread
runs an event loop of its own already (an async test calling MedianTestClient, Playwright's
sync API), asyncio allows no second one there, and the container's loop runs in a worker thread. It is imported only
when an async tool is first called: asyncio costs a cold start ~10-35 ms that sync tools never pay.

What a call starts ends with it: once the tool's coroutine has ended, whatever its outcome, every
other task on the loop (a `create_task` not awaited, the write an `asyncio.shield` kept from the
tool's cancellation) is cancelled and given LEFT_WORK_ENDING_SECONDS to end, so none runs in a
later call's invocation, or in a project's tests during a later test. One that will not end
makes the loop be stopped as below, never to run it again, and counts as work the call left
running, as does work it handed the loop's executor (asyncio.to_thread) that is still running:
a thread, which nothing can stop (median_lambda/calls/dispatch.py keeps such a call's record). A
callback scheduled with `loop.call_later` is no task, and asyncio offers no public way to find
one: it runs at the loop's next turn.

The time limit is the sync tools' (median_lambda/calls/deadline.py): at the deadline asyncio cancels the
tool, so its `finally` and `async with` blocks run, and the call is answered 504 `timeout`. A
tool that goes on regardless, by blocking the loop with sync code or by catching its
CancelledError, is stopped ASYNC_CANCEL_GRACE_SECONDS later as a sync tool is (SIGALRM, or a
worker thread left behind), and the next async call starts a fresh loop. The loop it was stopped
in is closed, never kept: its selector and self-pipe (three file descriptors) and every
connection opened on it would otherwise stay open for the container's life, and a few hundred
stopped calls would leave no descriptor for any tool, or for the handler's own error path. Stopped
by SIGALRM, on the caller's thread, the loop is no longer running: it is closed there and then,
as asyncio.Runner closes one (its tasks cancelled, their cleanup run, its connections aborted),
within LOOP_CLOSING_SECONDS, past which what will not end is left to the garbage collector and
the loop closed all the same. Left running in a worker thread, the loop is closed by that thread
when the tool ends at last.

Before that, with `cut_after`, the connections the tool opened in this call are cut (aborted) once
the time for its outbound calls is up: a request waiting on a server that trickles its
answer a byte at a time never meets its read timeout, and cancelling the tool would hand it a
CancelledError no tool catches. Cut, the request fails as a lost connection (httpx's
RemoteProtocolError or ReadError, aiohttp's ServerDisconnectedError: each library's own error),
which the tool catches and turns into its own ToolError with the time it has left. A connection
kept from an earlier call (a client kept between calls reuses one) is not cut: it may be another
tool's, idle, and a request on it is bounded by the tool's own `asyncio.timeout(...)`
(docs/your-own-systems.md). The loop knows the connections because it opened them:
`create_connection`, which httpx (through anyio), aiohttp and asyncio's streams all call, is
extended here, through asyncio's public API for a loop of one's own (asyncio.Runner's loop_factory).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import weakref
from contextvars import copy_context
from typing import TYPE_CHECKING, Any

from median_lambda.calls.deadline import ToolTimedOut, call_within, in_worker_thread
from median_lambda.protocol import ASYNC_CANCEL_GRACE_SECONDS
from median_lambda.runtime.time_limits import Stopped

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine
    from contextvars import Context


class _CancelledInTime(ToolTimedOut):
    """The tool was cancelled at its deadline, or never started: its loop is as sound as it was."""


# What closing a stopped tool's loop may take, from the margin left after ASYNC_CANCEL_GRACE_SECONDS
# (TOOL_TIME_MARGIN_SECONDS less it: 0.25 s) for the answer: its tasks' cleanup, cut short past it.
LOOP_CLOSING_SECONDS = 0.05
# What the tasks a call leaves on the loop may take to end once cancelled, and the work it left in the
# loop's executor to finish: from the same grace, when the call ended at its deadline.
LEFT_WORK_ENDING_SECONDS = 0.05


class _CallsExecutor(concurrent.futures.ThreadPoolExecutor):
    """The loop's default executor (asyncio.to_thread, run_in_executor(None, ...)): a ThreadPoolExecutor that
    keeps what the call now running submitted, so that work of it still running when the call ends is known."""

    def __init__(self) -> None:
        super().__init__(thread_name_prefix="asyncio")
        self.this_call: list[concurrent.futures.Future[Any]] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        future = super().submit(fn, *args, **kwargs)
        self.this_call.append(future)
        return future


class _ToolLoop(asyncio.SelectorEventLoop):
    """The container's loop: asyncio's own, keeping a weak hold on the connections opened on it, and the
    work its calls hand to threads."""

    def __init__(self) -> None:
        super().__init__()
        self.opened: weakref.WeakSet[asyncio.BaseTransport] = weakref.WeakSet()  # by the call now running
        self.every_opened: weakref.WeakSet[asyncio.BaseTransport] = weakref.WeakSet()  # by any call
        self.tasks: list[asyncio.Task[Any]] = []  # created by the call now running
        self.executor = _CallsExecutor()
        self.set_default_executor(self.executor)

    def create_task(self, coro: Coroutine[Any, Any, Any], **kwargs: Any) -> asyncio.Task[Any]:
        # Every task asyncio makes on this loop (create_task, ensure_future, shield, gather, TaskGroup) is made
        # here: the call's are known without asyncio.all_tasks, which costs an async call that left none ~2.5 us.
        task = super().create_task(coro, **kwargs)
        self.tasks.append(task)
        return task

    async def create_connection(self, *args: Any, **kwargs: Any) -> Any:
        transport, protocol = await super().create_connection(*args, **kwargs)
        self.opened.add(transport)
        self.every_opened.add(transport)
        return transport, protocol

    async def create_unix_connection(self, *args: Any, **kwargs: Any) -> Any:
        transport, protocol = await super().create_unix_connection(*args, **kwargs)  # type: ignore[misc,unused-ignore]
        self.opened.add(transport)
        self.every_opened.add(transport)
        return transport, protocol

    def cut_connections(self, *, every: bool = False) -> None:
        """Abort each connection the running call opened (`every`: any call) that is still open: what waits
        on it fails, and its socket is closed at the loop's next turn."""
        for transport in list(self.every_opened if every else self.opened):
            if not transport.is_closing():
                transport.abort()  # type: ignore[attr-defined]


class _ContainerLoop:
    def __init__(self) -> None:
        self.runner = asyncio.Runner(loop_factory=self._made)
        self.tool_loop: _ToolLoop | None = None  # the runner's, once made: read after each call, at no cost
        # One call on the loop at a time: Lambda sends one; a threaded server's threads take turns.
        self.turn = threading.Lock()
        # Whether a call runs the loop now, and whether the loop was stopped for good meanwhile (its
        # tool left running in a worker thread, which closes the loop when it ends): under `state`.
        self.state = threading.Lock()
        self.running = False
        self.stopped = False

    def _made(self) -> _ToolLoop:
        self.tool_loop = _ToolLoop()
        return self.tool_loop


_current: _ContainerLoop | None = None
_choosing = threading.Lock()


def _container_loop() -> _ContainerLoop:
    global _current
    with _choosing:
        if _current is None:
            _current = _ContainerLoop()
        return _current


def _stopped(loop: _ContainerLoop) -> bool:
    """The loop a tool would not stop in, or left work on that would not end: used no more, closed now if no
    call runs it, else when that one ends. Whether all it ran ended as it closed (False: when it closes later)."""
    global _current
    with _choosing:
        if _current is loop:
            _current = None
    # Its timeout is logged already: what its tasks do as they are cancelled or collected is no news.
    loop.runner.get_loop().set_exception_handler(_unreported)
    with loop.state:
        loop.stopped = True
        close_now = not loop.running
    return _close(loop) if close_now else False


def _close(loop: _ContainerLoop) -> bool:
    """Close a stopped loop, as asyncio.Runner does, within LOOP_CLOSING_SECONDS; whether all it ran ended.

    Its connections are aborted first, so that their sockets are closed at its first turn, whatever
    its tasks then do. Runner.close cancels the tasks and runs the loop until they end, which a task
    that ignores its cancellation never does: past LOOP_CLOSING_SECONDS it is stopped where a time
    limit can be armed (its task then collected with the loop, never to run again), and Runner.close's
    own `finally` closes the loop all the same; elsewhere it is left to end in a thread of its own.
    Work the last call handed the loop's executor goes on in its thread: it cannot be stopped.
    """
    tool_loop = loop.runner.get_loop()
    if isinstance(tool_loop, _ToolLoop):
        tool_loop.cut_connections(every=True)
    ended = False
    # ToolTimedOut: the loop is closed all the same (Runner.close's `finally`), or will be, in the thread
    # left closing it. Any other: a task's cleanup failing is the stopped tool's, whose call is answered.
    with contextlib.suppress(Exception):
        if _a_loop_runs_here():  # asyncio runs one loop per thread: this one is closed beside it
            in_worker_thread(LOOP_CLOSING_SECONDS, loop.runner.close, {})
        else:  # under a time limit, or where none can be armed, in a thread of its own left to end
            call_within(LOOP_CLOSING_SECONDS, loop.runner.close, {})
        ended = True
    return ended and not (isinstance(tool_loop, _ToolLoop) and _still_working(tool_loop.executor))


def _still_working(executor: _CallsExecutor) -> bool:
    """Whether work the call now running (or last run) handed `executor` is not done: running in its thread."""
    return any(not work.done() for work in executor.this_call)


def _unreported(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    return None


def await_within(
    seconds: float | None,
    function: Callable[..., Coroutine[Any, Any, Any]],
    kwargs: dict[str, Any],
    cut_after: float | None = None,
    cut: list[bool] | None = None,
    left: list[bool] | None = None,
) -> Any:
    """The result of `await function(**kwargs)`, or ToolTimedOut once `seconds` have passed (None: no limit).

    Exceptions of the function propagate. With `cut_after`, the connections it opened are cut
    after that many seconds, if it is still running (see above), and True is appended to `cut`.
    Whatever its outcome, the tasks it left on the loop are cancelled and given LEFT_WORK_ENDING_SECONDS
    to end, as the work it handed the loop's executor is to finish; True is appended to `left` when
    some would not (the loop is then replaced, as a stopped one is), or when the tool would not stop.
    """
    if seconds is not None and seconds <= 0:
        raise ToolTimedOut
    loop = _container_loop()
    left = [] if left is None else left
    run: dict[str, Any] = {
        "loop": loop,
        "seconds": seconds,
        "function": function,
        "kwargs": kwargs,
        "cut_after": cut_after,
        "cut": cut,
        "left": left,
    }
    run["context"] = copy_context()  # the request's contextvars, for the tool, whichever thread it runs in
    # asyncio runs one loop per thread: where the caller's thread runs one already (an async test,
    # Playwright's sync API), the container's loop runs beside it, in a worker thread.
    beside = _a_loop_runs_here()
    if seconds is None:
        return in_worker_thread(None, _run, run) if beside else _run(**run)
    backstop = seconds + ASYNC_CANCEL_GRACE_SECONDS
    try:
        return in_worker_thread(backstop, _run, run) if beside else call_within(backstop, _run, run)
    except _CancelledInTime as cancelled:
        raise ToolTimedOut(work_left_running=bool(left), stopped=cancelled.stopped) from None
    except ToolTimedOut as stopped:
        # The backstop fired: the tool (or a task it left) would not stop, and may still hold the loop.
        if not _stopped(loop):
            left.append(True)
        left_running = bool(left) or stopped.work_left_running
        raise ToolTimedOut(work_left_running=left_running, stopped=stopped.stopped, left_in=stopped.left_in) from None


def _cut(loop: _ToolLoop, cut: list[bool] | None) -> None:
    loop.cut_connections()
    if cut is not None:
        cut.append(True)


def _a_loop_runs_here() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _run(
    loop: _ContainerLoop,
    seconds: float | None,
    function: Callable[..., Coroutine[Any, Any, Any]],
    kwargs: dict[str, Any],
    context: Context,
    cut_after: float | None,
    cut: list[bool] | None,
    left: list[bool],
) -> Any:
    if not loop.turn.acquire(timeout=-1 if seconds is None else seconds):
        raise _CancelledInTime
    try:
        with loop.state:
            if loop.stopped:  # stopped while this call waited for its turn: it never started
                raise _CancelledInTime
            loop.running = True
        try:
            result = loop.runner.run(_bounded(seconds, function, kwargs, cut_after, cut), context=context)
        except Stopped:  # the backstop: the loop is stopped, and what is on it with it
            raise
        except BaseException:
            _end_what_it_left(loop, left)
            raise
        _end_what_it_left(loop, left)
        return result
    finally:
        with loop.state:
            close_now = loop.running and loop.stopped  # stopped while it ran here
            loop.running = False
        loop.turn.release()
        if close_now:
            _close(loop)


def _end_what_it_left(loop: _ContainerLoop, left: list[bool]) -> None:
    """Cancel the tasks the call left on the loop (a `create_task` not awaited, a shielded write) and give them
    LEFT_WORK_ENDING_SECONDS to end; True on `left` if one would not (the loop is then stopped, never to run it
    again) or work it handed the loop's executor is still running (a thread, which nothing can stop).

    Written for the async call that left nothing, most of them: two lists found empty, and no function called."""
    tool_loop = loop.tool_loop
    if tool_loop is None:
        return
    for task in tool_loop.tasks:
        if not task.done():
            if not loop.runner.run(_cancelled_within(tool_loop, LEFT_WORK_ENDING_SECONDS)):
                left.append(True)
                _stopped(loop)
            break
    if tool_loop.executor.this_call and _still_working(tool_loop.executor):
        left.append(True)


async def _cancelled_within(loop: _ToolLoop, seconds: float) -> bool:
    """Cancel every other task the call made on `loop`, those their cancellation makes too; whether all ended
    within `seconds`."""
    this = asyncio.current_task()
    ends = loop.time() + seconds
    while True:
        others = [task for task in loop.tasks if task is not this and not task.done()]
        if not others:
            return True
        if loop.time() >= ends:
            return False
        for task in others:
            task.cancel()
        await asyncio.wait(others, timeout=ends - loop.time())


async def _bounded(
    seconds: float | None,
    function: Callable[..., Coroutine[Any, Any, Any]],
    kwargs: dict[str, Any],
    cut_after: float | None,
    cut: list[bool] | None,
) -> Any:
    limit = asyncio.timeout(seconds)
    loop = asyncio.get_running_loop()
    cutting = None
    if isinstance(loop, _ToolLoop):
        # A connection a tool keeps from an earlier call (an idle stream of its own) is not this call's to cut,
        # and work an earlier call handed the executor is not this call's.
        loop.opened = weakref.WeakSet()
        loop.tasks = []
        loop.executor.this_call = []
        if cut_after is not None:
            cutting = loop.call_later(max(0.0, cut_after), _cut, loop, cut)
    try:
        async with limit:
            result = await function(**kwargs)
    except BaseException as error:
        # Past the deadline, whatever the tool made of its cancellation is a timeout; before it,
        # its own exception (a client's TimeoutError, say) is a crash like any other. GeneratorExit
        # is the coroutine being closed (a set-aside loop collected): that must go through.
        if limit.expired() and not isinstance(error, GeneratorExit):
            raise _CancelledInTime(stopped=error) from None
        raise
    finally:
        if cutting is not None:
            cutting.cancel()
    if limit.expired():
        raise _CancelledInTime  # it caught its cancellation and answered anyway, past its time
    return result
