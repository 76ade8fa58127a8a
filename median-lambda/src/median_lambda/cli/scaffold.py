"""`median new-tool NAME` (`make new-tool NAME=...`): a working tool in tools/ and its tests in tests/tools/.

The templates are median_lambda/cli/templates/*.template (string.Template: `${tool_name}`, `${module}`,
`${model}`); edit them to change what every new tool starts from. A NAME is refused, in one
line, before anything is written: when it is no module the loader would import, when its tool
name would break one of Median's name rules, or when either file already exists.
"""

from __future__ import annotations

import builtins
import keyword
import re
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import TYPE_CHECKING

from median_lambda.authoring.api import camel_case
from median_lambda.cli.checks import tools_manifest
from median_lambda.cli.errors import UsageError
from median_lambda.protocol import NAME_PATTERN, NAME_RULE, RESERVED_NAMES, TOOLS_PACKAGE

if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping

TEMPLATES = Path(__file__).parent / "templates"
TOOL_TEMPLATE = TEMPLATES / "new_tool.py.template"
TEST_TEMPLATE = TEMPLATES / "new_tool_test.py.template"
TESTS_DIR = Path("tests") / "tools"
# PEP 8's module names: the module name is also the function's, whose camelCase is the tool's.
_SNAKE_CASE = re.compile(r"[a-z][a-z0-9_]*")
EXAMPLE_NAME = "loyalty_points"
# As long as Median lets a tool name be (underscores make a module name longer than its tool's);
# the templates' lines fit in ruff's 120 columns up to this.
MAX_NAME_LENGTH = 64


class Refused(Exception):
    """The NAME cannot be scaffolded; the message says why, in one line."""


@dataclass(frozen=True)
class NewTool:
    module: str  # loyalty_points: tools/loyalty_points.py and its function
    tool_name: str  # loyaltyPoints: what Median's agent calls
    model: str  # LoyaltyPointsInput
    tool_file: Path
    test_file: Path


def plan(name: str, root: Path) -> NewTool:
    """What `name` would write under the project `root`; Refused if it must not be written."""
    _check_module_name(name)
    tool_name = camel_case(name)
    if not NAME_PATTERN.fullmatch(tool_name):
        raise Refused(f"its tool name {tool_name!r} breaks Median's name rule ({NAME_RULE}): choose a shorter NAME")
    if tool_name in RESERVED_NAMES:
        raise Refused(f"its tool name {tool_name!r} is reserved by Median: choose another NAME")
    if len(name) > MAX_NAME_LENGTH:
        raise Refused(f"{name!r} is {len(name)} characters long; keep it to {MAX_NAME_LENGTH}, as Median's tool names")
    if not (root / TOOLS_PACKAGE / "__init__.py").is_file():
        raise Refused(f"there is no {TOOLS_PACKAGE}/ package in {root}: run it from the project's root")
    model = "".join(part[:1].upper() + part[1:] for part in name.split("_")) + "Input"
    new = NewTool(name, tool_name, model, root / TOOLS_PACKAGE / f"{name}.py", root / TESTS_DIR / f"test_{name}.py")
    for path in (new.tool_file, new.test_file):
        if path.exists():
            raise Refused(f"{path.relative_to(root)} already exists, and new-tool never overwrites a file")
    return new


def _check_module_name(name: str) -> None:
    if name.startswith("_"):
        raise Refused(
            f"{TOOLS_PACKAGE}/{name}.py would never be loaded: modules whose names start with _ are helpers, "
            "not tools; drop the leading _"
        )
    if not _SNAKE_CASE.fullmatch(name):
        raise Refused(
            f"{name!r} is not a Python module name in snake_case (lowercase letters, digits and _, "
            f"starting with a letter), like {EXAMPLE_NAME}"
        )
    if keyword.iskeyword(name):
        raise Refused(f"{name!r} is a Python keyword, which no module or function can be named: choose another NAME")
    if hasattr(builtins, name):
        raise Refused(
            f"{name!r} is a Python builtin, which the tool's function would shadow (make lint refuses that): "
            f"choose another NAME, like {name}_lookup"
        )


def check_free(new: NewTool, taken: Mapping[str, str]) -> None:
    """Refused if a tool of that name exists; `taken` maps each served tool name to its module."""
    module = taken.get(new.tool_name)
    if module is not None:
        where = module.replace(".", "/") + ".py"
        raise Refused(f"a tool named {new.tool_name!r} already exists, in {where}: choose another NAME")


def render(new: NewTool) -> dict[Path, str]:
    """The two files' text, from the templates."""
    values = {"module": new.module, "tool_name": new.tool_name, "model": new.model}
    return {
        new.tool_file: Template(TOOL_TEMPLATE.read_text(encoding="utf-8")).substitute(values),
        new.test_file: Template(TEST_TEMPLATE.read_text(encoding="utf-8")).substitute(values),
    }


def write(new: NewTool) -> list[Path]:
    """Write both files (tests/tools/ too, made a package like the other test folders, if missing)."""
    written = []
    tests_dir = new.test_file.parent
    if not tests_dir.exists():
        tests_dir.mkdir(parents=True)
        if (tests_dir.parent / "__init__.py").is_file():
            (tests_dir / "__init__.py").write_text("", encoding="utf-8")
    for path, text in render(new).items():
        # "x": never overwrite, even a file that appeared since plan() looked.
        with path.open("x", encoding="utf-8") as out:
            out.write(text)
        written.append(path)
    return written


def command_new_tool(arguments: argparse.Namespace) -> int:
    """Write tools/NAME.py, a working tool, and tests/tools/test_NAME.py, its tests; never overwrite a file."""
    from median_lambda.authoring.registry import load_tools

    root = Path.cwd()
    try:
        new = plan(arguments.name, root)
        manifest, problems = tools_manifest()
        if not manifest:  # the tools do not even import: which names they hold is unknown
            raise UsageError(
                f"cannot tell whether {new.tool_name!r} is free while the tools fail to load: {problems[0]}"
            )
        check_free(new, {served.name: served.function.__module__ for served in load_tools().tools})
        written = write(new)
    except Refused as refused:
        raise UsageError(str(refused)) from None
    for path in written:
        print(f"wrote {path.relative_to(root)}")
    print(
        f"{new.tool_name} answers as written. Make it yours: its description (the docstring), its input model "
        "and its work; then `make test-tools check` (its tests alone, then Median's rules)."
    )
    return 0
