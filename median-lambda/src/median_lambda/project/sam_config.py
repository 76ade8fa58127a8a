"""The function's settings as `sam deploy` will see them: template.yaml overlaid with samconfig.toml.

SAM does not tell a `BuildMethod: makefile` build which architecture it builds for
(aws/aws-sam-cli#3349), so the build and the artifact check ask here: $LAMBDA_ARCHITECTURE
(`median local`'s, for a build from a copy of the template set to another, `make invoke
LOCAL_ARCH=x86_64`), else the function's `Architectures` as template.yaml writes it (Globals,
or the function's own), else Lambda's default, x86_64; and the wheels' machine for it (aarch64,
as pip's manylinux platform tags name arm64). The Python it builds for is the function's `Runtime`
(runtime_python): a project moves to a newer one by that line (docs/upgrading.md).

`sam local` takes `--parameter-overrides` in place of samconfig.toml's, not on top of them, so
`median local` passes samconfig's local overrides with the user's added (local_overrides:
PARAMETER_OVERRIDES=LogLevel=DEBUG gives `ParametersSecretsExtensionLayerArn=none LogLevel=DEBUG`).
"""

from __future__ import annotations

import os
import shlex
import tomllib
from pathlib import Path
from typing import Any

import yaml

from median_lambda.protocol import METRICS_NAMESPACE_ENV, SERVICE_NAME_ENV

ROOT = Path.cwd()  # the project's: every command runs in its root, as make runs them
TEMPLATE = ROOT / "template.yaml"
SAMCONFIG = ROOT / "samconfig.toml"
CONFIG_ENV = "default"
FUNCTION = "MedianToolsFunction"  # the function the Makefile builds (build-MedianToolsFunction; its hook's, the same)
ARCHITECTURE_ENV = "LAMBDA_ARCHITECTURE"
LAMBDA_DEFAULT_ARCHITECTURE = "x86_64"  # what Lambda runs a function on that names none
# `make invoke LOCAL_ARCH=x86_64`: sam local on the host's architecture rather than the template's.
LOCAL_ARCHITECTURE_ENV = "LOCAL_ARCH"
# `make invoke PARAMETER_OVERRIDES="LogLevel=DEBUG"`: more overrides for sam local, over samconfig's.
LOCAL_OVERRIDES_ENV = "PARAMETER_OVERRIDES"
LOCAL_COMMAND = "local_invoke"  # samconfig's section for sam local invoke; start-api's holds the same overrides
# Lambda's names for its instruction sets -> the machine in wheel tags and `uname -m`.
WHEEL_MACHINES = {"arm64": "aarch64", "x86_64": "x86_64"}


class _CloudFormationLoader(yaml.SafeLoader):
    """PyYAML's safe loader, also accepting CloudFormation's short forms (!Ref, !Sub, ...)."""


def _intrinsic(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    name = suffix if suffix in ("Ref", "Condition") else f"Fn::{suffix}"  # !Condition is {"Condition": ...}
    if isinstance(node, yaml.ScalarNode):
        return {name: loader.construct_scalar(node)}
    if isinstance(node, yaml.SequenceNode):
        return {name: loader.construct_sequence(node, deep=True)}
    return {name: loader.construct_mapping(node, deep=True)}  # type: ignore[arg-type]


_CloudFormationLoader.add_multi_constructor("!", _intrinsic)


def load_template(path: Path = TEMPLATE) -> dict[str, Any]:
    return parse_template(path.read_text(encoding="utf-8"), str(path))


def parse_template(text: str, source: str = "template.yaml") -> dict[str, Any]:
    document = yaml.load(text, Loader=_CloudFormationLoader)  # noqa: S506 - safe loader
    if not isinstance(document, dict):
        raise ValueError(f"{source} is not a YAML mapping")
    return document


def deploy_config(path: Path = SAMCONFIG, environment: str = CONFIG_ENV) -> dict[str, Any]:
    """samconfig.toml's settings for `sam deploy`: its global section overlaid with its deploy section."""
    return command_config("deploy", path, environment)


def command_config(command: str, path: Path = SAMCONFIG, environment: str = CONFIG_ENV) -> dict[str, Any]:
    """samconfig.toml's settings for one SAM command (`local_invoke`, `deploy`, ...): global, then its own."""
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{path} is not valid TOML: {error}") from None
    sections = document.get(environment, {})
    return {**sections.get("global", {}).get("parameters", {}), **sections.get(command, {}).get("parameters", {})}


def named_as_deployed(path: Path = SAMCONFIG) -> dict[str, str]:
    """The variables that name a local run's logs and metrics as the deployed function's are named: template.yaml
    sets POWERTOOLS_SERVICE_NAME and POWERTOOLS_METRICS_NAMESPACE to the stack's name, so these are the stack
    `make deploy` deploys (samconfig.toml's default config-env); none when samconfig.toml names none."""
    try:
        stack = deploy_config(path).get("stack_name")
    except (ValueError, OSError):  # `make check` and the deploy say what is wrong with the file
        return {}
    if not isinstance(stack, str) or not stack.strip():
        return {}
    return {SERVICE_NAME_ENV: stack.strip(), METRICS_NAMESPACE_ENV: stack.strip()}


def parameter_overrides(config: dict[str, Any]) -> dict[str, str]:
    """`parameter_overrides` as SAM accepts it: one string of Key=Value pairs, or a list of them."""
    raw = config.get("parameter_overrides", "")
    pairs = shlex.split(raw) if isinstance(raw, str) else [str(item) for item in raw]
    return dict(pair.split("=", 1) for pair in pairs if "=" in pair)


def lambda_architecture(template: Path = TEMPLATE) -> str:
    """The architecture the function is deployed with, so the one to build for."""
    chosen = os.environ.get(ARCHITECTURE_ENV, "").strip()
    where = f"${ARCHITECTURE_ENV}"
    if not chosen:
        chosen, where = written_architecture(load_template(template)), f"{template.name}'s Architectures"
    if chosen not in WHEEL_MACHINES:
        raise ValueError(
            f"{where} is {chosen!r}, not one of Lambda's: {', '.join(WHEEL_MACHINES)} "
            "(python -m median_lambda.project.architecture sets it)"
        )
    return chosen


def written_architecture(template: dict[str, Any]) -> str:
    """The function's `Architectures` as the template writes it: its own, else Globals', else Lambda's default."""
    own = template.get("Resources", {}).get(FUNCTION, {}).get("Properties", {})
    globals_ = template.get("Globals", {}).get("Function", {})
    written = own.get("Architectures", globals_.get("Architectures", [LAMBDA_DEFAULT_ARCHITECTURE]))
    if not isinstance(written, list) or len(written) != 1:
        return str(written)
    return str(written[0])


def runtime_python(template: Path = TEMPLATE) -> str:
    """The Python the function runs, as "3.13" for template.yaml's `Runtime: python3.13` (the function's own,
    else Globals'): what the build installs wheels for and compiles with, and the artifact is checked for."""
    own = load_template(template).get("Resources", {}).get(FUNCTION, {}).get("Properties", {})
    written = str(own.get("Runtime", load_template(template).get("Globals", {}).get("Function", {}).get("Runtime")))
    major, _, minor = written.removeprefix("python").partition(".")
    if not written.startswith("python") or major != "3" or not minor.isdigit():
        raise ValueError(f"{template.name}'s Runtime is {written!r}, not one of Lambda's Python runtimes (python3.13)")
    return f"3.{minor}"


def wheel_machine(architecture: str) -> str:
    return WHEEL_MACHINES[architecture]


def local_overrides(samconfig: Path = SAMCONFIG, added: str | None = None, architecture: str | None = None) -> str:
    """`--parameter-overrides` for sam local: samconfig's own, then `added` (default: $PARAMETER_OVERRIDES).

    Checks `architecture` first (default: $LOCAL_ARCH), the one `median local` sets on a copy of the
    template, so that a typo is named by its variable before anything is built."""
    local_architecture = (os.environ.get(LOCAL_ARCHITECTURE_ENV, "") if architecture is None else architecture).strip()
    if local_architecture and local_architecture not in WHEEL_MACHINES:
        raise ValueError(f"LOCAL_ARCH={local_architecture!r} is not one of Lambda's: {', '.join(WHEEL_MACHINES)}")
    overrides = parameter_overrides(command_config(LOCAL_COMMAND, samconfig))
    added = os.environ.get(LOCAL_OVERRIDES_ENV, "") if added is None else added
    overrides |= parameter_overrides({"parameter_overrides": added})
    return " ".join(f"{key}={shlex.quote(value)}" for key, value in overrides.items())
