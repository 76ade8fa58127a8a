"""The commands that hold the tools to Median's rules and to every stage: `check`, `manifest` and `stages`.

`check` is what `make check`, the build (`median build-artifact` runs it first, with --no-local)
and the deploy's preflight (stage_problems) judge the tools by: their import, Median's sync rules,
and every setting and secret's name in each stage a deploy serves; with --also, the rules across
the organisation's endpoints. `manifest` and `stages` print what the build writes into the artifact.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from median_lambda.cli.errors import UsageError
from median_lambda.cli.requests import CALL_TIMEOUT_SECONDS, KEY_ENV, CallFailed, signed_request

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from median_lambda.authoring.registry import Registry
    from median_lambda.authoring.settings import Shown
    from median_lambda.cli.organisation import Endpoint
    from median_lambda.manifest.rules import Problem


def tools_manifest(*, local: bool = True, stage: str | None = None) -> tuple[dict[str, object], list[Problem | str]]:
    """The manifest and its problems: each rule it breaks, or each `file:line: what` of a module that won't
    import, then the configuration's (_configuration_problems)."""
    from median_lambda.authoring.registry import ToolLoadError, load_tools
    from median_lambda.manifest.build import build_manifest

    # Importing the tools reads no configuration: their Settings are held against every stage
    # below, and against this machine's files only where `local` asks (never a build's).
    try:
        registry = load_tools()
    except ToolLoadError as failed:
        return {}, list(failed.lines)
    manifest, problems = build_manifest(registry)
    return manifest, [*problems, *_configuration_problems(registry, local=local, stage=stage)]


def _configuration_problems(registry: Registry, *, local: bool, stage: str | None) -> list[str]:
    """Every deployable stage (or only `stage`) held against the Settings classes and the secrets' names the
    tools take; the template's variables that no setting reads any more; with `local`, this machine."""
    from median_lambda.authoring.dependencies import names_by_setting
    from median_lambda.authoring.settings import (
        ConfigurationError,
        ConfigurationProblem,
        DeployedStage,
        deployable_stages,
        override_of,
        problems_in_stages,
        settings_taken,
    )
    from median_lambda.cli.deployment import DeploymentUnreadable, deployment

    classes, names = settings_taken(registry.tools), names_by_setting(registry.tools)
    try:
        deployed = deployment()
        stages = [DeployedStage(stage, "what this deploy deploys")] if stage else deployable_stages(deployed.stages)
    except (DeploymentUnreadable, ConfigurationError) as error:
        return [ConfigurationProblem(error)]
    problems: list[str] = list(
        problems_in_stages(classes, stages=stages, local=local, names=names, provided=deployed.provided)
    )
    read = {variable for each in classes for variable in each.variables()} | {named.variable for named in names}
    for variable in sorted(read & set(deployed.variables)):
        problems.append(
            ConfigurationProblem(
                f"template.yaml sets {variable} for the function, which is not read: a setting comes from "
                f"tools/settings.toml, and a deploy overrides it only as {override_of(variable)}. Rename the "
                f"variable {override_of(variable)} to keep its value ({deployed.variables[variable]}), or drop it"
            )
        )
    return problems


def _show_values(registry: Registry, *, local: bool, stage: str | None) -> None:
    """What each setting the tools read is in each stage a deploy serves, and on this machine, with its source."""
    from median_lambda.authoring.dependencies import names_by_setting
    from median_lambda.authoring.settings import (
        ANY_STAGE,
        ConfigurationError,
        changed_here,
        deployable_stages,
        known_stages,
        local_file_problem,
        settings_file_shown,
        settings_taken,
        values_for,
    )
    from median_lambda.authoring.settings import stage as this_stage
    from median_lambda.cli.deployment import DeploymentUnreadable, deployment

    classes, names = settings_taken(registry.tools), names_by_setting(registry.tools)
    if not classes and not names:
        return
    try:
        deployed = deployment()
        known = known_stages()
        stages = [each for each in deployable_stages(deployed.stages) if each.name in known or ANY_STAGE in known]
    except (DeploymentUnreadable, ConfigurationError):
        return  # said as a problem already
    print(f"The settings your tools read, per stage ({settings_file_shown()}; README.md's configuration guide):")
    for each in stages:
        if stage is not None and each.name != stage:
            continue
        print(f"  stage {each.name}" + (f" ({each.why})" if each.why else "") + ":")
        _print_values(values_for(classes, names, each.name, deployed.provided))
    if local and local_file_problem() is None and changed_here():
        try:
            print(f"  on this machine (stage {this_stage()}, as make serve and the tests read it):")
            _print_values(values_for(classes, names, None))
        except ConfigurationError:
            pass  # said as a problem already


def _print_values(shown: Sequence[Shown]) -> None:
    width = max(len(f"{each.variable} = {each.value}") for each in shown)
    for each in shown:
        line = f"{each.variable} = {each.value}"
        print(f"    {line.ljust(width)}  {each.source}".rstrip() if each.source else f"    {line}")


def command_check(arguments: argparse.Namespace) -> int:
    """Check the tools against Median's sync rules (with --also, across the organisation) and their settings in
    every stage a deploy serves: one line per problem, then the value each stage gets."""
    return check(local=not arguments.no_local, stage=arguments.stage, also=arguments.also, key_file=arguments.key_file)


def check(
    *, local: bool = True, stage: str | None = None, also: Sequence[str] = (), key_file: str | None = None
) -> int:
    """`median check`'s work and exit code; the build runs it with `local=False`, as `median check --no-local`."""
    from median_lambda.cli.deployment import deployment_problems

    manifest, problems = tools_manifest(local=local, stage=stage)
    problems = [*problems, *deployment_problems()]
    endpoints = _organisation(also, key_file, manifest) if also else []
    if endpoints:
        from median_lambda.cli.organisation import check_organisation

        problems = [*problems, *check_organisation(endpoints)]
    for problem in problems:
        print(problem, file=sys.stderr)
    code = _summarise(problems, manifest, endpoints)
    if manifest:
        from median_lambda.authoring.registry import load_tools

        _show_values(load_tools(), local=local, stage=stage)
    return code


def _summarise(problems: Sequence[Problem | str], manifest: dict[str, object], endpoints: list[Endpoint]) -> int:
    """The last line of `make check` before the values, and its exit code."""
    if problems:
        from median_lambda.authoring.settings import ConfigurationProblem
        from median_lambda.cli.deployment import DeploymentProblem

        configuration = sum(isinstance(problem, ConfigurationProblem) for problem in problems)
        deployment = sum(isinstance(problem, DeploymentProblem) for problem in problems)
        if len(problems) > configuration + deployment:
            print(
                f"{len(problems) - configuration - deployment} problem(s): Median would refuse this manifest.",
                file=sys.stderr,
            )
        if configuration:
            print(
                f"{configuration} configuration problem(s): the tools would fail to start where each applies.",
                file=sys.stderr,
            )
        if deployment:
            print(f"{deployment} deployment problem(s): samconfig.toml names what cannot deploy.", file=sys.stderr)
        return 1
    from median_lambda.manifest.rules import manifest_size
    from median_lambda.protocol import MAX_MANIFEST_BYTES, MAX_TOOLS

    tools = manifest["tools"]
    assert isinstance(tools, list)
    if not tools:
        from median_lambda.runtime.env import tools_package

        folder = tools_package().replace(".", "/")
        print(
            f"OK: no tools yet: the manifest is empty, which Median accepts. Add one in {folder}/ "
            '(README, "Add a tool").'
        )
    else:
        print(
            f"OK: {len(tools)}/{MAX_TOOLS} tools, {manifest_size(manifest):,}/{MAX_MANIFEST_BYTES:,} bytes, "
            f"diagnostics {'on' if manifest['diagnostics'] else 'off'}. Median would accept this manifest."
        )
    if endpoints:
        from median_lambda.cli.organisation import summary

        print(f"OK across the organisation: {summary(endpoints)}.")
    return 0


def stage_problems(stage: str) -> list[str]:
    """What would stop the tools in a function deployed as `stage`, from this checkout: the deploy's preflight.

    The tools' import and Median's rules, the stage itself, and every setting and secret's name the
    tools take in it; never this machine's files, which do not ship.
    """
    return [str(problem) for problem in tools_manifest(local=False, stage=stage)[1]]


def command_tool_modules(arguments: argparse.Namespace) -> int:
    """Print which module of tools/ holds each tool, and the diagnostics, as JSON: what a deployed function
    reads to import, at a call, only the module of the tool it runs (the build writes it beside the manifest)."""
    from median_lambda.authoring.registry import ToolLoadError, tool_modules

    try:
        written = tool_modules()
    except ToolLoadError as failed:
        for line in failed.lines:
            print(line, file=sys.stderr)
        return 1
    print(json.dumps(written, sort_keys=True))
    return 0


def command_stages(arguments: argparse.Namespace) -> int:
    """Print the stages a function may run as, one a line: `default` and each table of tools/settings.toml
    (`*`, any name, with no settings.toml)."""
    from median_lambda.authoring.settings import ConfigurationError, known_stages

    try:
        stages = known_stages()
    except ConfigurationError as error:
        print(error, file=sys.stderr)
        return 1
    print("\n".join(stages))
    return 0


def _organisation(also: Sequence[str], key_file: str | None, manifest: dict[str, object]) -> list[Endpoint]:
    """This endpoint and each --also SOURCE, read before anything is judged; none if this one did not load."""
    from median_lambda.cli.organisation import THIS_ENDPOINT, endpoint_of

    repeated = sorted({source for source in also if also.count(source) > 1})
    if repeated:
        raise UsageError(f"--also names {repeated[0]} twice; give each endpoint once")
    others = [_read_endpoint(source, key_file) for source in also]
    if not manifest:  # the tools did not import: that problem is reported, and there are no names to compare
        return []
    return [endpoint_of(THIS_ENDPOINT, manifest), *others]


def _read_endpoint(source: str, key_file: str | None) -> Endpoint:
    """The manifest SOURCE names: a saved manifest file, or an endpoint URL asked with a signed GET."""
    from pathlib import Path

    from median_lambda.cli.organisation import NotAManifest, endpoint_of

    if source.startswith(("http://", "https://")):
        status, reason, payload = signed_request(
            source, "GET", b"", key_file, CALL_TIMEOUT_SECONDS, what=f"--also {source}: the signed GET"
        )
        if status != 200:
            hint = f" (is ${KEY_ENV}, or --key-file, that endpoint's key?)" if status == 401 else ""
            raise CallFailed(f"--also {source}: GET answered {status} {reason}, not a manifest{hint}")
    else:
        try:
            payload = Path(source).read_bytes()
        except OSError as error:
            raise UsageError(f"--also {source}: cannot read it: {error.strerror}") from None
    try:
        return endpoint_of(source, json.loads(payload))
    except NotAManifest as error:
        raise CallFailed(f"--also {source}: {error}") from None
    except (ValueError, RecursionError):
        raise CallFailed(f"--also {source}: is not JSON, so it is no manifest") from None


def command_manifest(arguments: argparse.Namespace) -> int:
    """Print the manifest as GET serves it (compact), or indented with --pretty."""
    # This machine's files play no part: the build runs this, and they never ship.
    manifest, problems = tools_manifest(local=False)
    if problems:
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1
    from median_lambda.request.responses import to_json

    # Compact, it is byte for byte what GET answers: `sam build` serves this very output.
    text = json.dumps(manifest, indent=2, ensure_ascii=False) if arguments.pretty else to_json(manifest)
    sys.stdout.buffer.write(text.encode("utf-8") + b"\n")
    return 0
