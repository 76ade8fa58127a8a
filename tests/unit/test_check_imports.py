"""scripts/check_imports.py: the build refuses a tool's import the deployed function cannot satisfy, lazy ones too.

The dev venv holds every group (PyYAML and moto for the tests, say): a tool importing one of them
inside its function passed `make check`, `make build`, the artifact check and every test that did
not call it, and failed at its first call once deployed.
"""

from __future__ import annotations

import ast
import shutil
import textwrap
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

from scripts.check_artifact import import_problems as artifact_import_problems
from scripts.check_imports import import_problems, imports_of_tools, main, runtime_imports

REPO = Path(__file__).resolve().parents[2]
FIX = "to [project].dependencies in pyproject.toml, then make lock"
# What a deployed function has, as the lock says it (a subset, enough for these tools), and the runtime's boto3.
DEPLOYED = {"httpx", "pydantic", "aws-lambda-powertools", "boto3", "botocore", "python-dateutil"}

A_TOOL = '''
from __future__ import annotations

import json
from typing import TYPE_CHECKING

import boto3
import httpx
from dateutil import parser

from handler import tool
from tools._money import cents
from . import _money

if TYPE_CHECKING:
    from yaml import SafeLoader

try:
    import orjson
except ImportError:
    orjson = None


@tool(risk="low")
def zones(args):
    """Zones, from the carrier's YAML."""
    import yaml

    return yaml.safe_load("a: 1")


class Carrier:
    async def fetch(self):
        from moto.core import BaseBackend
        import importlib

        return importlib.import_module("pytest"), BaseBackend
'''


def write(root: Path, name: str, source: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")


@pytest.fixture
def tools(tmp_path: Path) -> Path:
    """A project whose tools/ imports the deployed packages, and some the dev venv alone has."""
    write(tmp_path, "tools/__init__.py", "")
    write(tmp_path, "tools/zones.py", A_TOOL)
    write(tmp_path, "tools/_money.py", "def cents(x):\n    import hypothesis\n    return x\n")
    write(tmp_path, "tools/carrier/client.py", "import requests_toolbelt_not_installed\n")
    write(tmp_path, "tools/notes.md", "import yaml\n")
    return tmp_path


def test_every_import_that_runs_is_read_lazy_ones_too_and_only_those() -> None:
    # GIVEN a tool's module with imports at its top, in functions and methods, under TYPE_CHECKING and in a try
    tree = ast.parse(textwrap.dedent(A_TOOL))
    # WHEN its imports are read
    found = [module for _, module in runtime_imports(tree)]
    # THEN each that runs is there, the lazy ones and the one importlib makes; not the type-only one,
    # nor the optional one the author guarded
    assert found == [
        "__future__",
        "json",
        "typing",
        "boto3",
        "httpx",
        "dateutil",
        "handler",
        "tools._money",
        "yaml",
        "moto.core",
        "importlib",
        "pytest",
    ]


def test_an_import_only_another_group_brings_is_named_at_its_line_with_the_package_and_the_fix(tools: Path) -> None:
    # GIVEN the tools above, the packages installed here, and what the deployed function holds
    # WHEN the build checks them
    problems = import_problems(imports_of_tools(tools), packages_distributions(), DEPLOYED)
    # THEN each import the function cannot satisfy is named where it is written, by the package that provides
    # it (not its import name), with the fix; the runtime's boto3 and dateutil, the artifact's httpx, the
    # standard library and the project's own pass
    assert problems == [
        f"tools/_money.py:2: imports hypothesis (the package hypothesis), which the deployed function will not have: "
        f"add hypothesis {FIX}",
        "tools/carrier/client.py:1: imports requests_toolbelt_not_installed, which no package installed here "
        f"provides and the deployed function will not have: add the package that provides it {FIX}",
        f"tools/zones.py:26: imports yaml (the package PyYAML), which the deployed function will not have: "
        f"add PyYAML {FIX}",
        f"tools/zones.py:33: imports moto.core (the package moto), which the deployed function will not have: "
        f"add moto {FIX}",
        f"tools/zones.py:36: imports pytest (the package pytest), which the deployed function will not have: "
        f"add pytest {FIX}",
    ]


def test_the_build_stops_on_a_lazy_import_of_a_package_the_lock_does_not_ship(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a project with this repository's lock, whose tool imports PyYAML (the test group's) inside its function
    for name in ("pyproject.toml", "uv.lock", "template.yaml"):
        shutil.copy2(REPO / name, tmp_path / name)
    write(tmp_path, "tools/__init__.py", "")
    write(tmp_path, "tools/zones.py", "import httpx\n\n\ndef zones():\n    import yaml\n    return yaml\n")
    # WHEN the build's check runs there
    status = main([str(tmp_path)])
    # THEN the build stops, naming the file and line and what to do
    assert status == 1
    error = capsys.readouterr().err
    assert "tools/zones.py:5: imports yaml (the package PyYAML), which the deployed function will not have: " in error
    assert f"add PyYAML {FIX}" in error
    # AND once the import is one the lock ships, it passes
    write(tmp_path, "tools/zones.py", "import httpx\n\n\ndef zones():\n    import pydantic\n    return pydantic\n")
    assert main([str(tmp_path)]) == 0


def test_the_artifact_check_refuses_an_artifact_without_a_package_its_tools_import(tmp_path: Path) -> None:
    # GIVEN a built artifact whose tool imports httpx (in it), boto3 (the runtime's) and PyYAML lazily (in neither)
    artifact = tmp_path / "MedianToolsFunction"
    write(artifact, "tools/__init__.py", "")
    write(artifact, "tools/zones.py", "import boto3\nimport httpx\n\n\ndef zones():\n    import yaml\n")
    write(artifact, "httpx/__init__.py", "")
    # WHEN the artifact check reads it
    problems = artifact_import_problems(artifact, runtime={"boto3", "botocore"})
    # THEN the one import nothing satisfies is named at its line
    assert problems == [
        f"tools/zones.py:6: imports yaml, which is not in the artifact: add the package that provides it {FIX}, "
        "and build again"
    ]
