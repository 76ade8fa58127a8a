"""`median local invoke` and `median local start-api` (make invoke, make start-api): the built artifact in
Lambda's container image, with the pinned SAM CLI's `sam local`.

Each builds first: the template's architecture into .aws-sam/build (`sam build`, as `median build`),
or, with --arch (LOCAL_ARCH=x86_64 or arm64), a copy of template.yaml set to that architecture
(median_lambda.project.architecture, as `copier copy` sets a project's) built into a folder of its
own, so neither template.yaml nor the deploy build in .aws-sam/build is touched: the copy's code is
this folder's (--base-dir), its settings this samconfig.toml's, and its wheels the copy's
architecture (LAMBDA_ARCHITECTURE: SAM does not tell a makefile build). An x86_64 Linux host runs
the template's arm64 only through qemu's binfmt handlers, and slowly.

The function gets events/env.json (`median local-env`: your configuration, the dev key, no secret,
no idempotency table) and, for invoke, a freshly signed event (signatures go stale after 300 s).
--parameter-overrides (PARAMETER_OVERRIDES) adds template parameters: sam local would replace
samconfig.toml's with any given on its command line, so they are merged (sam_config.local_overrides).
--sam-flags (SAM_FLAGS) passes SAM's own flags through (--skip-pull-image works offline once the
image is present).
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from median_lambda.cli.artifact import sam_build
from median_lambda.cli.errors import Failed, UsageError
from median_lambda.cli.requests import LOCAL_ENV_FILE, write_event, write_local_env
from median_lambda.project.tool_venv import SAM_CLI

if TYPE_CHECKING:
    import argparse

FUNCTION = "MedianToolsFunction"  # template.yaml's function, as sam local names it
BUILD_DIR = Path(".aws-sam") / "build"
# start-api's own default port, so a `make serve` on 3000 never answers the curls meant for it.
START_API_PORT = 3001
# The environment variables make passes, each the default of an option.
ARCH_ENV = "LOCAL_ARCH"
OVERRIDES_ENV = "PARAMETER_OVERRIDES"
SAM_FLAGS_ENV = "SAM_FLAGS"
PORT_ENV = "PORT"


def add_local_options(command: argparse.ArgumentParser) -> None:
    """The options every `median local` command takes, each defaulting to the variable make passes."""
    command.add_argument(
        "--arch",
        default=os.environ.get(ARCH_ENV, ""),
        help=f"run on this architecture, x86_64 or arm64, instead of the template's (default: ${ARCH_ENV})",
    )
    command.add_argument(
        "--parameter-overrides",
        default=os.environ.get(OVERRIDES_ENV, ""),
        metavar="'KEY=VALUE ...'",
        help=f"template parameters, over samconfig.toml's local ones (default: ${OVERRIDES_ENV})",
    )
    command.add_argument(
        "--sam-flags",
        default=os.environ.get(SAM_FLAGS_ENV, ""),
        metavar="'FLAGS'",
        help=f"SAM's own flags, as one argument: --sam-flags=--skip-pull-image (default: ${SAM_FLAGS_ENV})",
    )


def start_api_port() -> int:
    """$PORT, when make's PORT= names one, else start-api's own."""
    given = os.environ.get(PORT_ENV, "").strip()
    return int(given) if given.isdigit() else START_API_PORT


def _need_a_container() -> None:
    """sam local runs the function in a container: say so plainly where none can run."""
    for engine in ("docker", "finch"):
        try:
            if subprocess.run([engine, "info"], capture_output=True, check=False).returncode == 0:  # noqa: S603
                return
        except OSError:
            continue
    raise Failed(
        "sam local runs the function in a container, and no Docker (or Finch) is running here. "
        "Start Docker, or use 'make serve' for a local endpoint without one."
    )


def _overrides(arguments: argparse.Namespace) -> str:
    from median_lambda.project.sam_config import local_overrides

    try:
        return local_overrides(added=arguments.parameter_overrides, architecture=arguments.arch)
    except (OSError, ValueError) as error:
        raise UsageError(f"cannot tell the function's settings: {error}") from None


def local_build(architecture: str) -> Path:
    """Build for sam local (see the module's docstring); the build folder, holding template.yaml."""
    if not architecture:
        sam_build()
        return BUILD_DIR
    from median_lambda.project.architecture import CannotSet, set_architecture
    from median_lambda.project.sam_config import ARCHITECTURE_ENV, SAMCONFIG, TEMPLATE

    template = Path(".aws-sam") / f"template-{architecture}.yaml"
    try:
        text, _ = set_architecture(TEMPLATE.read_text(encoding="utf-8"), architecture, TEMPLATE.name)
    except (CannotSet, OSError) as error:
        raise UsageError(f"cannot build for {architecture}: {error}") from None
    template.parent.mkdir(exist_ok=True)
    template.write_text(text, encoding="utf-8")
    build_dir = Path(".aws-sam") / f"local-{architecture}"
    sam_build(
        *("--template", str(template), "--base-dir", "."),
        *("--config-file", str(SAMCONFIG.resolve()), "--build-dir", str(build_dir)),
        *("--cache-dir", str(Path(".aws-sam") / f"cache-local-{architecture}")),
        env={ARCHITECTURE_ENV: architecture},
    )
    return build_dir


def _sam_local(arguments: argparse.Namespace, build_dir: Path, overrides: str, *command: str) -> int:
    from median_lambda.project.tool_venv import run

    flags = ["--template", str(build_dir / "template.yaml")]
    flags += ["--parameter-overrides", overrides] if overrides else []
    flags += shlex.split(arguments.sam_flags)
    return run(SAM_CLI, "sam", "local", *command, *flags, "--env-vars", LOCAL_ENV_FILE)


def command_invoke(arguments: argparse.Namespace) -> int:
    """sam local invoke with a freshly signed event: --tool orderStatus --input '{...}', or a GET."""
    overrides = _overrides(arguments)  # a mistyped --arch or override is named before anything else
    _need_a_container()
    build_dir = local_build(arguments.arch)
    write_local_env()
    event = write_event(arguments)
    return _sam_local(arguments, build_dir, overrides, "invoke", FUNCTION, "--event", str(event))


def command_start_api(arguments: argparse.Namespace) -> int:
    """sam local start-api on http://127.0.0.1:3001 (--port, or PORT=), verifying with the local dev key."""
    from median_lambda.cli.port_free import main as port_free

    overrides = _overrides(arguments)
    _need_a_container()
    port = arguments.port
    if port_free([str(port), f"PORT={port + 100} make start-api"]) != 0:
        return 1
    build_dir = local_build(arguments.arch)
    write_local_env()
    return _sam_local(arguments, build_dir, overrides, "start-api", "--port", str(port))


def command_check(arguments: argparse.Namespace) -> int:
    """make invoke (a GET, a POST), then make start-api and make call, end to end: the contract's answers."""
    from median_lambda.cli.local_check import main

    return main()
