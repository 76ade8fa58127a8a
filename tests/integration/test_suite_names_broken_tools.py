"""`make test` on a tool module that fails to import stops with that module's one line, not a traceback.

The suite runs as a generated project's would, in a process of its own: this repository's pytest
settings (which load handler.testing.pytest_plugin, where the stop is), tests/__init__.py and no
conftest of the framework's, a tools package the test writes, and one tool test of the user's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING

from handler.protocol import TOOLS_PACKAGE_ENV
from tests.devserver_process import REPO

if TYPE_CHECKING:
    from pathlib import Path


POINTS_TOOL = '''
from pydantic import BaseModel, Field

from handler import tool


class PointsInput(BaseModel):
    email: str = Field(description="The customer's email address.")


@tool(risk="low")
def points_balance(args: PointsInput) -> dict:
    """Tell how many loyalty points the customer has."""
    return {"points": 120}
'''

USERS_TEST = """
from handler.testing import MedianTestClient
from tools.points import PointsInput


def test_points_balance():
    assert PointsInput(email="ada@example.com").email == "ada@example.com"
    answer = MedianTestClient().call("pointsBalance", {"email": "ada@example.com"})
    assert answer.status == 200
    assert answer.body["output"]["points"] == 120
"""


def a_clone(root: Path) -> Path:
    """The repository's test settings, with a tools package and tool tests of the user's own."""
    project = root / "clone"
    project.mkdir()
    shutil.copy(REPO / "pyproject.toml", project / "pyproject.toml")
    (project / "tests").mkdir()
    shutil.copy(REPO / "tests" / "__init__.py", project / "tests" / "__init__.py")
    (project / "tests" / "tools").mkdir()
    (project / "tests" / "tools" / "__init__.py").write_text("", encoding="utf-8")
    (project / "tests" / "tools" / "test_points.py").write_text(textwrap.dedent(USERS_TEST), encoding="utf-8")
    (project / "tools").mkdir()
    (project / "tools" / "__init__.py").write_text("", encoding="utf-8")
    return project


def run_suite(project: Path) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in os.environ.items() if name not in (TOOLS_PACKAGE_ENV, "PYTHONPATH")}
    # The clone's folder comes first on the import path (-m puts it there): its tools and tests, this handler.
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_tool_module_that_fails_to_import_stops_the_suite_with_its_line(tmp_path: Path) -> None:
    # GIVEN a clone whose tool module calls a function that does not exist, and the user's test of it
    project = a_clone(tmp_path)
    (project / "tools" / "points.py").write_text(
        "\n\naccount = find_account('ada@example.com')\n" + textwrap.dedent(POINTS_TOOL), encoding="utf-8"
    )
    # WHEN the suite runs
    finished = run_suite(project)
    output = finished.stdout + finished.stderr
    # THEN it fails with the one line at the author's file and line, and no traceback
    assert finished.returncode != 0
    assert "the tools failed to import:\ntools/points.py:3: NameError: name 'find_account' is not defined" in output
    assert "Traceback" not in output
    assert "handler/" not in output


def test_the_same_clone_passes_once_the_tool_is_fixed(tmp_path: Path) -> None:
    # GIVEN the same clone, its tool module written as it should be
    project = a_clone(tmp_path)
    (project / "tools" / "points.py").write_text(textwrap.dedent(POINTS_TOOL), encoding="utf-8")
    # WHEN the suite runs
    finished = run_suite(project)
    # THEN the user's test runs and passes
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "1 passed" in finished.stdout


def test_two_tools_with_one_name_stop_the_suite_naming_both_files(tmp_path: Path) -> None:
    # GIVEN a clone where a second module declares the points tool again, as a copied module would
    project = a_clone(tmp_path)
    (project / "tools" / "points.py").write_text(textwrap.dedent(POINTS_TOOL), encoding="utf-8")
    (project / "tools" / "rewards.py").write_text(
        textwrap.dedent(POINTS_TOOL).replace('return {"points": 120}', 'return {"points": 0}'), encoding="utf-8"
    )
    # WHEN the suite runs
    finished = run_suite(project)
    output = finished.stdout + finished.stderr
    # THEN it stops before any test, naming both places, where before one of them answered both names' tests
    assert finished.returncode != 0
    assert (
        "the tools failed to import:\ntools/rewards.py:11: two tools are named pointsBalance, here and at "
        'tools/points.py:11: a call reaches only one; rename one (@tool(name="..."))'
    ) in output
    assert "passed" not in output
    assert "Traceback" not in output


def test_a_tool_without_a_docstring_stops_the_suite_at_its_line(tmp_path: Path) -> None:
    # GIVEN a clone whose tool has no docstring
    project = a_clone(tmp_path)
    (project / "tools" / "points.py").write_text(
        textwrap.dedent(POINTS_TOOL).replace('    """Tell how many loyalty points the customer has."""\n', ""),
        encoding="utf-8",
    )
    # WHEN the suite runs
    finished = run_suite(project)
    output = finished.stdout + finished.stderr
    # THEN it stops before any test, at the tool's line, saying what to write
    assert finished.returncode != 0
    assert "the tools failed to import:\ntools/points.py:11: @tool on points_balance has no description" in output
    assert "passed" not in output
