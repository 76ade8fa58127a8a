"""The Powertools Logger, Metrics and Tracer every module of the handler reports through.

Service name and level come from POWERTOOLS_SERVICE_NAME and POWERTOOLS_LOG_LEVEL, as
Powertools reads them (template.yaml's Globals set the service to the stack's name): the
`service` of every log line, of the metrics' dimension and of the traces, and the name of the
Python logger a tool's own `Logger()` shares. Nothing logged, measured or traced here may
carry the key, a signature or a tool's input or output values: they are customers' data.

Every line logged during an invocation carries the keys Powertools' `inject_lambda_context`
puts on it (`function_request_id`, `cold_start`, `function_name`, `function_memory_size`,
`function_arn`), a tool's own `Logger()` lines included; lines logged before the first carry none.

Metrics (CloudWatch EMF, namespace from POWERTOOLS_METRICS_NAMESPACE), one line per
invocation (the one Powertools' `flush_metrics` would print), dimensions `service`, `function_version`
(the version Lambda runs, AWS_LAMBDA_FUNCTION_VERSION: a canary's series apart from the old
version's) and either `tool` or `cause`:
  ToolCalls, ToolErrors, ToolCrashes, ToolTimeouts, ToolDuration (ms)   per tool that ran
  ToolCrashes                                     under `(every tool)`: a request no tool could serve
  ReplayedCalls                                   per tool, answered from its callId record
  ToolWorkLeftRunning                             per tool answered 500 or 504 while work it started
                                                  may still be running (median_lambda/calls/dispatch.py)
  RejectedSignatures                              per cause: missing, malformed, stale, mismatch
and, each on a line of its own, by `service` and `function_version` alone:
  ServerErrors                                    once per answer of status 500 or more, whatever made
                                                  it: what the rollback alarm on a version's 5XX rate reads
  TimeLimitsDegraded                              once per container where something else owns SIGALRM
                                                  (median_lambda/runtime/time_limits.py)
and, once per container that was a cold start, Powertools' own `ColdStart` (dimensions
`function_name` and `service`, a line of its own, as `log_metrics(capture_cold_start_metric=True)`
writes it) with the first metrics the container publishes: its first invocation's, unless that
was a served GET, which publishes none (below), and then the next one's that does. What a tool
records through Powertools' own `Metrics()` is published at the end of its call, on a line of its
own, as `log_metrics` publishes a handler's; it never reaches the lines above ("The handler's own
metrics", below).

Importing any Powertools module imports its whole package (Logger, Metrics, Tracer), which
costs a cold GET more than its target allows, and a served GET logs, measures and traces
nothing. So this module imports Powertools only when something is first logged or measured
(or at import when tracing is switched on, which needs its decorator from the start): write
`observability.logger.info(…)` at the call, not `from median_lambda.runtime.observability import logger`
at the top of a module that GET imports. tests/integration/test_cold_get.py holds GET to that.
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from typing import TYPE_CHECKING, Any, cast

from median_lambda.protocol import (
    EMPTY_FLUSH_WARNING,
    FUNCTION_VERSION_ENV,
    INITIALIZATION_TYPE_ENV,
    METRICS_DISABLED_ENV,
    METRICS_NAMESPACE,
    METRICS_NAMESPACE_ENV,
    POWERTOOLS_DEV_ENV,
    PROVISIONED_INITIALIZATION,
    SERVICE_NAME,
    SERVICE_NAME_ENV,
    TRACE_DISABLED_ENV,
    UNPUBLISHED_VERSION,
)
from median_lambda.runtime.env import library_version, running_in_deployed_lambda

if TYPE_CHECKING:
    import logging
    from collections.abc import Callable, Iterator
    from contextlib import AbstractContextManager

    from aws_lambda_powertools import Logger, Metrics, Tracer
    from aws_lambda_powertools.utilities.typing import LambdaContext

    logger: Logger

_created_logger: Logger | None = None


def service_name() -> str:
    """POWERTOOLS_SERVICE_NAME, as Powertools reads it; median-tools where nothing sets it (make serve)."""
    return os.environ.get(SERVICE_NAME_ENV, "").strip() or SERVICE_NAME


def function_version() -> str:
    """The version of the function this container runs, as Lambda numbers it; `$LATEST` where none is published."""
    return os.environ.get(FUNCTION_VERSION_ENV, "").strip() or UNPUBLISHED_VERSION


def _logger() -> Logger:
    global _created_logger
    if _created_logger is None:
        from aws_lambda_powertools import Logger

        # Every line says which version of the library wrote it: after an upgrade, which code logged what.
        _created_logger = Logger(service=service_name(), median_lambda_version=library_version())
        # On the handler, not the logger: a record a tool's `Logger(child=True)` propagates up
        # passes the parent's handler and never the parent logger's filters.
        _created_logger.registered_handler.addFilter(_keyed_for_the_invocation)
        globals()["logger"] = _created_logger  # later reads of `observability.logger` skip __getattr__
    return _created_logger


# The keys Powertools' inject_lambda_context appends: its `cold_start`, and the public fields of the
# Lambda context it reads, under the names it gives them.
INVOCATION_KEYS = ("cold_start", "function_name", "function_memory_size", "function_arn", "function_request_id")
# The latest invocation (None before the first), and whether it is the container's first, as
# Powertools counts it: an environment initialised for provisioned concurrency has no cold start.
# inject_lambda_context would wrap the handler in Powertools, which a cold GET must not import
# (tests/integration/test_cold_get.py; a cold GET through the extension with Powertools imported
# took 2.25x its floor, against 1.24x without: bench/README.md). Its public equivalent instead:
# lambda_handler marks each invocation's start (~0.2 us), and at the invocation's first log line the
# keys are appended with the Logger's `append_keys`, from the context's public fields, as
# inject_lambda_context appends them, and the log sampling decided anew for a warm invocation
# (`refresh_sample_rate_calculation`), as it does. They stay until the next invocation's first
# line, as inject_lambda_context leaves them.
_invocation: LambdaContext | None = None
_cold_start = False
_first_invocation_ahead = os.environ.get(INITIALIZATION_TYPE_ENV) != PROVISIONED_INITIALIZATION
# Bumped at each start: the Logger holds the keys of the invocation numbered `_keyed_at`.
_invocations = 0
_keyed_at = 0


def invocation_started(context: LambdaContext | None) -> None:
    """Lines logged from here on carry this invocation's request id and cold-start flag."""
    global _invocation, _cold_start, _first_invocation_ahead, _invocations
    _invocation = context
    _cold_start = _first_invocation_ahead
    _first_invocation_ahead = False
    _invocations += 1


def forget_invocations() -> None:
    """Lines carry no invocation's keys, and the next is a cold start: a fresh container's (median_lambda.testing's)."""
    global _invocation, _first_invocation_ahead, _invocations
    _invocation = None
    _first_invocation_ahead = os.environ.get(INITIALIZATION_TYPE_ENV) != PROVISIONED_INITIALIZATION
    _invocations += 1


def _keyed_for_the_invocation(record: logging.LogRecord) -> bool:
    """A handler filter that lets every record through, with the Logger's keys made the current invocation's."""
    global _keyed_at
    if _keyed_at != _invocations:
        _keyed_at = _invocations
        _key_lines_with(_logger(), _invocation)
    return True


def _key_lines_with(active: Logger, context: LambdaContext | None) -> None:
    try:
        fields = {
            "function_name": context.function_name,  # type: ignore[union-attr]
            "function_memory_size": context.memory_limit_in_mb,  # type: ignore[union-attr]
            "function_arn": context.invoked_function_arn,  # type: ignore[union-attr]
            "function_request_id": context.aws_request_id,  # type: ignore[union-attr]
        }
    except AttributeError:  # before the first invocation (None), or a test's context without Lambda's fields
        active.remove_keys(INVOCATION_KEYS)
        return
    active.append_keys(cold_start=_cold_start, **fields)
    if active.sampling_rate and not _cold_start:
        active.refresh_sample_rate_calculation()


class Metric:
    TOOL_CALLS = "ToolCalls"
    TOOL_ERRORS = "ToolErrors"  # the tool declined: ok false, tool_error
    TOOL_CRASHES = "ToolCrashes"  # 500 internal_error
    TOOL_TIMEOUTS = "ToolTimeouts"  # 504 timeout
    TOOL_DURATION = "ToolDuration"
    REPLAYED_CALLS = "ReplayedCalls"
    REJECTED_SIGNATURES = "RejectedSignatures"
    SERVER_ERRORS = "ServerErrors"  # any answer of status 500 or more
    TIME_LIMITS_DEGRADED = "TimeLimitsDegraded"
    TOOL_WORK_LEFT_RUNNING = "ToolWorkLeftRunning"  # a 500 or 504 whose work may still be running: recorded


# The dimension every metric carries: which version recorded it. A container runs one version all its life.
VERSION_DIMENSION = "function_version"


# Each metric's CloudWatch unit where it is not a count.
_UNITS = {Metric.TOOL_DURATION: "Milliseconds"}

# The `tool` of a request that no tool could serve: this container has no usable Median key, its
# stage names no stage of settings.toml, or its tools failed to import. Never a tool's name (those
# take no parentheses).
EVERY_TOOL = "(every tool)"

# The handler's own metrics are written here, one EMF line per dimension an invocation recorded,
# and not through Powertools' Metrics, for two reasons. Powertools' metric set is shared by every
# `Metrics()` in the process, a tool's included: whatever a tool does to it (29 dimensions, default
# dimensions of its own, a `clear_metrics`) would reach the counts the alarms and a gradual
# deployment's rollback read (their queries are SCHEMA(namespace, function_version, service, tool): a dimension more
# and a series is never read). And through Powertools' public API (EphemeralMetrics: add_dimension,
# add_metric twice, flush_metrics), a warm POST's metrics cost 213k-223k instructions of a call
# (callgrind), against 26k for these lines (52k with the tools' shared set published below), and
# took a warm POST of the example's orderStatus on its artifact to 7.8x its floor, against 4.2x
# (make bench's target: 6x; bench/README.md, "Issue 34"). The lines are what Powertools'
# flush_metrics prints for the same metrics, but for the timestamp (tests/unit/test_observability.py
# compares them).
#
# What a tool records through Powertools' own `Metrics` is published as Powertools' log_metrics
# decorator publishes a handler's (and with it, once per container that was a cold start,
# Powertools' ColdStart metric), at the end of the tool's call; what Powertools cannot publish is
# said once at WARNING and dropped, so the next call starts with an empty set.

# This invocation's metrics, by the one dimension of their own that they carry (`tool` or `cause`;
# (None, None): `service` and `function_version` alone), as (name, value) pairs in the order recorded.
_unpublished: dict[tuple[str | None, str | None], list[tuple[str, float]]] = {}


def _recorded(dimension: str | None, value: str | None) -> list[tuple[str, float]]:
    """This invocation's metrics under `dimension` = `value`: append (name, value) pairs, one line at its end."""
    recorded = _unpublished.get((dimension, value))
    if recorded is None:
        recorded = _unpublished[dimension, value] = []
    return recorded


def record_tool_run(tool: str, outcome_metric: str | None, milliseconds: float) -> None:
    """A registered tool ran; outcome_metric is TOOL_ERRORS, TOOL_CRASHES, TOOL_TIMEOUTS or None for ok."""
    recorded = _recorded("tool", tool)
    recorded.append((Metric.TOOL_CALLS, 1.0))
    recorded.append((Metric.TOOL_DURATION, milliseconds))
    if outcome_metric is not None:
        recorded.append((outcome_metric, 1.0))


def record_no_tool_can_run() -> None:
    """A request answered 500 because this container can run no tool: ToolCrashes, which the crash alarm
    (and so a gradual deployment's rollback) watches, under the `tool` EVERY_TOOL."""
    _recorded("tool", EVERY_TOOL).append((Metric.TOOL_CRASHES, 1.0))


def record_work_left_running(tool: str) -> None:
    """A call of `tool` was answered 500 or 504 while work it started may still be running (its answer recorded)."""
    _recorded("tool", tool).append((Metric.TOOL_WORK_LEFT_RUNNING, 1.0))


def record_replay(tool: str) -> None:
    _recorded("tool", tool).append((Metric.REPLAYED_CALLS, 1.0))


def record_rejected_signature(cause: str) -> None:
    _recorded("cause", cause).append((Metric.REJECTED_SIGNATURES, 1.0))


def record_server_error() -> None:
    """An answer of status 500 or more: ServerErrors, on a line of its own by `service` and `function_version` alone,
    whatever else the invocation recorded (a `tool`, or nothing at all for the handler's last-resort 500), so that
    every 5XX lands in the one series the rollback alarm divides by the version's invocations (template.yaml's
    Api5xxRateAlarm). Counted in one place, the handler's exit, for whatever made the answer."""
    _recorded(None, None).append((Metric.SERVER_ERRORS, 1.0))


def record_time_limits_degraded() -> None:
    """This container can arm no time limit (something else owns SIGALRM): TimeLimitsDegraded, by `service` and
    `function_version` alone (a container-wide fact, no tool's), printed at once."""
    if _metrics_on():
        _write_lines({(None, None): [(Metric.TIME_LIMITS_DEGRADED, 1.0)]})


def flush_metrics() -> None:
    """Publish what this invocation recorded: its own lines; what a tool recorded through Powertools' Metrics;
    and, in a container that was a cold start, once, Powertools' ColdStart. Never raises: metrics must not
    cost an answer."""
    global _unpublished
    if not _unpublished:
        return  # a served GET, or a call refused before a tool could run: nothing was recorded
    recorded, _unpublished = _unpublished, {}
    if not _metrics_on():
        _drop_tools_metrics()
        return
    # First: the ColdStart line comes before the invocation's own, as log_metrics prints it.
    _publish_tools_metrics(recorded)
    _write_lines(recorded)


def forget_unflushed_metrics() -> None:
    """Drop what was recorded since the last flush, and read the namespace, the service and whether metrics are
    on anew at the next: a fresh container's (median_lambda.testing's reset).

    A call made below the entry point (dispatch's handle_post, in a test) records its metrics and
    never flushes them; without this, the next invocation's EMF line would count them as its own.
    """
    global _metrics_switched_on
    _unpublished.clear()
    _frames.clear()
    _metrics_switched_on = None
    _drop_tools_metrics()


# --- The lines -------------------------------------------------------------------------------

# Whether metrics are printed (None: not read yet), read once per container: Lambda never changes a
# running container's environment.
_metrics_switched_on: bool | None = None
_TRUE = ("1", "y", "yes", "t", "true", "on")  # strtobool's, as Powertools reads its switches


def _metrics_on() -> bool:
    """Whether metrics are printed, by Powertools' documented switches and its rule: off where
    POWERTOOLS_METRICS_DISABLED is true, or POWERTOOLS_DEV is and the first is unset."""
    global _metrics_switched_on
    if _metrics_switched_on is None:
        disabled = os.environ.get(METRICS_DISABLED_ENV)
        development = os.environ.get(POWERTOOLS_DEV_ENV, "false").strip().lower() in _TRUE
        off = disabled.strip().lower() in _TRUE if disabled is not None else development
        _metrics_switched_on = not off
    return _metrics_switched_on


# Each line's text around its timestamp and its values, by its dimension and the names of the metrics
# recorded, in their order: made once, at the first line of that shape. A line is
# `frame % (timestamp, *values)`, the values reordered by `order` where a name was recorded twice.
_frames: dict[tuple[str | None, str | None, tuple[str, ...]], tuple[str, tuple[int, ...] | None]] = {}


def _frame(dimension: str | None, value: str | None, names: tuple[str, ...]) -> tuple[str, tuple[int, ...] | None]:
    """The line, as Powertools' flush_metrics prints it, with %-places for its timestamp and each value."""
    namespace = os.environ.get(METRICS_NAMESPACE_ENV, "").strip() or METRICS_NAMESPACE
    # In the order Powertools prints them for a Metrics whose default dimension is the version: the default, the
    # one added, then `service`.
    dimensions: list[tuple[str, str | None]] = [(VERSION_DIMENSION, function_version())]
    dimensions += [(dimension, value)] if dimension is not None else []
    dimensions += [("service", service_name())]
    # Each metric once, its values in a list in the order recorded, as Powertools' add_metric appends them.
    positions: dict[str, list[int]] = {}
    for index, name in enumerate(names):
        positions.setdefault(name, []).append(index)
    definitions = [{"Name": name, "Unit": _UNITS.get(name, "Count")} for name in positions]
    directive = {"Namespace": namespace, "Dimensions": [[name for name, _ in dimensions]], "Metrics": definitions}
    fixed = ",".join(
        [f'"CloudWatchMetrics":{_EMF_ENCODER.encode([directive])}}}']
        + [f"{_EMF_ENCODER.encode(name)}:{_EMF_ENCODER.encode(shown)}" for name, shown in dimensions]
    )
    places = ",".join(f"{_EMF_ENCODER.encode(name)}:[{','.join(['%r'] * len(at))}]" for name, at in positions.items())
    order = tuple(index for at in positions.values() for index in at)
    frame = '{"_aws":{"Timestamp":%d,' + fixed.replace("%", "%%") + "," + places + "}\n"
    _frames[dimension, value, names] = shaped = (frame, order if order != tuple(range(len(names))) else None)
    return shaped


# Powertools prints json.dumps(document, separators=(",", ":")): this encoder, built once. A value is
# printed as json prints a float, its repr.
_EMF_ENCODER = json.JSONEncoder(separators=(",", ":"))


def _write_lines(recorded: dict[tuple[str | None, str | None], list[tuple[str, float]]]) -> None:
    """One EMF line per dimension recorded, each metric's values in the order recorded."""
    try:
        timestamp = int(time.time() * 1000)
        lines = []
        for (dimension, value), metrics in recorded.items():
            names = tuple([name for name, _ in metrics])
            frame, order = _frames.get((dimension, value, names)) or _frame(dimension, value, names)
            amounts = [float(amount) for _, amount in metrics]
            lines.append(frame % (timestamp, *(amounts if order is None else [amounts[index] for index in order])))
        sys.stdout.write("".join(lines))
    except Exception as error:  # stdout closed, say: the answer goes out all the same
        _say_not_published("This invocation's metrics were not published", error, None)


# --- What a tool records through Powertools' Metrics ----------------------------------------------

# Powertools' shared Metrics (every `Metrics()` of the process holds the same set), and its log_metrics
# decorator around a function that does nothing, with the cold-start metric: made at the first flush
# (a served GET imports no Powertools), or when a tool's set is first emptied.
_tools_metrics: Metrics | None = None
_publish_with_cold_start: Callable[[Any, Any], Any] | None = None
TOOLS_METRICS_NOT_PUBLISHED = "The metrics a tool recorded through Powertools' Metrics were not published"


def _nothing(event: Any, context: Any) -> None:
    """What log_metrics decorates: the invocation has run already, and its metrics are what is published."""


def _tools_set() -> Metrics:
    global _tools_metrics, _publish_with_cold_start
    if _tools_metrics is None:
        from aws_lambda_powertools import Metrics

        # Silenced as Powertools' Metrics guide advises; here, not at import, where compiling its pattern
        # would cost every cold GET ~2M instructions. median_lambda.testing's pytest plugin keeps it for
        # every test (pytest puts the filters back after each).
        warnings.filterwarnings("ignore", message=EMPTY_FLUSH_WARNING, category=UserWarning)
        namespace = os.environ.get(METRICS_NAMESPACE_ENV, "").strip() or METRICS_NAMESPACE
        _tools_metrics = Metrics(namespace=namespace, service=service_name())
        _publish_with_cold_start = _tools_metrics.log_metrics(_nothing, capture_cold_start_metric=True)
    return _tools_metrics


def _publish_tools_metrics(recorded: dict[tuple[str | None, str | None], list[tuple[str, float]]]) -> None:
    """Powertools publishes its shared set and, once, its ColdStart metric; then the set is emptied, published
    or not, so that nothing a tool left in it (dimensions without a metric, a set refused) reaches the next call."""
    try:
        tools_metrics = _tools_metrics or _tools_set()
        if _publish_with_cold_start is not None and hasattr(_invocation, "function_name"):
            _publish_with_cold_start(None, _invocation)  # ColdStart names the function: a Lambda context's
        else:
            tools_metrics.flush_metrics()
        tools_metrics.clear_metrics()  # what an empty flush left: a tool's dimensions, or metadata
    except Exception as error:  # Powertools refused the set (29 dimensions and `service`, say)
        tool = next((value for dimension, value in recorded if dimension == "tool"), None)
        _say_not_published(TOOLS_METRICS_NOT_PUBLISHED, error, tool)
        _drop_tools_metrics(with_default_dimensions=True)


def _drop_tools_metrics(*, with_default_dimensions: bool = False) -> None:
    """Empty Powertools' shared set: its metrics, dimensions and metadata. Default dimensions persist across
    invocations, as Powertools documents, but for a set it refused: they may be why, and would refuse the
    next tool's every metric too."""
    if _tools_metrics is None and "aws_lambda_powertools.metrics" not in sys.modules:
        return  # nothing has imported Powertools' Metrics: there is no set
    try:
        tools_metrics = _tools_set()
        if with_default_dimensions:
            tools_metrics.clear_default_dimensions()
        tools_metrics.clear_metrics()
    except Exception:  # noqa: S110 - what clearing may raise is what was said already
        pass


def _say_not_published(what: str, error: Exception, tool: str | None) -> None:
    """One WARNING for what an invocation could not publish: the error's type, never its message (a metric's
    name or dimension may quote a customer's input); off Lambda, the message on stderr for the author."""
    fields = {"error_type": type(error).__name__} | ({"tool": tool} if tool is not None else {})
    try:
        _logger().warning(what, extra=fields)
        if not running_in_deployed_lambda():
            sys.stderr.write(f"{what} ({type(error).__name__}: {error})\n")
    except Exception:  # noqa: S110 - a log line that cannot be written must not cost the answer either
        pass


def __getattr__(name: str) -> Any:
    # `observability.logger`, created at its first use; afterwards a plain module attribute.
    if name == "logger":
        return _logger()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _tracer_if_enabled() -> Tracer | None:
    # Tracer() imports aws_xray_sdk (~0.4 s) even when disabled, so it is built only when asked for.
    if os.environ.get(TRACE_DISABLED_ENV, "true").strip().lower() not in ("false", "0"):
        return None
    from aws_lambda_powertools import Tracer

    return Tracer(service=service_name())


tracer = _tracer_if_enabled()


def traced_handler[Handler: "Callable[..., Any]"](handler: Handler) -> Handler:
    """The handler, traced by X-Ray when tracing is on; unchanged, at no cost, when it is off."""
    if tracer is None:
        return handler
    # Neither the answer (tool outputs) nor exceptions (messages quote inputs) go into a trace.
    return cast("Handler", tracer.capture_lambda_handler(handler, capture_response=False, capture_error=False))


# A nullcontext, made at the first call (a cold GET imports no contextlib: app.py) and reused: it keeps no
# state, and a warm POST makes none.
_no_segment: AbstractContextManager[Any] | None = None


def tool_segment(tool: str) -> AbstractContextManager[Any]:
    """An X-Ray subsegment around one tool's run, annotated with its name; nothing when tracing is off."""
    global _no_segment
    if tracer is None:
        if _no_segment is None:
            from contextlib import nullcontext

            _no_segment = nullcontext()
        return _no_segment
    return _annotated_segment(tracer, tool)


def _annotated_segment(active: Tracer, tool: str) -> AbstractContextManager[Any]:
    from contextlib import contextmanager

    @contextmanager
    def segment() -> Iterator[None]:
        with active.provider.in_subsegment(f"## tool {tool}") as subsegment:
            subsegment.put_annotation("tool", tool)
            yield

    return segment()
