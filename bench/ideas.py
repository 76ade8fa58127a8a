"""The cold ideas bench/README.md weighs: what the handler does its own way, and the alternatives, each
measured the same way against the floor it adds to (the warm ones run in the warm container:
bench/warm_ideas.py).

Each is a variant of a floor or of the endpoint's process: an import more, the manifest built from
the tools, the artifact without its bytecode, every module of tools/ imported. None has a target.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING, Any

from median_lambda.protocol import PREBUILT_MANIFEST_FILE, PREBUILT_TOOL_MODULES_FILE
from median_lambda.testing import call_body, signed_event

from bench.cold import ColdRunner, endpoint_process, floor_process, table_floor_process
from bench.environment import BENCH_KEY, GATEWAY_HEADERS, get_event, post_event
from bench.floors import (
    EXTENSION_FLOOR_IMPORTS,
    FLOOR_GET_SECRET_COLD,
    FLOOR_TABLE_WITH_LIBRARIES_COLD,
    FLOOR_WITH_LIBRARIES_COLD,
    with_imports,
)
from bench.ratios import paired_case

if TYPE_CHECKING:
    from pathlib import Path

    from bench.cold import ColdProcesses
    from bench.environment import Stage
    from bench.ratios import Case
    from bench.warm import WarmLoops


def cold_idea_pairs(stage: Stage, cold: ColdProcesses) -> list[tuple[ColdRunner, ColdRunner]]:
    """Each idea's process with the floor it is weighed against."""
    # No .pyc is ever written there: /var/task is read-only, so Lambda compiles these at every cold start.
    source_only = _copy_without(stage, "source-only", bytecode=True)
    no_bytecode = {"PYTHONDONTWRITEBYTECODE": "1"}
    no_manifest = _copy_without(stage, "no-manifest", files=(PREBUILT_MANIFEST_FILE,))
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
                stage, "cold GET (extension), the manifest built from the tools", get_event, stage.deployed, no_manifest
            ),
            cold.floor_extension,
        ),
        (
            endpoint_process(
                stage,
                "cold GET (extension), the artifact without its bytecode",
                get_event,
                {**stage.deployed, **no_bytecode},
                source_only,
            ),
            cold.floor_extension,
        ),
        (
            endpoint_process(
                stage,
                "cold POST as deployed, the artifact without its bytecode",
                post_event,
                {**stage.deployed, **no_bytecode},
                _copy_without(stage, "source-only-recorded", bytecode=True, artifact=stage.recorded_artifact),
            ),
            cold.floor_table,
        ),
        (floor_with_libraries, cold.floor_boto3),
        (cold.post_boto3, floor_with_libraries),
        (table_floor_with_libraries, cold.floor_table),
        (cold.post_deployed, table_floor_with_libraries),
        tools_imported(stage),
    ]


def _copy_without(
    stage: Stage, name: str, *, bytecode: bool = False, files: tuple[str, ...] = (), artifact: Path | None = None
) -> Path:
    """A copy of the artifact (as built unless named) without its bytecode, or without some of the files the
    build writes beside median_lambda/app.py."""
    ignored = ["__pycache__"] if bytecode else []
    copy = shutil.copytree(artifact or stage.artifact, stage.work / name, ignore=shutil.ignore_patterns(*ignored))
    for file in files:
        (copy / "median_lambda" / file).unlink()
    return copy


def tools_imported(stage: Stage) -> tuple[ColdRunner, ColdRunner]:
    """What importing every module of tools/ costs a cold POST: a call that names no tool, answered 404, from the
    artifact without median_lambda/tool_modules.json (every module imported, as before the build wrote it)
    against the artifact as built (none imported). The most that importing only the called tool's module saves."""
    whole = _copy_without(stage, "tools-whole", files=(PREBUILT_TOOL_MODULES_FILE,))

    def no_such_tool() -> dict[str, Any]:
        return signed_event("POST", call_body("benchNoSuchTool", {}), key=BENCH_KEY, headers=GATEWAY_HEADERS)

    runners = []
    for name, artifact in (
        ("cold POST as deployed of tools/, a name it does not serve: every module imported", whole),
        (
            "cold POST as deployed of tools/, a name it does not serve: none imported (tool_modules.json)",
            stage.artifact,
        ),
    ):
        runner = endpoint_process(stage, name, no_such_tool, stage.deployed, artifact)
        runner.expected_status = 404
        runners.append(runner)
    return runners[0], runners[1]


def cold_idea_cases(pairs: list[tuple[ColdRunner, ColdRunner]]) -> list[Case]:
    return [paired_case(runner.name, "ms", base, runner, target=False) for runner, base in pairs]


def warm_idea_cases(warm: WarmLoops) -> list[Case]:
    """The warm ideas the container timed (bench/warm_ideas.py), each against the floor of its rounds."""
    return [paired_case(loop.name, "µs", floor, loop, target=False) for floor, loops in warm.ideas for loop in loops]
