"""`make new-tool NAME=...`: a working tool and its passing tests, or one line saying why not, and nothing written."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import pytest
from median_lambda.cli.commands import main

from tests.project_copy import ProjectCopy, copy_project

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

NAME = "loyalty_points"
TOOL_FILE = f"tools/{NAME}.py"
TEST_FILE = f"tests/tools/test_{NAME}.py"


@pytest.fixture
def project(tmp_path: Path) -> ProjectCopy:
    """A copy of the project whose tools/ holds no tool."""
    return copy_project(tmp_path / "project")


@pytest.fixture
def in_project(project: ProjectCopy, monkeypatch: pytest.MonkeyPatch) -> Iterator[ProjectCopy]:
    """The copy as the working directory, for refusals decided before any tool module is imported."""
    monkeypatch.chdir(project.root)
    yield project


def _files(project: ProjectCopy) -> set[str]:
    return {str(path.relative_to(project.root)) for path in project.root.rglob("*.py")}


def test_it_writes_a_tool_whose_generated_tests_pass_and_that_check_accepts(project: ProjectCopy) -> None:
    # GIVEN a project with no tools
    # WHEN the author scaffolds loyalty_points with `median new-tool`, as `make new-tool` runs it
    made = project.median("new-tool", NAME)
    # THEN it names both files it wrote
    assert made.returncode == 0, made.stderr
    assert [line for line in made.stdout.splitlines() if line.startswith("wrote ")] == [
        f"wrote {TOOL_FILE}",
        f"wrote {TEST_FILE}",
    ]
    # AND the generated tests pass as they stand: the ok path, the ToolError, a 422 and the manifest
    tested = project.pytest("tests/tools")
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "4 passed" in tested.stdout
    # AND `make check` accepts the tool, and the manifest serves it as loyaltyPoints
    checked = project.median("check")
    assert checked.returncode == 0, checked.stderr
    assert "1/20 tools" in checked.stdout
    printed = project.median("manifest")
    [entry] = json.loads(printed.stdout)["tools"]
    assert (entry["name"], entry["risk"]) == ("loyaltyPoints", "low")
    assert entry["description"] == "Look up a record by its reference and tell its status."


def test_the_tool_shows_its_model_docstring_tool_error_and_camel_case_name(project: ProjectCopy) -> None:
    # WHEN the author scaffolds loyalty_points
    assert project.median("new-tool", NAME).returncode == 0
    source = project.read(TOOL_FILE)
    tests = project.read(TEST_FILE)
    # THEN the tool module has an input model, a docstring, a ToolError branch and its Median name in a comment
    assert "class LoyaltyPointsInput(BaseModel):" in source
    assert '    """Look up a record by its reference and tell its status."""' in source
    assert "raise ToolError(" in source
    assert '@tool(risk="low")  # served as loyaltyPoints' in source
    # AND its tests call it through MedianTestClient by that name
    assert "from median_lambda.testing import MedianTestClient" in tests
    assert 'TOOL = "loyaltyPoints"' in tests


@pytest.mark.parametrize("name", [NAME, "a" * 64, "order_" * 10 + "stat"])
def test_the_generated_files_pass_the_projects_lint(project: ProjectCopy, name: str) -> None:
    # GIVEN a NAME, short or as long as new-tool takes
    made = project.median("new-tool", name)
    assert made.returncode == 0, made.stderr
    # WHEN `make lint`'s ruff checks and format-checks the two files, under the project's settings
    files = [f"tools/{name}.py", f"tests/tools/test_{name}.py"]
    linted = project.run("-m", "ruff", "check", *files)
    formatted = project.run("-m", "ruff", "format", "--check", *files)
    # THEN neither has anything to say
    assert linted.returncode == 0, linted.stdout
    assert formatted.returncode == 0, formatted.stdout


def test_make_lint_type_checks_tools_and_the_scaffolds_tool_passes(project: ProjectCopy) -> None:
    # GIVEN a scaffolded tool
    made = project.median("new-tool", NAME)
    assert made.returncode == 0, made.stderr
    # WHEN `make lint`'s mypy runs under the project's settings
    checked = project.run("-m", "mypy")
    # THEN the tool passes strict type checking
    assert checked.returncode == 0, checked.stdout
    # AND WHEN a tool is given a type mistake
    tool = project.root / TOOL_FILE
    tool.write_text(tool.read_text(encoding="utf-8") + '\n\nSTATUS: int = _RECORDS["EXAMPLE-1"]\n', encoding="utf-8")
    checked = project.run("-m", "mypy")
    # THEN mypy names the author's file and line
    assert checked.returncode == 1
    assert f"{TOOL_FILE}:" in checked.stdout and "Incompatible types in assignment" in checked.stdout


def test_tests_tools_is_made_a_package_when_it_was_deleted(project: ProjectCopy) -> None:
    # GIVEN a project without tests/tools/ (the examples' tests deleted, folder and all)
    assert not (project.root / "tests" / "tools").exists()
    # WHEN the author scaffolds a tool
    assert project.median("new-tool", NAME).returncode == 0
    # THEN tests/tools/ is back, a package like the project's other test folders
    assert (project.root / "tests" / "tools" / "__init__.py").is_file()


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("loyalty-points", "is not a Python module name in snake_case"),
        ("LoyaltyPoints", "is not a Python module name in snake_case"),
        ("loyalty points", "is not a Python module name in snake_case"),
        ("2fa_status", "is not a Python module name in snake_case"),
        ("punkte_über", "is not a Python module name in snake_case"),
        ("", "is not a Python module name in snake_case"),
        ("_helpers", "would never be loaded: modules whose names start with _ are helpers"),
        ("class", "is a Python keyword"),
        ("import", "is a Python keyword"),
        ("list", "is a Python builtin"),
        ("id", "is a Python builtin"),
        ("search_knowledge_base", "'searchKnowledgeBase' is reserved by Median"),
        ("request_handoff", "'requestHandoff' is reserved by Median"),
        ("a" * 65, "breaks Median's name rule (a letter, then up to 63 letters, digits or underscores)"),
        ("a_" * 33, "is 66 characters long; keep it to 64"),
    ],
)
def test_a_name_that_cannot_be_a_tool_is_refused_in_one_line(
    in_project: ProjectCopy, capsys: pytest.CaptureFixture[str], name: str, reason: str
) -> None:
    # GIVEN a NAME the loader would not import, or whose tool name Median would refuse
    before = _files(in_project)
    # WHEN the author runs new-tool with it
    status = main(["new-tool", name])
    # THEN it exits non-zero with one line saying why, and writes nothing
    err = capsys.readouterr().err
    assert status != 0
    assert len(err.splitlines()) == 1, err
    assert reason in err
    assert _files(in_project) == before


@pytest.mark.parametrize("existing", [TOOL_FILE, TEST_FILE])
def test_it_never_overwrites_a_file(in_project: ProjectCopy, capsys: pytest.CaptureFixture[str], existing: str) -> None:
    # GIVEN one of the two files already there, with the author's work in it
    in_project.write(existing, "# the author's own work\n")
    before = _files(in_project)
    # WHEN the author runs new-tool for that name
    status = main(["new-tool", NAME])
    # THEN it refuses, naming the file, and neither file is written nor changed
    err = capsys.readouterr().err
    assert status != 0
    assert err.strip() == f"error: {existing} already exists, and new-tool never overwrites a file"
    assert in_project.read(existing) == "# the author's own work\n"
    assert _files(in_project) == before


TAKEN_BY_NAME = """
    from pydantic import BaseModel

    from median_lambda import tool


    class PointsInput(BaseModel):
        email: str


    @tool(risk="low", name="loyaltyPoints")
    def points(args: PointsInput) -> int:
        \"\"\"Tell a customer's points.\"\"\"
        return 1
"""

TAKEN_BY_FUNCTION = """
    from pydantic import BaseModel

    from median_lambda import tool


    class PointsInput(BaseModel):
        email: str


    @tool(risk="low")
    def loyalty_points(args: PointsInput) -> int:
        \"\"\"Tell a customer's points.\"\"\"
        return 1
"""


@pytest.mark.parametrize(
    ("module", "source"), [("rewards", TAKEN_BY_NAME), ("points", TAKEN_BY_FUNCTION)], ids=["by-name", "by-function"]
)
def test_a_tool_name_another_module_serves_is_refused_naming_that_module(
    project: ProjectCopy, module: str, source: str
) -> None:
    # GIVEN a tool module that already serves loyaltyPoints
    project.write(f"tools/{module}.py", source)
    # WHEN the author scaffolds loyalty_points
    made = project.median("new-tool", NAME)
    # THEN it refuses in one line naming the module that has the name, and writes nothing
    assert made.returncode != 0
    assert made.stderr.strip() == (
        f"error: a tool named 'loyaltyPoints' already exists, in tools/{module}.py: choose another NAME"
    )
    assert not (project.root / TOOL_FILE).exists()
    assert not (project.root / TEST_FILE).exists()


def test_tools_that_fail_to_import_are_named_and_nothing_is_written(project: ProjectCopy) -> None:
    # GIVEN a tool module that raises when imported
    project.write("tools/broken.py", "raise RuntimeError('the database URL is not set')\n")
    # WHEN the author scaffolds a tool
    made = project.median("new-tool", NAME)
    # THEN it refuses in one line that points at the broken module, and writes nothing
    assert made.returncode != 0
    [line] = made.stderr.splitlines()
    assert "cannot tell whether 'loyaltyPoints' is free" in line
    assert "tools/broken.py:1" in line
    assert not (project.root / TOOL_FILE).exists()


def test_make_new_tool_runs_it(project: ProjectCopy) -> None:
    # WHEN the author runs the README's `make new-tool NAME=loyalty_points`
    made = project.make("new-tool", f"NAME={NAME}")
    # THEN both files are written
    assert made.returncode == 0, made.stdout + made.stderr
    assert (project.root / TOOL_FILE).is_file()
    assert (project.root / TEST_FILE).is_file()


def test_make_test_tools_runs_the_tools_tests_alone_and_the_next_steps_name_it(project: ProjectCopy) -> None:
    # GIVEN a scaffolded tool, and a failing test outside tests/tools/
    made = project.make("new-tool", f"NAME={NAME}")
    assert made.returncode == 0, made.stdout + made.stderr
    project.write("tests/test_elsewhere.py", "def test_elsewhere() -> None:\n    raise AssertionError('not ours')\n")
    # THEN the printed next steps name the quick loop
    assert "make test-tools check" in made.stdout
    # WHEN the author runs `make test-tools`
    tools_only = project.make("test-tools")
    # THEN the tool's four tests run, and nothing else
    assert tools_only.returncode == 0, tools_only.stdout + tools_only.stderr
    assert "4 passed" in tools_only.stdout
    assert "test_elsewhere" not in tools_only.stdout
    # AND `make test` still runs everything: the tool's four tests, the contract suite, the failing test
    everything = project.make("test")
    assert everything.returncode != 0
    assert re.search(rf"^{re.escape(TEST_FILE)} \.{{4}} ", everything.stdout, re.MULTILINE), everything.stdout
    assert "Median contract (median-lambda's contract suite)" in everything.stdout
    assert "test_elsewhere" in everything.stdout


@pytest.mark.parametrize("folder", ["deleted", "without a test module"])
def test_make_test_tools_with_no_tool_tests_says_so_and_succeeds(project: ProjectCopy, folder: str) -> None:
    # GIVEN a project whose tools have no tests yet: "Make it yours" deleted tests/tools/, or left it holding
    # only its package file and the seed hook
    if folder != "deleted":
        project.write("tests/tools/__init__.py", "")
        project.write("tests/tools/local_aws_seed.py", "def seed() -> None:\n    pass\n")
    # WHEN the author runs `make test-tools`
    tools_only = project.make("test-tools")
    # THEN it succeeds, saying there is nothing to run and how to get a tool with its tests
    assert tools_only.returncode == 0, tools_only.stdout + tools_only.stderr
    assert (
        "No tool tests yet: tests/tools/ holds no test_*.py. make new-tool NAME=loyalty_points writes a tool "
        "and its tests." in tools_only.stdout
    )


def test_make_new_tool_without_a_name_says_how_to_give_one(project: ProjectCopy) -> None:
    # WHEN the author forgets NAME=
    made = project.make("new-tool")
    # THEN make fails with one line showing the command to type
    assert made.returncode != 0
    assert "make new-tool NAME=loyalty_points" in made.stderr
    assert not (project.root / "tests" / "tools").exists()
