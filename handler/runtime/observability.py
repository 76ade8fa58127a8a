"""The Powertools Logger, Metrics and Tracer every module of the handler reports through.

Service name and level come from POWERTOOLS_SERVICE_NAME and POWERTOOLS_LOG_LEVEL (set in
template.yaml's Globals). Nothing logged, measured or traced here may carry the key, a
signature or a tool's input or output values: they are customers' data.

Metrics (CloudWatch EMF, namespace from POWERTOOLS_METRICS_NAMESPACE), one flush per
invocation, dimensions `service` and either `tool` or `cause`:
  ToolCalls, ToolErrors, ToolCrashes, ToolTimeouts, ToolDuration (ms)   per tool that ran
  ToolCrashes                                     under `(every tool)`: a request no tool could serve
  ReplayedCalls                                   per tool, answered from its callId record
  RejectedSignatures                              per cause: missing, malformed, stale, mismatch

Importing any Powertools module imports its whole package (Logger, Metrics, Tracer), which
costs a cold GET more than its target allows, and a served GET logs, measures and traces
nothing. So this module imports Powertools only when something is first logged or measured
(or at import when tracing is switched on, which needs its decorator from the start): write
`observability.logger.info(…)` at the call, not `from handler.runtime.observability import logger`
at the top of a module that GET imports. tests/integration/test_cold_get.py holds GET to that.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any, TypeVar, cast

from handler.protocol import METRICS_NAMESPACE, METRICS_NAMESPACE_ENV, TRACE_DISABLED_ENV

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from aws_lambda_powertools import Logger, Metrics, Tracer
    from aws_lambda_powertools.metrics import MetricUnit

    logger: Logger

SERVICE_NAME = "median-tools"
Handler = TypeVar("Handler", bound="Callable[..., Any]")
_created_logger: Logger | None = None


def _logger() -> Logger:
    global _created_logger
    if _created_logger is None:
        from aws_lambda_powertools import Logger

        _created_logger = Logger(service=SERVICE_NAME)
        globals()["logger"] = _created_logger  # later reads of `observability.logger` skip __getattr__
    return _created_logger


class Metric:
    TOOL_CALLS = "ToolCalls"
    TOOL_ERRORS = "ToolErrors"  # the tool declined: ok false, tool_error
    TOOL_CRASHES = "ToolCrashes"  # 500 internal_error
    TOOL_TIMEOUTS = "ToolTimeouts"  # 504 timeout
    TOOL_DURATION = "ToolDuration"
    REPLAYED_CALLS = "ReplayedCalls"
    REJECTED_SIGNATURES = "RejectedSignatures"


# Built on the first metric, like the Logger on the first log line: a served GET records none.
_metrics: Metrics | None = None
_unflushed = False
# The units as Powertools' MetricUnit members, set with the Metrics: given a string, add_metric
# looks it up in a list of CloudWatch's unit names on every call (~0.3 us a metric).
_count: MetricUnit
_milliseconds: MetricUnit


# Whether EMF lines are printed: Powertools' own rule (POWERTOOLS_METRICS_DISABLED, POWERTOOLS_DEV),
# read with the Metrics. The encoder prints what Metrics.flush_metrics' json.dumps prints.
_emf_on = True
_EMF_ENCODER = json.JSONEncoder(separators=(",", ":"))


def _get_metrics() -> Metrics:
    global _metrics, _count, _milliseconds, _emf_on
    if _metrics is None:
        from aws_lambda_powertools import Metrics
        from aws_lambda_powertools.metrics import MetricUnit
        from aws_lambda_powertools.metrics.functions import is_metrics_disabled

        _count, _milliseconds = MetricUnit.Count, MetricUnit.Milliseconds
        _emf_on = not is_metrics_disabled()
        namespace = os.environ.get(METRICS_NAMESPACE_ENV, "").strip() or METRICS_NAMESPACE
        _metrics = Metrics(namespace=namespace, service=SERVICE_NAME)
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


def record_replay(tool: str) -> None:
    _recorder("tool", tool).add_metric(name=Metric.REPLAYED_CALLS, unit=_count, value=1.0)


def record_rejected_signature(cause: str) -> None:
    _recorder("cause", cause).add_metric(name=Metric.REJECTED_SIGNATURES, unit=_count, value=1.0)


def flush_metrics() -> None:
    """Print this invocation's EMF line, if it recorded any metric. Never raises: metrics must not cost an answer."""
    global _unflushed
    if not _unflushed or _metrics is None:
        return
    _unflushed = False
    # What Metrics.flush_metrics does, in its order: Powertools serialises (and validates) the
    # metric set, the line it prints is written, and the set is cleared. Three things are done
    # once per container or more cheaply than it does them: whether metrics are switched off is
    # read once (three environment variables, which Lambda never changes in a container's
    # life), the JSON encoder is built once, and the line goes to sys.stdout.write, not print
    # (the same text; print costs ~1.3 us more). This copy of flush_metrics stays because it
    # holds up two of make bench's targets (bench/README.md, "Simple where a microsecond is all
    # it buys"): with flush_metrics itself, "warm POST" went 4.93x -> 5.49x its floor (target
    # 5x) and "warm POST against the peer's" 0.93x -> 1.02x (target 1.0x); with print instead
    # of the write, 4.96x -> 5.08x.
    try:
        document = _metrics.serialize_metric_set()
        if _emf_on:
            sys.stdout.write(_EMF_ENCODER.encode(document) + "\n")
    except Exception as error:
        _logger().warning("Metrics were not published", extra={"error_type": type(error).__name__})
    finally:
        _metrics.clear_metrics()


def forget_unflushed_metrics() -> None:
    """Drop the metrics recorded since the last flush: a fresh container has none (handler.testing's reset).

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

    return Tracer(service=SERVICE_NAME)


tracer = _tracer_if_enabled()


def traced_handler(handler: Handler) -> Handler:
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
