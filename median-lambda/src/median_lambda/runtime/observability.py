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
invocation (the one Powertools' `flush_metrics` prints), dimensions `service`, `function_version`
(the version Lambda runs, AWS_LAMBDA_FUNCTION_VERSION: a canary's series apart from the old
version's) and either `tool` or `cause`:
  ToolCalls, ToolErrors, ToolCrashes, ToolTimeouts, ToolDuration (ms)   per tool that ran
  ToolCrashes                                     under `(every tool)`: a request no tool could serve
  ReplayedCalls                                   per tool, answered from its callId record
  ToolWorkLeftRunning                             per tool answered 500 or 504 while work it started
                                                  may still be running (median_lambda/calls/dispatch.py)
  RejectedSignatures                              per cause: missing, malformed, stale, mismatch
and, each on a line of its own:
  ServerErrors                                    `service` and `function_version`, once per answer of
                                                  status 500 or more, whatever made it: what the
                                                  rollback alarm on a version's 5XX rate reads
  TimeLimitsDegraded                              `service` alone, once per container where something
                                                  else owns SIGALRM (handler/runtime/time_limits.py)
and, once per container that was a cold start, Powertools' own `ColdStart` (dimensions
`function_name` and `service`, a line of its own, as `log_metrics(capture_cold_start_metric=True)`
writes it) with the first metrics the container publishes: its first invocation's, unless that
was a served GET, which publishes none (below), and then the next one's that does.

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
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from typing import TYPE_CHECKING, Any, cast

from median_lambda.protocol import (
    FUNCTION_VERSION_ENV,
    INITIALIZATION_TYPE_ENV,
    METRICS_NAMESPACE,
    METRICS_NAMESPACE_ENV,
    PROVISIONED_INITIALIZATION,
    SERVICE_NAME,
    SERVICE_NAME_ENV,
    TRACE_DISABLED_ENV,
    UNPUBLISHED_VERSION,
)
from median_lambda.runtime.env import library_version

if TYPE_CHECKING:
    import logging
    from collections.abc import Callable, Iterator

    from aws_lambda_powertools import Logger, Metrics, Tracer
    from aws_lambda_powertools.metrics import MetricUnit
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
# Whether this container's ColdStart metric is still to be published: it was a cold start, and has
# published no metric yet.
_cold_start_metric_ahead = _first_invocation_ahead
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
    global _invocation, _first_invocation_ahead, _invocations, _cold_start_metric_ahead
    _invocation = None
    _first_invocation_ahead = os.environ.get(INITIALIZATION_TYPE_ENV) != PROVISIONED_INITIALIZATION
    _cold_start_metric_ahead = _first_invocation_ahead
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


# The dimension every metric of an invocation carries, and ServerErrors' line: which version answered.
VERSION_DIMENSION = "function_version"


# Built on the first metric, like the Logger on the first log line: a served GET records none.
_metrics: Metrics | None = None
# Whether EMF lines are printed: Powertools' own rule (POWERTOOLS_METRICS_DISABLED, POWERTOOLS_DEV),
# read with the Metrics. The encoder prints what Metrics.flush_metrics' json.dumps prints.
_emf_on = True
_EMF_ENCODER = json.JSONEncoder(separators=(",", ":"))
_unflushed = False
# The units as Powertools' MetricUnit members, set with the Metrics: given a string, add_metric
# looks it up in a list of CloudWatch's unit names on every call (~0.3 us a metric).
_count: MetricUnit
_milliseconds: MetricUnit


def _get_metrics() -> Metrics:
    global _metrics, _count, _milliseconds, _emf_on
    if _metrics is None:
        from aws_lambda_powertools import Metrics
        from aws_lambda_powertools.metrics import MetricUnit
        from aws_lambda_powertools.metrics.functions import is_metrics_disabled

        _count, _milliseconds = MetricUnit.Count, MetricUnit.Milliseconds
        namespace = os.environ.get(METRICS_NAMESPACE_ENV, "").strip() or METRICS_NAMESPACE
        _metrics = Metrics(namespace=namespace, service=service_name())
        # A container runs one version all its life: each of its metric sets carries it.
        _metrics.set_default_dimensions(**{VERSION_DIMENSION: function_version()})
        _emf_on = not is_metrics_disabled()
    return _metrics


# The record_* functions call Powertools directly, each metric spelled out: a warm POST
# records two or three metrics, and a generic loop over tuples of them cost ~1 us of it.
# One request per invocation, so one dimension value per flush: `tool` or `cause`.


def _recorder(dimension: str, value: str) -> Metrics:
    """The Metrics, with this invocation's one dimension set, marked to be flushed."""
    global _unflushed
    recorder = _metrics or _get_metrics()
    recorder.add_dimension(name=dimension, value=value)
    _unflushed = True
    return recorder


def record_tool_run(tool: str, outcome_metric: str | None, milliseconds: float) -> None:
    """A registered tool ran; outcome_metric is TOOL_ERRORS, TOOL_CRASHES, TOOL_TIMEOUTS or None for ok."""
    recorder = _recorder("tool", tool)
    recorder.add_metric(name=Metric.TOOL_CALLS, unit=_count, value=1.0)
    recorder.add_metric(name=Metric.TOOL_DURATION, unit=_milliseconds, value=milliseconds)
    if outcome_metric is not None:
        recorder.add_metric(name=outcome_metric, unit=_count, value=1.0)


# The `tool` of a request that no tool could serve: this container has no usable Median key, its
# stage names no stage of settings.toml, or its tools failed to import. Never a tool's name (those
# take no parentheses).
EVERY_TOOL = "(every tool)"


def record_no_tool_can_run() -> None:
    """A request answered 500 because this container can run no tool: ToolCrashes, which the crash alarm
    (and so a gradual deployment's rollback) watches, under the `tool` EVERY_TOOL."""
    _recorder("tool", EVERY_TOOL).add_metric(name=Metric.TOOL_CRASHES, unit=_count, value=1.0)


def record_work_left_running(tool: str) -> None:
    """A call of `tool` was answered 500 or 504 while work it started may still be running (its answer recorded)."""
    _recorder("tool", tool).add_metric(name=Metric.TOOL_WORK_LEFT_RUNNING, unit=_count, value=1.0)


def record_replay(tool: str) -> None:
    _recorder("tool", tool).add_metric(name=Metric.REPLAYED_CALLS, unit=_count, value=1.0)


def record_rejected_signature(cause: str) -> None:
    _recorder("cause", cause).add_metric(name=Metric.REJECTED_SIGNATURES, unit=_count, value=1.0)


def record_server_error() -> None:
    """An answer of status 500 or more: ServerErrors, by `service` and `function_version` only, printed at once.

    On a line of its own, whatever the invocation's own metric set holds (a `tool`, or no dimension at
    all for the handler's last-resort 500), so that every 5XX lands in the one series the rollback
    alarm divides by the version's invocations (template.yaml's Api5xxRateAlarm). Never raises:
    counting must not cost the answer.
    """
    try:
        from aws_lambda_powertools.metrics import MetricUnit, single_metric

        namespace = os.environ.get(METRICS_NAMESPACE_ENV, "").strip() or METRICS_NAMESPACE
        with single_metric(
            name=Metric.SERVER_ERRORS,
            unit=MetricUnit.Count,
            value=1.0,
            namespace=namespace,
            default_dimensions={"service": service_name(), VERSION_DIMENSION: function_version()},
        ):
            pass
    except Exception as error:
        # Nor the saying so: a container with no file descriptor left cannot import the Logger either.
        with suppress(Exception):
            _logger().warning("A 5XX answer was not counted", extra={"error_type": type(error).__name__})


def record_time_limits_degraded() -> None:
    """This container can arm no time limit (something else owns SIGALRM): TimeLimitsDegraded, printed at once.

    Powertools' single_metric, with `service` its one dimension: the invocation's own metric set
    carries its `tool` or `cause`, which this container-wide fact is none of.
    """
    from aws_lambda_powertools.metrics import MetricUnit, single_metric

    namespace = os.environ.get(METRICS_NAMESPACE_ENV, "").strip() or METRICS_NAMESPACE
    with single_metric(
        name=Metric.TIME_LIMITS_DEGRADED,
        unit=MetricUnit.Count,
        value=1.0,
        namespace=namespace,
        default_dimensions={"service": service_name()},
    ):
        pass


def flush_metrics() -> None:
    """Print this invocation's EMF line, if it recorded any metric, and with the container's first metrics
    Powertools' ColdStart metric. Never raises: metrics must not cost an answer."""
    global _unflushed, _cold_start_metric_ahead
    if not _unflushed or _metrics is None:
        return
    _unflushed = False
    # What Metrics.flush_metrics does, in its order: Powertools serialises (and validates) the metric
    # set, the line it prints is written, and the set is cleared; with three things done once per
    # container or more cheaply: whether metrics are switched off is read once (three environment
    # variables, which Lambda never changes in a container's life), the JSON encoder is built once,
    # and the line goes to sys.stdout.write, not print (the same text; tests/unit/test_observability.py
    # compares it with flush_metrics' own). flush_metrics itself costs a warm POST without the table
    # (a pure read's call, idempotent=False) 8.8% more instructions (486k against 447k a call, the
    # peer's 424k: callgrind) and 10% more time (63.6 -> 68.9 us, 15 alternated rounds; bench/README.md,
    # "Issue 31"): over the 5% for which the public API would be kept. Through the table a call takes
    # milliseconds, and either is lost in it.
    try:
        if _cold_start_metric_ahead and _emf_on and hasattr(_invocation, "function_name"):
            # Powertools' own ColdStart line, as log_metrics(capture_cold_start_metric=True) adds it
            # (it prints it even where metrics are switched off: 3.37; here it is not).
            _cold_start_metric_ahead = False
            _metrics.provider.add_cold_start_metric(context=_invocation)  # type: ignore[arg-type]
        document = _metrics.serialize_metric_set()
        if _emf_on:
            sys.stdout.write(_EMF_ENCODER.encode(document) + "\n")
    except Exception as error:
        _logger().warning("Metrics were not published", extra={"error_type": type(error).__name__})
    finally:
        _metrics.clear_metrics()


def forget_unflushed_metrics() -> None:
    """Drop the metrics recorded since the last flush: a fresh container has none (median_lambda.testing's reset).

    A call made below the entry point (dispatch's handle_post, in a test) records its metrics and
    never flushes them; without this, the next invocation's EMF line would count them as its own.
    """
    global _unflushed
    _unflushed = False
    if _metrics is not None:
        _metrics.clear_metrics()


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


def tool_segment(tool: str) -> AbstractContextManager[Any]:
    """An X-Ray subsegment around one tool's run, annotated with its name; nothing when tracing is off."""
    if tracer is None:
        return nullcontext()
    return _annotated_segment(tracer, tool)


@contextmanager
def _annotated_segment(active: Tracer, tool: str) -> Iterator[None]:
    with active.provider.in_subsegment(f"## tool {tool}") as subsegment:
        subsegment.put_annotation("tool", tool)
        yield
