"""The ideas bench/README.md weighs: what handler/ does its own way instead of a library's public
API, and the alternatives, each measured the same way against the floor it adds to.

Cold, a variant of a floor or of the endpoint's process (an import more, the manifest built from
the tools, the artifact as built without .pyc files); warm, the floor plus one piece of what the
handler does per call, done both ways. None of these rows has a target.
"""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING, Any

from median_lambda.testing import call_body, signed_event

from bench.cold import ColdRunner, endpoint_process, floor_process, table_floor_process
from bench.environment import (
    BENCH_KEY,
    GATEWAY_HEADERS,
    SECRET_NAME,
    get_event,
    lay_out_shipped_artifact,
    post_event,
)
from bench.floors import (
    EXTENSION_FLOOR_IMPORTS,
    FLOOR_GET_SECRET_COLD,
    FLOOR_TABLE_WITH_LIBRARIES_COLD,
    FLOOR_WITH_LIBRARIES_COLD,
    with_imports,
)
from bench.ratios import paired_case
from bench.warm import WARM_POST_CALLS, WarmLoop, posts, run_warm
from tests.support.cold_start import lay_out_artifact

if TYPE_CHECKING:
    from collections.abc import Callable

    from bench.cold import ColdProcesses
    from bench.environment import Stage
    from bench.ratios import Case
    from bench.warm import Answer, WarmContenders


# --- cold -----------------------------------------------------------------------------------


def cold_idea_pairs(stage: Stage, cold: ColdProcesses) -> list[tuple[ColdRunner, ColdRunner]]:
    """Each idea's process with the floor it is weighed against."""
    # No .pyc is ever written there: /var/task is read-only, so Lambda compiles these at every cold start.
    shipped = lay_out_shipped_artifact(stage.work / "shipped", stage.runtime_python)
    no_bytecode = {"PYTHONDONTWRITEBYTECODE": "1"}
    source = lay_out_artifact(stage.work / "source", prebuilt_manifest=False)
    floor_with_libraries = floor_process(
        stage, "the boto3 floor + pydantic + Powertools", FLOOR_WITH_LIBRARIES_COLD, stage.serve_boto3
    )
    table_floor_with_libraries = table_floor_process(
        stage, "the table-on floor + pydantic + Powertools Idempotency", FLOOR_TABLE_WITH_LIBRARIES_COLD
    )
    return [
        (
            floor_process(
                stage, "the boto3 floor, key through Powertools' get_secret", FLOOR_GET_SECRET_COLD, stage.serve_boto3
            ),
            cold.floor_boto3,
        ),
        *[
            (
                floor_process(stage, f"the extension floor + import {modules}", with_imports(modules), stage.serve),
                cold.floor_extension,
            )
            for modules in EXTENSION_FLOOR_IMPORTS
        ],
        (
            endpoint_process(
                stage,
                "cold GET (extension), Powertools' event data classes imported",
                get_event,
                stage.deployed,
                preimport=("aws_lambda_powertools.utilities.data_classes",),
            ),
            cold.floor_extension,
        ),
        (
            endpoint_process(
                stage, "cold GET (extension), the manifest built from the tools", get_event, stage.deployed, source
            ),
            cold.floor_extension,
        ),
        (
            endpoint_process(
                stage,
                "cold GET (extension), the artifact as built: no .pyc",
                get_event,
                {**stage.deployed, **no_bytecode},
                shipped,
            ),
            cold.floor_extension,
        ),
        (
            endpoint_process(
                stage,
                "cold POST (boto3), the artifact as built: no .pyc",
                post_event,
                {**stage.serve_boto3, **no_bytecode},
                shipped,
            ),
            cold.floor_boto3,
        ),
        (floor_with_libraries, cold.floor_boto3),
        (cold.post_boto3, floor_with_libraries),
        (table_floor_with_libraries, cold.floor_table),
        (cold.post_deployed, table_floor_with_libraries),
        *tools_imported(stage),
    ]


def tools_imported(stage: Stage) -> list[tuple[ColdRunner, ColdRunner]]:
    """What importing every module of tools/ (yours: the examples, until you replace them) costs a cold POST:
    a call that names no tool, answered 404, from an artifact of tools/ without median_lambda/tool_modules.json
    (every module imported, as before the build wrote it) against one with it (none imported). The most
    that importing only the called tool's module saves. None when tools/ cannot be built."""
    import os
    import shutil
    import subprocess

    from median_lambda.protocol import PREBUILT_TOOL_MODULES_FILE, TOOLS_PACKAGE_ENV
    from median_lambda.runtime.env import forget_settings

    served = os.environ.pop(TOOLS_PACKAGE_ENV)
    forget_settings()
    try:
        indexed = lay_out_artifact(stage.work / "tools-indexed", prebuilt_manifest=True)
    except subprocess.CalledProcessError as failed:
        print(f"tools/ cannot be built, so its idea is skipped: {failed.stderr[-300:]!r}", file=sys.stderr)
        return []
    finally:
        os.environ[TOOLS_PACKAGE_ENV] = served
        forget_settings()
    whole = shutil.copytree(indexed, stage.work / "tools-whole")
    (whole / "median_lambda" / PREBUILT_TOOL_MODULES_FILE).unlink()
    environment = {name: value for name, value in stage.deployed.items() if name != TOOLS_PACKAGE_ENV}

    def no_such_tool() -> dict[str, Any]:
        return signed_event("POST", call_body("benchNoSuchTool", {}), key=BENCH_KEY, headers=GATEWAY_HEADERS)

    runners = []
    for name, artifact in (
        ("cold POST as deployed of tools/, a name it does not serve: every module imported", whole),
        ("cold POST as deployed of tools/, a name it does not serve: none imported (tool_modules.json)", indexed),
    ):
        runner = endpoint_process(stage, name, no_such_tool, environment, artifact)
        runner.expected_status = 404
        runners.append(runner)
    return [(runners[0], runners[1])]


def cold_idea_cases(pairs: list[tuple[ColdRunner, ColdRunner]]) -> list[Case]:
    return [paired_case(runner.name, "ms", base, runner, target=False) for runner, base in pairs]


# --- warm: the floor plus one piece of the handler's work -------------------------------------


def with_powertools_metrics(floor_post: Answer) -> Answer:
    """The floor, plus what the endpoint records per call through Powertools Metrics, printed by its flush_metrics."""
    from aws_lambda_powertools import Metrics
    from aws_lambda_powertools.metrics import MetricUnit

    metrics = Metrics(namespace="MedianTools", service="median-tools")

    def floor_and_metrics(event: dict[str, Any]) -> Any:
        started = time.perf_counter()
        answer = floor_post(event)
        metrics.add_dimension(name="tool", value="orderStatus")
        metrics.add_metric(name="ToolCalls", unit=MetricUnit.Count, value=1.0)
        metrics.add_metric(
            name="ToolDuration", unit=MetricUnit.Milliseconds, value=(time.perf_counter() - started) * 1000
        )
        metrics.flush_metrics()
        return answer

    return floor_and_metrics


def with_serialised_metrics(floor_post: Answer) -> Answer:
    """The same, the line printed as handler/runtime/observability.py prints it, a copy of flush_metrics:
    serialize_metric_set, an encoder built once, clear_metrics; whether metrics are off read once, not per flush.
    What the public flush_metrics costs beyond it is what the copy saves."""
    from aws_lambda_powertools import Metrics
    from aws_lambda_powertools.metrics import MetricUnit

    metrics = Metrics(namespace="MedianTools", service="median-tools")
    encoder = json.JSONEncoder(separators=(",", ":"))

    def floor_and_metrics(event: dict[str, Any]) -> Any:
        started = time.perf_counter()
        answer = floor_post(event)
        metrics.add_dimension(name="tool", value="orderStatus")
        metrics.add_metric(name="ToolCalls", unit=MetricUnit.Count, value=1.0)
        metrics.add_metric(
            name="ToolDuration", unit=MetricUnit.Milliseconds, value=(time.perf_counter() - started) * 1000
        )
        try:
            print(encoder.encode(metrics.serialize_metric_set()))
        finally:
            metrics.clear_metrics()
        return answer

    return floor_and_metrics


def with_key_read(floor_get: Answer, read: Callable[[], str]) -> Answer:
    """The floor, plus reading the key from a cache on every call, as a warm request does."""

    def floor_and_key(event: dict[str, Any]) -> Any:
        read()
        return floor_get(event)

    return floor_and_key


def warm_idea_cases(contenders: WarmContenders, rounds: int) -> list[Case]:
    """What handler/ does its own way instead of a library's public API, each piece on the floor, both ways."""
    from aws_lambda_powertools.utilities.parameters import get_secret
    from median_lambda.app import key_source

    floor_get, floor_post = contenders.floor_get, contenders.floor_post
    cases = []
    key_loops = [
        WarmLoop("the floor", [], floor_get),
        WarmLoop(
            "warm GET floor + the key from median_lambda.key.source's cache",
            [],
            with_key_read(floor_get, key_source.get),
        ),
        WarmLoop(
            "warm GET floor + the key from Powertools' get_secret cache",
            [],
            with_key_read(floor_get, lambda: str(get_secret(SECRET_NAME, max_age=300))),
        ),
    ]
    run_warm(key_loops, contenders.gets, rounds)
    cases += [paired_case(loop.name, "µs", key_loops[0], loop, target=False) for loop in key_loops[1:]]

    metric_loops = [
        WarmLoop("the floor", [], floor_post),
        WarmLoop(
            "warm POST floor + Powertools Metrics, printed as handler/runtime/observability.py does "
            "(a copy of flush_metrics)",
            [],
            with_serialised_metrics(floor_post),
        ),
        WarmLoop(
            "warm POST floor + Powertools Metrics, printed by its flush_metrics",
            [],
            with_powertools_metrics(floor_post),
        ),
    ]
    run_warm(metric_loops, posts(WARM_POST_CALLS), rounds)
    cases += [paired_case(loop.name, "µs", metric_loops[0], loop, target=False) for loop in metric_loops[1:]]

    return cases
