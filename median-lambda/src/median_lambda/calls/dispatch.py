"""POST: read the operation, validate the input against the tool's model, run the tool, shape the answer."""

from __future__ import annotations

import dataclasses
import inspect
import json
import sys
import threading
import time
import traceback
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from median_lambda.authoring.api import ToolContext, ToolError
from median_lambda.authoring.registry import ToolLoadError, load_tools_for
from median_lambda.calls.deadline import OutboundTimeUp, ToolTimedOut, call_within
from median_lambda.calls.idempotency import applies, at_most_once
from median_lambda.calls.whole_numbers import WholeFloat, as_identified, whole_floats_as_integers
from median_lambda.protocol import (
    MAX_INPUT_ERROR_DETAILS,
    MAX_NESTING_DEPTH,
    MAX_QUOTED_FIELD_CHARS,
    MAX_RESPONSE_BYTES,
    OP_CALL,
    OP_DIAGNOSTICS,
    OPS,
    PROTOCOL_VERSION,
    TOOL_TIME_MARGIN_SECONDS,
    ErrorCode,
)
from median_lambda.request.responses import Answer, body_fits, error_body, holds_lone_surrogate, ok_body, to_json
from median_lambda.runtime.aws_clients import (
    STORE_CALL,
    TOOL_MARGIN_SECONDS,
    is_aws_call_timed_out,
    longest_call_seconds,
)
from median_lambda.runtime.env import running_in_deployed_lambda
from median_lambda.runtime.observability import (
    Metric,
    logger,
    record_no_tool_can_run,
    record_tool_run,
    record_work_left_running,
    tool_segment,
)
from median_lambda.runtime.strict_json import TOO_DEEP, nests_deeper_than, object_without_duplicates, refuse_constant
from median_lambda.runtime.time_limits import OUTBOUND_DEADLINE, Stopped

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from aws_lambda_powertools.utilities.typing import LambdaContext

    from median_lambda.authoring.registry import Registry, Tool


# The longest one request to the idempotency table can take. A call through the table keeps
# it twice from the time its input's validation may use (the in-progress write before the
# tool, the answer's save after it), and once from the tool's.
STORE_CALL_SECONDS = longest_call_seconds(STORE_CALL)


class Refusal(Exception):
    """The request cannot be served; carries the answer to send instead."""

    def __init__(
        self, status: int, code: str, message: str, details: list[dict[str, str]] | None = None, omitted: int = 0
    ) -> None:
        super().__init__(message)
        self.answer = Answer(status, error_body(code, message, post=True, details=details, omitted=omitted))


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError("a number too large for a double")
    # A whole-looking number keeps its literal: an integer field may take it (median_lambda/calls/whole_numbers.py).
    return WholeFloat(value, text) if value.is_integer() else value


# Built once: json.loads with hooks builds a decoder and its scanner on every call, ~1.5 us
# of a warm POST. A decoder keeps no state between documents.
# The rules (no constants, no repeated member, bounded nesting) are median_lambda/runtime/strict_json.py's,
# which a tool's JSON secret and the Median key's are read by too; a number here keeps what the
# tool's schema makes of it (_finite_float), where a secret's is given as written.
_STRICT_DECODER = json.JSONDecoder(
    parse_constant=refuse_constant,
    parse_float=_finite_float,
    object_pairs_hook=object_without_duplicates,
)


def _may_nest_deeper_than(body: bytes, limit: int) -> bool:
    # Each level takes an opening and a closing bracket: a body shorter than two per level, or
    # with no more than `limit` opening ones (counting those in strings), cannot nest deeper.
    # Most calls pass the first test, and the rest the second: ~0.1 us where it is reached.
    return len(body) > 2 * limit + 1 and body.count(b"{") + body.count(b"[") > limit


def parse_body(body: bytes) -> dict[str, Any]:
    """The body as a JSON object, refusing NaN, infinities, repeated keys and deep nesting; raises Refusal (400)."""
    try:
        document = _STRICT_DECODER.decode(body.decode("utf-8"))
    except UnicodeDecodeError:
        raise Refusal(400, ErrorCode.BAD_REQUEST, "The body is not UTF-8 text.") from None
    except json.JSONDecodeError as error:
        raise Refusal(
            400, ErrorCode.BAD_REQUEST, f"The body is not valid JSON (line {error.lineno}, column {error.colno})."
        ) from None
    except (ValueError, RecursionError) as error:
        reason = TOO_DEEP if isinstance(error, RecursionError) else str(error)
        raise Refusal(400, ErrorCode.BAD_REQUEST, f"The body is not JSON this endpoint accepts: {reason}.") from None
    if not isinstance(document, dict):
        raise Refusal(400, ErrorCode.BAD_REQUEST, "The body must be a JSON object.")
    if _may_nest_deeper_than(body, MAX_NESTING_DEPTH) and nests_deeper_than(document, MAX_NESTING_DEPTH):
        raise Refusal(400, ErrorCode.BAD_REQUEST, f"The body is not JSON this endpoint accepts: {TOO_DEEP}.")
    return document


def _check_version(document: dict[str, Any]) -> None:
    version = document.get("version")
    # `type() is int` because True == 1 in Python, and Median's `true` is no version.
    if type(version) is not int or version != PROTOCOL_VERSION:
        raise Refusal(
            400,
            ErrorCode.UNSUPPORTED_VERSION,
            f'This endpoint speaks protocol version {PROTOCOL_VERSION}; send "version": {PROTOCOL_VERSION}.',
        )


def _quoted_field(error: Mapping[str, Any]) -> str:
    # An unknown field's name is the caller's, of any length: quoted to the longest a field of the
    # tool's own may have, so that a 422 fits in a response whatever names it lists.
    field = ".".join(str(part) for part in error["loc"]) or "input"
    return field if len(field) <= MAX_QUOTED_FIELD_CHARS else field[:MAX_QUOTED_FIELD_CHARS] + "…"


def _invalid_input(errors: Sequence[Mapping[str, Any]]) -> Refusal:
    # Capped: the problems of a 1 MiB body of unknown fields would make an answer over Lambda's limit.
    details = [{"field": _quoted_field(error), "message": error["msg"]} for error in errors[:MAX_INPUT_ERROR_DETAILS]]
    omitted = max(0, len(errors) - MAX_INPUT_ERROR_DETAILS)
    fields = ", ".join(sorted({detail["field"] for detail in details}))
    more = f" ({len(errors):,} problems; the first {len(details)} are listed)" if omitted else ""
    return Refusal(
        422, ErrorCode.INVALID_INPUT, f"The input does not fit the tool's schema: {fields}{more}.", details, omitted
    )


def validate_input(tool: Tool, raw_input: Any) -> BaseModel:
    if not isinstance(raw_input, dict):
        raise _invalid_input([{"loc": ("input",), "msg": "Input should be a JSON object of the tool's fields"}])
    try:
        # Strict JSON validation: "3" is no integer and "yes" no boolean, as the schema says; but
        # 3.0 is an integer, as JSON Schema counts it.
        document = whole_floats_as_integers(tool.input_model, raw_input)
        return tool.input_model.model_validate_json(json.dumps(document), strict=True)
    except ValidationError as error:
        raise _invalid_input(error.errors(include_url=False, include_input=False)) from None


def _context_parameter(function: Callable[..., Any]) -> str | None:
    for name, parameter in inspect.signature(function, eval_str=True).parameters.items():
        if parameter.annotation is ToolContext:
            return name
    return None


def _crash_summary(error: BaseException) -> dict[str, Any]:
    """Where a tool failed, without the exception's text: messages often quote the customer's input."""
    frames = traceback.extract_tb(error.__traceback__)
    return {
        "error_type": type(error).__name__,
        "frames": [f"{frame.filename}:{frame.lineno} in {frame.name}" for frame in frames[-8:]],
    }


def _crashed(
    what: str,
    error: BaseException,
    ctx: ToolContext,
    *,
    returned: bool = False,
    left_running: bool = False,
    tool: str | None = None,
) -> Answer:
    """A 500 for a tool that raised (a retry runs it again, unless work it started may still be running) or
    `returned` something unsendable (it does not)."""
    reference = ctx.reference
    # The answer's reference is all the caller has: the log line must carry it to be found by it.
    logger.error(f"{what} crashed", extra={"call_id": ctx.call_id, "reference": reference, **_crash_summary(error)})
    from median_lambda.authoring.local_crash import explain_locally  # only a crash pays for it, never a cold POST

    explain_locally(what, reference, error)
    if left_running:
        _left_running(what, ctx, tool)
        return Answer(
            500,
            error_body(
                ErrorCode.INTERNAL_ERROR,
                f"The tool failed on the server, and {_LEFT_RUNNING}. Reference {reference}.",
                post=True,
            ),
        )
    return Answer(
        500,
        error_body(ErrorCode.INTERNAL_ERROR, f"The tool failed on the server; reference {reference}.", post=True),
        rerun_on_retry=not returned,
    )


# What an answer says of work its call left running, which is recorded: a retry of its callId gets it again.
_LEFT_RUNNING = (
    "work it started may still be running, so it is unknown whether it did its work; check before calling "
    "it again, with a new callId"
)


def _left_running(what: str, ctx: ToolContext, tool: str | None) -> None:
    """Say that work a call started may still run once it is answered: an ERROR line, and for a tool its metric."""
    logger.error(
        f"{what} left work running after its answer: its callId's record is kept, so a retry gets this "
        "answer and the tool does not run again",
        extra={"call_id": ctx.call_id, "reference": ctx.reference},
    )
    if tool is not None:
        record_work_left_running(tool)


def _declined_for_a_cause(what: str, declined: ToolError, ctx: ToolContext) -> None:
    """Log the exception behind a ToolError by its type and the author's line, never its message (it may quote
    the input), and print it whole off Lambda: the answer is the ToolError's own message, and carries neither."""
    from median_lambda.authoring.local_crash import cause_summary, explain_cause_locally  # only a cause pays for it

    cause = cause_summary(declined)
    # botocore names a modelled AWS error's class by its code: the code is said once.
    code = cause.get("aws_error_code", cause["cause_type"])
    code = f" {code}" if code != cause["cause_type"] else ""
    logger.warning(
        f"{what} declined the call, caused by {cause['cause_type']}{code} at {cause['cause_origin']}",
        extra={"call_id": ctx.call_id, "reference": ctx.reference, **cause},
    )
    explain_cause_locally(what, ctx.reference, declined)


def _too_large(what: str, serialized: str, ctx: ToolContext) -> Answer:
    reference = ctx.reference
    logger.error(
        f"{what} returned an answer too large for Lambda to send",
        extra={"call_id": ctx.call_id, "reference": reference, "answer_characters": len(serialized)},
    )
    return Answer(
        500,
        error_body(
            ErrorCode.INTERNAL_ERROR,
            f"The tool's answer is too large to send: Lambda returns at most {MAX_RESPONSE_BYTES:,} bytes. "
            f"Reference {reference}.",
            post=True,
        ),
    )


def _timed_out(
    what: str,
    ctx: ToolContext,
    raised: BaseException | None = None,
    *,
    stopped: ToolTimedOut | None = None,
    left_running: bool = False,
    tool: str | None = None,
) -> Answer:
    reference = ctx.reference
    # The answer's reference is all the caller has: the log line must carry it to be found by it.
    # What the tool raised once its outbound calls were cut short is named by its type, never its text.
    raised_type = {"error_type": type(raised).__name__} if raised is not None else {}
    logger.error(f"{what} timed out", extra={"call_id": ctx.call_id, "reference": reference, **raised_type})
    from median_lambda.authoring.local_crash import explain_timeout_locally  # only a timeout pays for it

    # Where it was: where its time limit stopped it, the thread left running it, or the call cut short.
    if stopped is not None:
        explain_timeout_locally(what, reference, stopped.stopped, stopped.left_in)
    else:
        explain_timeout_locally(what, reference, raised, None)
    if left_running:
        _left_running(what, ctx, tool)
        return Answer(
            504,
            error_body(
                ErrorCode.TIMEOUT,
                f"The tool did not finish in the time this function had left, and {_LEFT_RUNNING}. "
                f"Reference {reference}.",
                post=True,
            ),
        )
    return Answer(
        504,
        error_body(
            ErrorCode.TIMEOUT,
            "The tool did not finish in the time this function had left, so it is unknown whether it did its "
            f"work; check before retrying. Reference {reference}.",
            post=True,
        ),
        rerun_on_retry=True,
    )


def _call(
    function: Callable[..., Any], kwargs: dict[str, Any], ctx: ToolContext, is_async: bool, left: list[bool]
) -> Any:
    """The tool's result within its time; its outbound calls end TOOL_MARGIN_SECONDS before that, as a whole.

    Whatever library a tool calls out with, a step's timeout does not bound a call (a server
    that trickles its answer never meets one): the calls the tool has under way when that time
    is up are cut short with its library's own error (median_lambda/runtime/time_limits.py), which the
    tool turns into its own ToolError with the margin it has left. An async tool's work that outlives
    it (a task that would not end, a thread of its loop's executor) appends True to `left`.
    """
    remaining = ctx.remaining_seconds()
    if remaining is None:
        if is_async:
            from median_lambda.calls.event_loop import await_within

            return await_within(None, function, kwargs, left=left)
        return function(**kwargs)
    outbound_seconds = remaining - TOOL_MARGIN_SECONDS
    token = OUTBOUND_DEADLINE.set(time.monotonic() + outbound_seconds)
    cut: list[bool] = []  # an async tool's connections, cut at that time
    try:
        if is_async:
            # Imported here: asyncio would cost every cold POST, sync tools' included, ~10-35 ms.
            from median_lambda.calls.event_loop import await_within

            return await_within(remaining, function, kwargs, cut_after=outbound_seconds, cut=cut, left=left)
        return call_within(remaining, function, kwargs, interrupt_after=outbound_seconds)
    except (ToolError, ToolTimedOut):
        raise
    except Exception as error:
        if cut or _cut_short(error):
            raise _CutShort from error
        raise
    finally:
        OUTBOUND_DEADLINE.reset(token)


class _CutShort(Exception):
    """The tool raised what an outbound call cut short at its time raised: its `__cause__`."""


def _cut_short(error: BaseException) -> bool:
    """Whether `error` came of an outbound call cut short at its time: its own, or one it led to (each library
    raises its own error `from` the one it met)."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, OutboundTimeUp) or is_aws_call_timed_out(cause):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def _run(
    what: str,
    function: Callable[..., Any],
    kwargs: dict[str, Any],
    ctx: ToolContext,
    is_async: bool = False,
    *,
    tool: str | None = None,
    threads: list[threading.Thread] | None = None,
) -> Answer:
    """The answer of `function(**kwargs)`: its output, its ToolError, or the 500 or 504 its crash or timeout makes.

    Where the 500 or 504 would let a retry run it again, work it started that may still be running is
    looked for first, and makes the answer one that is recorded (`_LEFT_RUNNING`): the tool was stopped
    waiting on another thread's or a process's work, or ran in a worker thread it is still running in
    (median_lambda/calls/deadline.py); an async tool left a task that would not end, or work in its loop's
    executor (median_lambda/calls/event_loop.py); or a thread is alive that was not among the `threads` before
    it (listed for a call through the idempotency table, whose retry would run the tool again: ~2 us beside
    the table's milliseconds, which a warm call without it is never charged).
    """
    left: list[bool] = []
    try:
        output = _call(function, kwargs, ctx, is_async, left)
    except ToolTimedOut as stopped:
        running = stopped.work_left_running or _still_running(left, threads)
        return _timed_out(what, ctx, stopped=stopped, left_running=running, tool=tool)
    except ToolError as declined:
        # Python's rule for the cause its traceback shows (local_crash.cause_of), read here: a ToolError
        # with none, a tool's everyday answer, imports nothing more.
        if declined.__cause__ is not None or (declined.__context__ is not None and not declined.__suppress_context__):
            _declined_for_a_cause(what, declined, ctx)
        body = {
            "version": PROTOCOL_VERSION,
            "ok": False,
            "error": {"code": ErrorCode.TOOL_ERROR, "message": declined.message},
        }
    except _CutShort as cut_short:  # a call cut short at its time, its error not caught: its work is in doubt
        running = _still_running(left, threads)
        return _timed_out(what, ctx, cut_short.__cause__, left_running=running, tool=tool)
    except BaseException as error:  # any, SystemExit and KeyboardInterrupt too: a library that exits is a crash
        return _crashed(what, error, ctx, left_running=_still_running(left, threads), tool=tool)
    else:
        if isinstance(output, BaseModel):
            output = output.model_dump(mode="json", by_alias=True)
        body = ok_body(output)
    try:
        serialized = to_json(body)
    except (TypeError, ValueError, RecursionError) as error:  # RecursionError: nested too deep to serialise
        return _crashed(f"{what} (its return value is not JSON)", error, ctx, returned=True)
    if not body_fits(serialized):
        return _too_large(what, serialized, ctx)
    return Answer(200, body, serialized)


def _threads_a_tool_can_start() -> list[threading.Thread]:
    """The threads alive that are no daemons: those a tool's code starts (a Thread of its own, a pool's workers,
    asyncio's executor's), never a server's per-connection daemons (werkzeug's under moto, in a project's tests)."""
    return [thread for thread in threading.enumerate() if not thread.daemon]


def _still_running(left: list[bool], threads: list[threading.Thread] | None) -> bool:
    """Whether work the call started may still be running: an async tool's (`left`), or a thread alive now
    that was not among `threads` before it."""
    if left:
        return True
    if threads is None:
        return False
    return any(thread not in threads for thread in _threads_a_tool_can_start())


def _outcome_metric(answer: Answer) -> str | None:
    if answer.status == 200:
        return None if answer.body.get("ok") else Metric.TOOL_ERRORS
    return Metric.TOOL_TIMEOUTS if answer.status == 504 else Metric.TOOL_CRASHES


class _SetupCrashed(Exception):
    """Building what a tool takes raised what no dependency's failure is (its `__cause__`): the tool's crash,
    before it ran. `place` is the author's, where the failing one is declared; `cause` says what raised."""

    def __init__(self, place: str, cause: str) -> None:
        super().__init__(f"{place}: {cause}")
        self.place = place


def _dependencies(tool: Tool) -> dict[str, Any]:
    """The values of the parameters the framework fills: each Settings, secret and parameter, per container.

    A secret or parameter that cannot be had raises SecretUnavailable, a Settings class ConfigurationError
    (SettingsCrashed where its own code raised); anything else raised on the way is _SetupCrashed.
    """
    from median_lambda.authoring.dependencies import Dependency, SecretUnavailable
    from median_lambda.authoring.settings import ConfigurationError

    values = {}
    for name, dependency in tool.dependencies:
        try:
            values[name] = dependency.value() if isinstance(dependency, Dependency) else dependency.current()
        except (SecretUnavailable, ConfigurationError, Stopped):
            raise
        except BaseException as error:  # SystemExit from a settings class's code too: the tool's crash
            if isinstance(dependency, Dependency):
                raise _SetupCrashed(tool.location, f"reading {dependency!r} raised {type(error).__name__}") from error
            raise _SetupCrashed(
                dependency.location(), f"building {dependency.__name__} raised {type(error).__name__}"
            ) from error
    return values


def _setup_crashed(tool: Tool, cause: str, error: BaseException, ctx: ToolContext) -> Answer:
    """A 500 for a call whose tool's setup crashed (its Settings class's own code, say): the tool's crash,
    before it ran, logged with the author's file:line and the exception's type, never its text or a value."""
    logger.error(
        f"Tool {tool.name} crashed before it ran, building what it takes",
        extra={"call_id": ctx.call_id, "reference": ctx.reference, "error_type": type(error).__name__, "cause": cause},
    )
    from median_lambda.authoring.local_crash import explain_locally  # only a crash pays for it

    explain_locally(f"Tool {tool.name}'s setup", ctx.reference, error)
    return Answer(
        500,
        error_body(
            ErrorCode.INTERNAL_ERROR,
            f"The tool failed on the server before it ran; reference {ctx.reference}.",
            post=True,
        ),
        rerun_on_retry=True,
    )


def _without_dependencies(tool: Tool, failure: Exception, ctx: ToolContext) -> Answer:
    """A 500 for a call whose secret, parameter or settings could not be had: the tool did not run."""
    # The cause names the secret or parameter and botocore's reason, or the Settings class's line, the
    # variable and where to set it for this stage; never a value. Every other tool goes on answering.
    logger.error(
        f"Tool {tool.name} did not run: what it takes could not be read",
        extra={"call_id": ctx.call_id, "reference": ctx.reference, "cause": str(failure)},
    )
    if not running_in_deployed_lambda():  # the author's terminal, or the test's output, says it in words
        sys.stderr.write(
            f"Tool {tool.name} did not run, answered 500 internal_error (reference {ctx.reference}): {failure}\n"
        )
    return Answer(
        500,
        error_body(
            ErrorCode.INTERNAL_ERROR,
            "The tool could not read its configuration or secrets, so it did not run; retry later. "
            f"Reference {ctx.reference}.",
            post=True,
        ),
        rerun_on_retry=True,
    )


def _with_dependencies(tool: Tool, kwargs: dict[str, Any], ctx: ToolContext) -> Answer | None:
    """Fill `kwargs` with the tool's dependencies, bounded by its time; the answer instead when they cannot be had."""
    from median_lambda.authoring.dependencies import Dependency, SecretUnavailable
    from median_lambda.authoring.settings import ConfigurationError, SettingsCrashed

    remaining = ctx.remaining_seconds()
    # Settings are in memory once registered: only a secret or parameter may wait on the network.
    reads = any(isinstance(dependency, Dependency) for _, dependency in tool.dependencies)
    try:
        if remaining is None or not reads:
            kwargs.update(_dependencies(tool))
        else:
            kwargs.update(call_within(remaining, _dependencies, {"tool": tool}))
    except SettingsCrashed as crashed:
        return _setup_crashed(tool, str(crashed), crashed.__cause__ or crashed, ctx)
    except _SetupCrashed as crashed:
        return _setup_crashed(tool, str(crashed), crashed.__cause__ or crashed, ctx)
    except (SecretUnavailable, ConfigurationError) as failure:
        return _without_dependencies(tool, failure, ctx)
    except ToolTimedOut:
        logger.error(
            f"Tool {tool.name} did not run: reading its secrets took the time it had",
            extra={"call_id": ctx.call_id, "reference": ctx.reference},
        )
        return Answer(
            504,
            error_body(
                ErrorCode.TIMEOUT,
                "Reading the tool's secrets took longer than the time this function had left, so the tool did not "
                f"run; retry. Reference {ctx.reference}.",
                post=True,
            ),
            rerun_on_retry=True,
        )
    return None


def run_tool(tool: Tool, args: BaseModel, ctx: ToolContext, *, recorded: bool = False) -> Answer:
    """The tool's answer; `recorded`: a call through the idempotency table, whose retry gets what it answers."""
    kwargs: dict[str, Any] = {tool.model_parameter: args}
    if tool.context_parameter:
        kwargs[tool.context_parameter] = ctx
    threads = _threads_a_tool_can_start() if recorded else None
    started = time.perf_counter()
    with tool_segment(tool.name):
        # The answer instead of the tool's, when what it takes cannot be had: it does not run.
        instead = _with_dependencies(tool, kwargs, ctx) if tool.dependencies else None
        answer = instead or _run(
            f"Tool {tool.name}", tool.function, kwargs, ctx, tool.is_async, tool=tool.name, threads=threads
        )
    record_tool_run(tool.name, _outcome_metric(answer), (time.perf_counter() - started) * 1000)
    return answer


def _call_members(document: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    call_id = document.get("callId")
    if call_id is not None and not isinstance(call_id, str):
        raise Refusal(400, ErrorCode.BAD_REQUEST, "callId must be a string.")
    conversation = document.get("conversation", {})
    if not isinstance(conversation, dict):
        raise Refusal(400, ErrorCode.BAD_REQUEST, "conversation must be a JSON object.")
    return call_id, conversation


def _may_hold_lone_surrogates(body: bytes) -> bool:
    # Valid UTF-8 carries no surrogate: only a \uXXXX escape can make one, and most bodies have
    # none, so the members are searched only when this scan finds one. bytes.find, not `in`:
    # ~0.3 us here against ~1.2 us for the two `in` tests a \uD escape needs (either case).
    return body.find(b"\\u") >= 0


def _refuse_lone_surrogates(document: dict[str, Any]) -> None:
    # Refused, not replaced: two callIds differing only in a lone surrogate would become one, and
    # the tool would see other text than was sent. Nothing has run, so nothing is lost.
    for member in ("callId", "conversation", "input"):
        if member in document and holds_lone_surrogate(document[member]):
            raise Refusal(
                400,
                ErrorCode.BAD_REQUEST,
                f"{member} holds a lone surrogate (a \\uD800-\\uDFFF escape without its pair), which is no "
                "Unicode text; escape both halves of a pair, or send the character as UTF-8.",
            )


def _context(
    call_id: str | None, conversation: dict[str, Any], request_id: str, lambda_context: LambdaContext | None
) -> ToolContext:
    deadline = None
    if lambda_context is not None and hasattr(lambda_context, "get_remaining_time_in_millis"):
        remaining = lambda_context.get_remaining_time_in_millis() / 1000 - TOOL_TIME_MARGIN_SECONDS
        deadline = time.monotonic() + remaining
    return ToolContext(
        call_id=call_id,
        conversation=conversation,
        request_id=request_id,
        lambda_context=lambda_context,
        deadline=deadline,
    )


def _kept_for_the_table(ctx: ToolContext) -> ToolContext:
    """The context of a call through the idempotency table: its tool leaves time for the answer's save."""
    if ctx.deadline is None:
        return ctx
    return dataclasses.replace(ctx, deadline=ctx.deadline - STORE_CALL_SECONDS)


def _validated_in_time(tool: Tool, raw_input: Any, ctx: ToolContext, kept_before_tool: float) -> BaseModel:
    """The input validated, by the tool's deadline less `kept_before_tool`; else a 504 with the tool not run.

    Validation runs the author's model (patterns, validators), which can take longer than the
    function has: bounded like the tool, it cannot make the answer miss Lambda's deadline. What
    its own code raises that is no validation error (a validator's KeyError, a SystemExit) is the
    tool's crash, before it ran: a 500 counted in its ToolCrashes.
    """
    try:  # one function, not two: a call costs a warm POST more than a `try` does (nothing)
        remaining = ctx.remaining_seconds()
        if remaining is None:
            return validate_input(tool, raw_input)
        seconds = remaining - kept_before_tool
        if seconds <= 0:
            # What the handler's own steps may take (the table's requests, the answer) is more than is left.
            logger.error(
                "Too little time left to run a call safely; answering 504, the tool did not run",
                extra={"call_id": ctx.call_id, "tool": tool.name, "seconds_short": round(-seconds, 3)},
            )
            raise Refusal(
                504,
                ErrorCode.TIMEOUT,
                "This function had too little time left to run the tool safely, so the tool did not run; retry. "
                f"If this persists, raise the function's timeout. Reference {ctx.reference}.",
            )
        try:
            model: BaseModel = call_within(seconds, validate_input, {"tool": tool, "raw_input": raw_input})
        except ToolTimedOut:
            logger.error(
                "Validating the input took longer than the time left; answering 504, the tool did not run",
                extra={"call_id": ctx.call_id, "tool": tool.name, "seconds": round(seconds, 3)},
            )
            raise Refusal(
                504,
                ErrorCode.TIMEOUT,
                "Checking the input against the tool's schema took longer than the time this function had left, "
                f"so the tool did not run. Reference {ctx.reference}.",
            ) from None
    except Refusal:
        raise
    except BaseException as error:
        raise _validation_crashed(tool, error, ctx) from None
    return model


def _validation_crashed(tool: Tool, error: BaseException, ctx: ToolContext) -> Refusal:
    logger.error(
        f"Tool {tool.name} crashed before it ran, validating its input",
        extra={"call_id": ctx.call_id, "reference": ctx.reference, **_crash_summary(error)},
    )
    from median_lambda.authoring.local_crash import explain_locally  # only a crash pays for it

    explain_locally(f"Tool {tool.name}'s input model", ctx.reference, error)
    record_tool_run(tool.name, Metric.TOOL_CRASHES, 0.0)  # the tool's crash, as its alarm counts one
    return Refusal(
        500,
        ErrorCode.INTERNAL_ERROR,
        f"The tool failed on the server before it ran, checking its input; reference {ctx.reference}.",
    )


def _tools_failed(failed: ToolLoadError, ctx: ToolContext, tool: str | None) -> Refusal:
    # The lines name the author's files; the answer names only the reference to find them by.
    problems = {"reference": ctx.reference, "problems": failed.lines}
    if failed.module is not None:
        # Only the module of this tool was imported (a deployed function): the other tools still run.
        what = f"tool {tool}" if tool is not None else "the diagnostics"
        logger.error(f"The module of {what} failed to import; it did not run", extra=problems)
        if tool is not None:
            record_tool_run(tool, Metric.TOOL_CRASHES, 0.0)  # that tool's crash, as its alarm counts one
        else:
            record_no_tool_can_run()
        held = "this tool" if tool is not None else "the diagnostics"
        message = f"The module that holds {held} failed to import, so it did not run; reference {ctx.reference}."
        return Refusal(500, ErrorCode.INTERNAL_ERROR, message)
    logger.error("The tools failed to import; no tool can run", extra=problems)
    record_no_tool_can_run()  # counted where the crash alarm, and a gradual deployment's rollback, look
    return Refusal(
        500,
        ErrorCode.INTERNAL_ERROR,
        f"The endpoint's tools failed to import, so no tool can run; reference {ctx.reference}.",
    )


def _tools_for(tool: str | None, ctx: ToolContext) -> Registry:
    """The registry holding `tool` (None: the diagnostics), its module imported (registry.load_tools_for)."""
    try:  # a try costs a warm POST nothing; a call around load_tools_for() would
        return load_tools_for(tool)
    except ToolLoadError as failed:
        raise _tools_failed(failed, ctx, tool) from None


def handle_post(body: bytes, request_id: str, lambda_context: LambdaContext | None) -> Answer:
    try:
        document = parse_body(body)
        _check_version(document)
        op = document.get("op")
        if op not in OPS:
            raise Refusal(400, ErrorCode.BAD_REQUEST, f"op must be one of: {', '.join(OPS)}.")
        call_id, conversation = _call_members(document)
        if _may_hold_lone_surrogates(body):
            _refuse_lone_surrogates(document)
        ctx = _context(call_id, conversation, request_id, lambda_context)
        if op == OP_DIAGNOSTICS:
            registry = _tools_for(None, ctx)
            if not registry.diagnostics:
                raise Refusal(404, ErrorCode.NO_DIAGNOSTICS, "This endpoint declares no diagnostics function.")
            function = registry.diagnostics[0]
            parameter = _context_parameter(function)
            kwargs = {parameter: ctx} if parameter else {}
            return _run("Diagnostics", function, kwargs, ctx, inspect.iscoroutinefunction(function))
        assert op == OP_CALL
        name = document.get("tool")
        if not isinstance(name, str) or not name:
            raise Refusal(400, ErrorCode.BAD_REQUEST, 'A call must name its tool: "tool": "<name>".')
        tool = _tools_for(name, ctx).find(name)
        if tool is None:
            raise Refusal(
                404,
                ErrorCode.UNKNOWN_TOOL,
                "This endpoint serves no tool by that name; GET the manifest for its tools.",
            )
        raw_input = document.get("input", {})
        if applies(call_id, tool.idempotent):
            ctx = _kept_for_the_table(ctx)
            args = _validated_in_time(tool, raw_input, ctx, kept_before_tool=STORE_CALL_SECONDS)
            # The input as the tool gets it, where its JSON alone would not tell (median_lambda/calls/whole_numbers.py).
            identified = as_identified(tool.input_model, raw_input)
            return at_most_once(tool.name, identified, ctx, lambda: run_tool(tool, args, ctx, recorded=True))
        args = _validated_in_time(tool, raw_input, ctx, kept_before_tool=0.0)
        return run_tool(tool, args, ctx)
    except Refusal as refusal:
        return refusal.answer
