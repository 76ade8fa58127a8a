"""The warm ideas bench/README.md weighs, run in the warm container: the floor plus one piece of what the
handler does per call, done its way and a library's way, each against the floor in the same rounds.

- the key read from median_lambda.key.source's cache, and from Powertools' `get_secret` cache;
- a call's metrics (ToolCalls and ToolDuration under `tool` and `service`) written as the handler
  writes them (median_lambda/runtime/observability.py: its own EMF line, then Powertools' shared set
  published through `log_metrics` and emptied), and through Powertools' public API alone
  (EphemeralMetrics: `add_dimension`, `add_metric` twice, `flush_metrics`).
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from bench.container import run_rounds

if TYPE_CHECKING:
    from collections.abc import Callable

    Answer = Callable[[dict[str, Any]], Any]


def _with(floor: Answer, piece: Callable[[], Any]) -> Answer:
    def floor_and_piece(event: dict[str, Any]) -> Any:
        piece()
        return floor(event)

    return floor_and_piece


def _metrics_as_the_handler_writes_them(floor: Answer) -> Answer:
    from median_lambda.runtime import observability

    def floor_and_metrics(event: dict[str, Any]) -> Any:
        started = time.perf_counter()
        answer = floor(event)
        observability.record_tool_run("orderStatus", None, (time.perf_counter() - started) * 1000)
        observability.flush_metrics()
        return answer

    return floor_and_metrics


def _metrics_through_powertools(floor: Answer) -> Answer:
    from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit

    metrics = EphemeralMetrics()  # the namespace and service of the function's environment

    def floor_and_metrics(event: dict[str, Any]) -> Any:
        started = time.perf_counter()
        answer = floor(event)
        metrics.add_dimension(name="tool", value="orderStatus")
        metrics.add_metric(name="ToolCalls", unit=MetricUnit.Count, value=1.0)
        metrics.add_metric(
            name="ToolDuration", unit=MetricUnit.Milliseconds, value=(time.perf_counter() - started) * 1000
        )
        metrics.flush_metrics()
        return answer

    return floor_and_metrics


def time_warm_ideas(functions: dict[str, Answer], spec: dict[str, Any]) -> dict[str, dict[str, list[float]]]:
    """Each idea's loop beside the floor it adds to, in rounds of their own: µs per call."""
    from aws_lambda_powertools.utilities.parameters import get_secret
    from median_lambda.app import key_source

    secret = os.environ["MEDIAN_KEY_SECRET_ID"]
    floor_get, floor_post = functions["floor_get"], functions["floor_post"]
    key_loops = {
        "the floor": floor_get,
        "warm GET floor + the key from median_lambda.key.source's cache": _with(floor_get, key_source.get),
        "warm GET floor + the key from Powertools' get_secret cache": _with(
            floor_get, lambda: get_secret(secret, max_age=300)
        ),
    }
    metric_loops = {
        "the floor": floor_post,
        "warm POST floor + its metrics as median_lambda/runtime/observability.py writes them": (
            _metrics_as_the_handler_writes_them(floor_post)
        ),
        "warm POST floor + its metrics through Powertools' public API (EphemeralMetrics, flush_metrics)": (
            _metrics_through_powertools(floor_post)
        ),
    }
    gets = [events * spec["get_repeat"] for events in spec["get_rounds"]]
    return {"key": run_rounds(key_loops, gets), "metrics": run_rounds(metric_loops, spec["post_rounds"])}
