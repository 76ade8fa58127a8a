"""Set the function's instruction set in template.yaml: arm64 or x86_64, chosen once per project.

    python -m median_lambda.project.architecture x86_64 [--template template.yaml]

`copier copy` runs it in a new project with the architecture its question chose; `make invoke
LOCAL_ARCH=x86_64` runs it on a copy of the template, to build for the host's. The architecture
is written in two lines of the template, which must agree:

- Globals' `Architectures: [arm64]` (or a block list, `Architectures:` then `- arm64`): what
  Lambda runs the function on, and what the build reads (median_lambda/project/sam_config.py);
- the extension's layer, `!FindInMap [ParametersSecretsExtension, !Ref AWS::Region, arm64]`:
  AWS publishes the AWS Parameters and Secrets Lambda Extension for each architecture, and the
  mapping's keys may hold letters and digits only, so x86_64's is `x86`.

It rewrites those lines and nothing else, and rewriting to the value already there changes
nothing. It refuses, naming the file and line, where it cannot tell which line to rewrite: no
`Architectures` line, two of them (two functions, each with its own: set each by hand), one
whose value is not written out (a `!Ref`), or a layer picked from the mapping in a form it does
not read. Standard library only: it runs before any venv exists.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

TEMPLATE = Path.cwd() / "template.yaml"  # the project's: run in its root
# Lambda's names for its instruction sets -> the extension mapping's key for each.
MAPPING_KEYS = {"arm64": "arm64", "x86_64": "x86"}

_COMMENT = re.compile(r"^\s*(#|$)")
# `Architectures: [arm64]`, a comment after it allowed.
_INLINE = re.compile(r"^(?P<head>\s*Architectures:\s*\[\s*)(?P<value>[^\s\],#]+)(?P<tail>\s*\]\s*(?:#.*)?)$")
# `Architectures:` alone, its value the block list's item on the next line.
_BLOCK_KEY = re.compile(r"^\s*Architectures:\s*(?:#.*)?$")
_BLOCK_ITEM = re.compile(r"^(?P<head>\s*-\s*)(?P<value>[^\s#]+)(?P<tail>\s*(?:#.*)?)$")
# Any other `Architectures:` key, written some way this script does not read.
_ANY_KEY = re.compile(r"^\s*Architectures:")
_LAYER = re.compile(
    r"^(?P<head>.*!FindInMap\s*\[\s*ParametersSecretsExtension\s*,\s*!Ref\s+AWS::Region\s*,\s*)"
    r"(?P<value>[A-Za-z0-9]+)(?P<tail>\s*\].*)$"
)
# A lookup in the mapping, in whatever form: `!FindInMap [ParametersSecretsExtension, ...`, or its
# name as a block list's item under `!FindInMap` or `Fn::FindInMap:`.
_MAPPING_USE = re.compile(
    r"FindInMap\W*\[\s*ParametersSecretsExtension\b|^\s*-\s*ParametersSecretsExtension\s*(?:#.*)?$"
)


class CannotSet(ValueError):
    """Why the template's architecture cannot be set by rewriting a line, with where to look."""


@dataclass(frozen=True)
class Line:
    """A line of the template holding the architecture: its 0-based index, and the value's span in it."""

    index: int
    head: str
    value: str
    tail: str

    def with_value(self, value: str) -> str:
        return f"{self.head}{value}{self.tail}"


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _body(line: str) -> str:
    return line.rstrip("\r\n")


def architecture_lines(text: str, shown: str = "template.yaml") -> list[Line]:
    """Every line that names the function's architecture; CannotSet for one written another way."""
    lines = _lines(text)
    found = []
    for index, line in enumerate(lines):
        body = _body(line)
        if _COMMENT.match(body) or not _ANY_KEY.match(body):
            continue
        if matched := _INLINE.match(body):
            found.append(Line(index, matched["head"], matched["value"], matched["tail"]))
            continue
        if _BLOCK_KEY.match(body):
            following = next((at for at in range(index + 1, len(lines)) if not _COMMENT.match(_body(lines[at]))), -1)
            item = _BLOCK_ITEM.match(_body(lines[following])) if following > index else None
            if item is not None:
                found.append(Line(following, item["head"], item["value"], item["tail"]))
                continue
        raise CannotSet(
            f"{shown}:{index + 1}: `{body.strip()}` does not write the architecture out as `Architectures: [arm64]`: "
            "write it so (arm64 or x86_64), or set it there by hand."
        )
    return found


def layer_lines(text: str, shown: str = "template.yaml") -> list[Line]:
    """Every line that picks the extension's layer from its mapping; CannotSet for a use written another way."""
    found = []
    for index, line in enumerate(_lines(text)):
        body = _body(line)
        if _COMMENT.match(body) or not _MAPPING_USE.search(body):
            continue
        matched = _LAYER.match(body)
        if matched is None:
            raise CannotSet(
                f"{shown}:{index + 1}: the extension's layer is picked from ParametersSecretsExtension in a form "
                "this script does not read: write it `!FindInMap [ParametersSecretsExtension, !Ref AWS::Region, "
                "arm64]` (x86 for x86_64), or set its key by hand."
            )
        found.append(Line(index, matched["head"], matched["value"], matched["tail"]))
    return found


def _where(lines: list[Line], shown: str) -> str:
    return ", ".join(f"{shown}:{line.index + 1}" for line in lines)


def set_architecture(text: str, architecture: str, shown: str = "template.yaml") -> tuple[str, list[str]]:
    """The template with the architecture set, and a line for each line it rewrote (none if already set)."""
    if architecture not in MAPPING_KEYS:
        raise CannotSet(f"{architecture!r} is not one of Lambda's architectures: {', '.join(MAPPING_KEYS)}.")
    architectures = architecture_lines(text, shown)
    if not architectures:
        raise CannotSet(
            f"{shown}: no line sets the function's architecture. Add `Architectures: [{architecture}]` under "
            "Globals: Function: (Lambda runs a function without one on x86_64)."
        )
    if len(architectures) > 1:
        raise CannotSet(
            f"{shown}: {len(architectures)} lines set an architecture ({_where(architectures, shown)}), one per "
            "function: set each by hand, with its extension layer's mapping key."
        )
    for line in architectures:
        if line.value not in MAPPING_KEYS:
            raise CannotSet(
                f"{shown}:{line.index + 1}: Architectures is `{line.value}`, not arm64 or x86_64 written out: "
                "set it by hand."
            )
    layers = layer_lines(text, shown)
    if len(layers) > 1:
        raise CannotSet(
            f"{shown}: {len(layers)} lines pick the extension's layer ({_where(layers, shown)}): set each by hand."
        )
    lines = _lines(text)
    said = []
    for line, value, meaning in [
        *((each, architecture, "Architectures") for each in architectures),
        *((each, MAPPING_KEYS[architecture], "the extension's layer") for each in layers),
    ]:
        if line.value == value:
            continue
        ending = lines[line.index][len(_body(lines[line.index])) :]
        lines[line.index] = line.with_value(value) + ending
        said.append(f"{shown}:{line.index + 1}: {meaning}: {line.value} -> {value}")
    return "".join(lines), said


def main(argv: list[str] | None = None) -> int:
    options = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    options.add_argument("architecture", help="arm64 or x86_64, as Lambda names them")
    options.add_argument("--template", type=Path, default=TEMPLATE, help="the SAM template to rewrite")
    arguments = options.parse_args(argv)
    path: Path = arguments.template
    shown = str(path.relative_to(Path.cwd())) if path.is_absolute() and path.is_relative_to(Path.cwd()) else str(path)
    try:
        # newline="": a template written with CRLF keeps them.
        with path.open(encoding="utf-8", newline="") as source:
            text = source.read()
        rewritten, said = set_architecture(text, arguments.architecture, shown)
    except (CannotSet, OSError) as error:
        print(f"error: cannot set the architecture: {error}", file=sys.stderr)
        return 1
    if not said:
        print(f"{shown}: already {arguments.architecture}")
        return 0
    with path.open("w", encoding="utf-8", newline="") as target:
        target.write(rewritten)
    print("\n".join(said))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
