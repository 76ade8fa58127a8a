"""What the project deploys, which `make check`, the build and the deploy's preflight hold the tools' settings to.

The stages: the template's default `Stage` (what `make deploy` deploys unless samconfig.toml's
default config-env sets `Stage=`), and each config-env's `Stage=` in samconfig.toml (what `sam
deploy --config-env <env>` deploys: the GitHub pipeline's staging and production). And the
variables the template sets for the function: MEDIAN_SETTING_<NAME> overrides a setting with the
deploy's value, while a variable named as a setting itself is never read.

Both files are read beside the tools package (`template.yaml` and `samconfig.toml` at the
project's root), with the workspace's own readers in scripts/ (which never ship), so a tools
package of a test's own, with neither beside it, deploys no more than its settings.toml names.
"""

from __future__ import annotations

import importlib
import tomllib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from handler.authoring.settings import OVERRIDE_PREFIX, DeployedStage, settings_directory
from handler.protocol import DEFAULT_STAGE
from handler.runtime.env import shown_path

if TYPE_CHECKING:
    from pathlib import Path
    from types import ModuleType

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


def _workspace_module(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(f"scripts.{name}")
    except ImportError:  # a project without the workspace's scripts deploys nothing from here
        return None


def deployment() -> Deployment:
    """The stages this project deploys, and what its template sets for the function; raises DeploymentUnreadable."""
    root = project_root()
    if root is None or not (root / TEMPLATE_FILE).exists():
        return Deployment()
    template_path = root / TEMPLATE_FILE
    sam_settings = _workspace_module("sam_settings")
    check_template = _workspace_module("check_template")
    if sam_settings is None or check_template is None:
        return Deployment()
    try:
        template = sam_settings.load_template(template_path)
        function = check_template.function_properties(check_template.Template(template, {}), FUNCTION_LOGICAL_ID)
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
    return Deployment(_stages(root, sam_settings, default_stage), provided, variables)


def _stages(root: Path, sam_settings: ModuleType, default_stage: str) -> list[DeployedStage]:
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
    return [deployed_by(each, root, sam_settings, default_stage) for each in [DEFAULT_CONFIG_ENV, *deploying]]


def deployment_problems() -> list[DeploymentProblem]:
    """samconfig.toml's stage and stack names that cannot deploy (scripts/deploy_names.py), each with its rule."""
    root = project_root()
    deploy_names = _workspace_module("deploy_names")
    sam_settings = _workspace_module("sam_settings")
    if root is None or deploy_names is None or sam_settings is None or not (root / SAMCONFIG_FILE).exists():
        return []
    samconfig, roles = root / SAMCONFIG_FILE, root / PIPELINE_ROLES_FILE
    try:
        document = tomllib.loads(samconfig.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, OSError) as error:
        return [DeploymentProblem(f"{shown_path(str(samconfig))} cannot be read: {error}")]
    try:
        pipeline = sam_settings.load_template(roles) if roles.exists() else None
    except Exception as error:  # YAML's own errors: named, whatever they are
        return [DeploymentProblem(f"{shown_path(str(roles))} cannot be read: {error}")]
    longest = deploy_names.longest_stack_name(pipeline)
    return [DeploymentProblem(problem) for problem in deploy_names.config_env_problems(document, longest)]


def deployed_by(config_env: str, root: Path, sam_settings: ModuleType, default_stage: str) -> DeployedStage:
    """The stage `sam deploy --config-env <config_env>` deploys: its Stage= override, else the template's default."""
    overrides = sam_settings.parameter_overrides(
        sam_settings.command_config("deploy", root / SAMCONFIG_FILE, config_env)
    )
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
