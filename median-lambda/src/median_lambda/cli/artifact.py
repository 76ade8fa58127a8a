"""The function's artifact: `median build` (sam build), `median build-artifact DIR` (what sam build runs), and
`median check-artifact [DIR]` (what CI runs on it).

`median build` runs the pinned SAM CLI's `sam build`, which needs neither Docker nor an AWS
account: template.yaml's `BuildMethod: makefile` has it run the project's Makefile target
build-MedianToolsFunction, in the project's folder (samconfig.toml's build_in_source spares it a
copy of .venv), with ARTIFACTS_DIR set; that target runs `median build-artifact "$(ARTIFACTS_DIR)"`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from median_lambda.cli.errors import Failed
from median_lambda.project.tool_venv import SAM_CLI

if TYPE_CHECKING:
    import argparse


def sam_build(*flags: str, env: dict[str, str] | None = None) -> None:
    """`sam build` with the pinned SAM CLI (its venv made first if need be); Failed if it fails."""
    from median_lambda.project.tool_venv import run

    if run(SAM_CLI, "sam", "build", *flags, env=env) != 0:
        raise Failed("sam build failed (above)")


def command_build(arguments: argparse.Namespace) -> int:
    """sam build: the Lambda artifact in .aws-sam/build, with the pinned SAM CLI (no Docker, no AWS account)."""
    sam_build()
    return 0


def command_build_artifact(arguments: argparse.Namespace) -> int:
    """Build the function's artifact into DIR: what `sam build` runs (the Makefile's build-MedianToolsFunction)."""
    from median_lambda.build.artifact import BuildFailed, build_artifact
    from median_lambda.cli.checks import check

    # The tools as a deploy runs them: this machine's files never ship, so they never stop a build.
    if check(local=False) != 0:
        raise Failed("not building: the tools have the problems above (median check --no-local)")
    try:
        build_artifact(Path(arguments.directory))
    except BuildFailed as failed:
        raise Failed(str(failed)) from None
    return 0


def command_check_artifact(arguments: argparse.Namespace) -> int:
    """Check the built artifact: handler/, tools/, exactly uv.lock's packages for the architecture, nothing local."""
    from median_lambda.build.check import main

    return main([arguments.directory] if arguments.directory else [])
