"""What the project deploys, which `make check`, the build and the deploy's preflight hold the tools' settings to.

The stages: the template's default `Stage` (what `make deploy` deploys unless samconfig.toml's
default config-env sets `Stage=`), and each config-env's `Stage=` in samconfig.toml (what `sam
deploy --config-env <env>` deploys: the GitHub pipeline's staging and production). And the
variables the template sets for the function: MEDIAN_SETTING_<NAME> overrides a setting with the
deploy's value, while a variable named as a setting itself is never read.

Both files are read beside the tools package (`template.yaml` and `samconfig.toml` at the
project's root), so a tools package of a test's own, with neither beside it, deploys no more than
its settings.toml names.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from median_lambda.authoring.settings import OVERRIDE_PREFIX, DeployedStage, settings_directory
from median_lambda.cli.template_check import Template, function_properties
from median_lambda.project.sam_config import command_config, load_template, parameter_overrides
from median_lambda.protocol import DEFAULT_STAGE
from median_lambda.runtime.env import shown_path

if TYPE_CHECKING:
    from pathlib import Path

TEMPLATE_FILE = "template.yaml"
SAMCONFIG_FILE = "samconfig.toml"
PIPELINE_ROLES_FILE = "pipeline/oidc-role.yaml"
STAGE_PARAMETER = "Stage"
FUNCTION_LOGICAL_ID = "MedianToolsFunction"  # template.yaml's function, as sam local names it
DEFAULT_CONFIG_ENV = "default"


class DeploymentUnreadable(Exception):
    """template.yaml or samconfig.toml cannot be read: the message names the file and why."""


class DeploymentProblem(str):
    """One line of `make check` about samconfig.toml: a name AWS, GitHub or the pipeline cannot deploy."""

    __slots__ = ()


@dataclass(frozen=True)
class Deployment:
    # The stages a deploy of this project runs as: the template's default, each config-env's Stage=.
    stages: list[DeployedStage] = field(default_factory=list)
    # Each setting the template overrides (MEDIAN_SETTING_<NAME>), by NAME, with its value as written.
    provided: dict[str, str] = field(default_factory=dict)
    # Every other variable the template sets to a value for the function, with that value as written.
    variables: dict[str, str] = field(default_factory=dict)


def project_root() -> Path | None:
    """The folder that holds the tools package, where template.yaml and samconfig.toml live beside it."""
    directory = settings_directory()
    return directory.parent if directory is not None else None


def deployment() -> Deployment:
    """The stages this project deploys, and what its template sets for the function; raises DeploymentUnreadable."""
    root = project_root()
    if root is None or not (root / TEMPLATE_FILE).exists():
        return Deployment()
    template_path = root / TEMPLATE_FILE
    try:
        template = load_template(template_path)
        function = function_properties(Template(template, {}), FUNCTION_LOGICAL_ID)
    except Exception as error:  # YAML's and the template's own shape: named, whatever it is
        raise DeploymentUnreadable(f"{shown_path(str(template_path))} cannot be read: {error}") from None
    provided: dict[str, str] = {}
    variables: dict[str, str] = {}
    for name, written in function.get("Environment", {}).get("Variables", {}).items():
        if written in ("", None):  # declared for sam local's --env-vars, empty when deployed: unset
            continue
        shown = written_as(written)
        if str(name).startswith(OVERRIDE_PREFIX):
            provided[str(name).removeprefix(OVERRIDE_PREFIX)] = shown
        else:
            variables[str(name)] = shown
    default_stage = str(template.get("Parameters", {}).get(STAGE_PARAMETER, {}).get("Default", DEFAULT_STAGE))
    return Deployment(_stages(root, default_stage), provided, variables)


def _stages(root: Path, default_stage: str) -> list[DeployedStage]:
    samconfig = root / SAMCONFIG_FILE
    try:
        document = tomllib.loads(samconfig.read_text(encoding="utf-8"))
    except FileNotFoundError:
        document = {}
    except (tomllib.TOMLDecodeError, OSError) as error:
        raise DeploymentUnreadable(f"{shown_path(str(samconfig))} cannot be read: {error}") from None
    # The default config-env is `make deploy`'s; another is a deploy's only if it has a deploy section.
    deploying = sorted(
        name
        for name, sections in document.items()
        if name != DEFAULT_CONFIG_ENV and isinstance(sections, dict) and "deploy" in sections
    )
    return [deployed_by(each, root, default_stage) for each in [DEFAULT_CONFIG_ENV, *deploying]]


def deployment_problems() -> list[DeploymentProblem]:
    """samconfig.toml's stage and stack names that cannot deploy (median_lambda/project/deploy_names.py), each with
    its rule."""
    from median_lambda.project import deploy_names, sam_config

    root = project_root()
    if root is None or not (root / SAMCONFIG_FILE).exists():
        return []
    samconfig, roles = root / SAMCONFIG_FILE, root / PIPELINE_ROLES_FILE
    try:
        document = tomllib.loads(samconfig.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, OSError) as error:
        return [DeploymentProblem(f"{shown_path(str(samconfig))} cannot be read: {error}")]
    try:
        pipeline = sam_config.load_template(roles) if roles.exists() else None
    except Exception as error:  # YAML's own errors: named, whatever they are
        return [DeploymentProblem(f"{shown_path(str(roles))} cannot be read: {error}")]
    longest = deploy_names.longest_stack_name(pipeline)
    problems = [DeploymentProblem(problem) for problem in deploy_names.config_env_problems(document, longest)]
    return problems + named_twice_problems(root, document)


def setting_named_as(parameter: str) -> str:
    """The setting a template Parameter is named as: ParcelsTable is PARCELS_TABLE."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", parameter).upper()


def named_twice_problems(root: Path, document: dict[str, Any]) -> list[DeploymentProblem]:
    """Each deploy of samconfig.toml whose value of a template Parameter named as a setting (ParcelsTable,
    PARCELS_TABLE) differs from what tools/settings.toml gives that setting in the stage it deploys.

    The template grants the function what the Parameter names (a company's table, say), while the tool calls what
    its setting names: two places for one name, which no other check compares, and in AWS an AccessDenied on the
    tool's first call in that stage. A setting the template overrides (MEDIAN_SETTING_<NAME>) has one place."""
    from median_lambda.authoring.settings import find

    try:
        template = load_template(root / TEMPLATE_FILE)
        function = function_properties(Template(template, {}), FUNCTION_LOGICAL_ID)
    except Exception:  # unreadable: `make check` says so from deployment(), once
        return []
    overridden = {
        str(name).removeprefix(OVERRIDE_PREFIX) for name in function.get("Environment", {}).get("Variables", {})
    }
    parameters = template.get("Parameters", {})
    default_stage = str(parameters.get(STAGE_PARAMETER, {}).get("Default", DEFAULT_STAGE))
    problems = []
    for config_env, sections in document.items():
        if not isinstance(sections, dict) or (config_env != DEFAULT_CONFIG_ENV and "deploy" not in sections):
            continue
        overrides = parameter_overrides(command_config("deploy", root / SAMCONFIG_FILE, config_env))
        stage = str(overrides.get(STAGE_PARAMETER, "")).strip() or default_stage
        for parameter, declared in parameters.items():
            setting = setting_named_as(str(parameter))
            found = None if setting in overridden else find(setting, for_stage=stage)
            value = overrides.get(parameter, declared.get("Default") if isinstance(declared, dict) else None)
            if found is None or value is None or str(value) == str(found.value):
                continue
            given = f"{parameter}={value}" if parameter in overrides else f"{parameter}'s Default, {value},"
            problems.append(
                DeploymentProblem(
                    f"samconfig.toml [{config_env}]: deploys stage {stage} with {given} but {found.source} has "
                    f"{setting} = {found.value!r}: the template grants the function what the one names, and the tool "
                    "calls what the other does, which AWS would deny. Give both the same value"
                )
            )
    return problems


def deployed_by(config_env: str, root: Path, default_stage: str) -> DeployedStage:
    """The stage `sam deploy --config-env <config_env>` deploys: its Stage= override, else the template's default."""
    overrides = parameter_overrides(command_config("deploy", root / SAMCONFIG_FILE, config_env))
    named = str(overrides.get(STAGE_PARAMETER, "")).strip()
    why = "make deploy" if config_env == DEFAULT_CONFIG_ENV else f"sam deploy --config-env {config_env}"
    return DeployedStage(named or default_stage, why)


def written_as(value: Any) -> str:
    """A template value as its author wrote it: text as it is, `!Ref ReturnsTable` for an intrinsic function."""
    if isinstance(value, dict) and len(value) == 1:
        [(function, argument)] = value.items()
        name = str(function).removeprefix("Fn::")
        return f"!{name} {argument}" if isinstance(argument, str) else f"!{name} {argument!r}"
    return str(value)
