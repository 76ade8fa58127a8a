"""What the build and its checks need from template.yaml: the function's architecture.

SAM does not tell a `BuildMethod: makefile` build which architecture it builds for
(aws/aws-sam-cli#3349), so the build reads the `Architecture` parameter's default here,
or $LAMBDA_ARCHITECTURE when the parameter is overridden.

    python -m scripts.sam_template architecture   # arm64
    python -m scripts.sam_template wheel-machine  # aarch64, as pip's manylinux platform tags name it
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import yaml

TEMPLATE = Path(__file__).resolve().parent.parent / "template.yaml"
ARCHITECTURE_PARAMETER = "Architecture"
ARCHITECTURE_ENV = "LAMBDA_ARCHITECTURE"
# Lambda's names for its instruction sets -> the machine in wheel tags and `uname -m`.
WHEEL_MACHINES = {"arm64": "aarch64", "x86_64": "x86_64"}


class _CloudFormationLoader(yaml.SafeLoader):
    """PyYAML's safe loader, also accepting CloudFormation's short forms (!Ref, !Sub, ...)."""


def _intrinsic(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    name = "Ref" if suffix == "Ref" else f"Fn::{suffix}"
    if isinstance(node, yaml.ScalarNode):
        return {name: loader.construct_scalar(node)}
    if isinstance(node, yaml.SequenceNode):
        return {name: loader.construct_sequence(node, deep=True)}
    return {name: loader.construct_mapping(node, deep=True)}  # type: ignore[arg-type]


_CloudFormationLoader.add_multi_constructor("!", _intrinsic)


def load_template(path: Path = TEMPLATE) -> dict[str, Any]:
    document = yaml.load(path.read_text(encoding="utf-8"), Loader=_CloudFormationLoader)  # noqa: S506 - safe loader
    if not isinstance(document, dict):
        raise ValueError(f"{path} is not a YAML mapping")
    return document


def lambda_architecture(template: dict[str, Any] | None = None) -> str:
    """The architecture the build targets: $LAMBDA_ARCHITECTURE, else the parameter's default."""
    chosen = os.environ.get(ARCHITECTURE_ENV, "").strip()
    if not chosen:
        parameter = (template or load_template())["Parameters"][ARCHITECTURE_PARAMETER]
        chosen = str(parameter["Default"])
    if chosen not in WHEEL_MACHINES:
        raise ValueError(f"architecture {chosen!r} is not one of Lambda's: {', '.join(WHEEL_MACHINES)}")
    return chosen


def wheel_machine(architecture: str) -> str:
    return WHEEL_MACHINES[architecture]


def main(argv: list[str]) -> int:
    commands = {
        "architecture": lambda: lambda_architecture(),
        "wheel-machine": lambda: wheel_machine(lambda_architecture()),
    }
    if len(argv) != 1 or argv[0] not in commands:
        print(f"usage: python -m scripts.sam_template {{{'|'.join(commands)}}}", file=sys.stderr)
        return 2
    try:
        print(commands[argv[0]]())
    except (OSError, KeyError, ValueError) as error:
        print(f"error: cannot tell the function's architecture: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
