"""`median deploy` (make deploy) and `median delete` (make delete): the stack, with the pinned SAM CLI.

A deploy runs the preflight first (median_lambda.cli.preflight: the stage's settings, then what
samconfig.toml lacks, asked once and recorded there, then the credentials and the key's secret),
so what would stop it is said before a build; then `sam build`, and `sam deploy`, which asks only
to confirm the change set it shows. The architecture the build is for is written in the template,
so no answer can change it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from median_lambda.cli.artifact import sam_build
from median_lambda.cli.errors import Failed
from median_lambda.cli.preflight import PreflightError, preflight
from median_lambda.project.tool_venv import SAM_CLI

if TYPE_CHECKING:
    import argparse

DEFAULT_CONFIG_ENV = "default"


def _config_flags(arguments: argparse.Namespace) -> list[str]:
    """What tells sam which samconfig.toml and which of its environments, as the user named them."""
    flags = ["--config-file", str(Path(arguments.config_file).resolve())] if arguments.config_file else []
    return flags + (["--config-env", arguments.config_env] if arguments.config_env != DEFAULT_CONFIG_ENV else [])


def command_deploy(arguments: argparse.Namespace) -> int:
    """sam deploy after the preflight and sam build; --preflight runs the preflight alone, printing sam's flags."""
    from median_lambda.project.sam_config import SAMCONFIG, deploy_config
    from median_lambda.project.tool_venv import run

    samconfig = Path(arguments.config_file) if arguments.config_file else SAMCONFIG
    try:
        config = deploy_config(samconfig, arguments.config_env)
        flags = preflight(config, samconfig=samconfig, config_env=arguments.config_env)
    except (PreflightError, ValueError, OSError) as error:
        print(f"Not deploying. {error}", file=sys.stderr)
        return 1
    if arguments.preflight:
        print(" ".join(flags))  # the flags `sam deploy` would get
        return 0
    sam_build()
    if run(SAM_CLI, "sam", "deploy", *_config_flags(arguments), *flags) != 0:
        raise Failed("sam deploy failed (above)")
    return 0


def command_delete(arguments: argparse.Namespace) -> int:
    """sam delete: the deployed stack (the key's secret stays)."""
    from median_lambda.project.tool_venv import run

    return run(SAM_CLI, "sam", "delete", *_config_flags(arguments))
