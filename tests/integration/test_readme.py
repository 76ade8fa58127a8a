"""A project's README (README.md.jinja): its "Add a tool" runs as written, and its "Make it yours" works.

Each Python snippet in the README that starts with a `# <path>` comment is a file a user
copies: here it is copied, as it stands, into a fresh project with no other tools, where its
tests must pass and `make check` and `make lint`'s ruff must accept it.
"""

from __future__ import annotations

import re
import shlex

import pytest
from median_lambda.project.examples import EXAMPLE_FILES, SEED_HOOK

from tests.project_copy import REPO, ProjectCopy, copy_project, fenced_snippets, snippet_files

README = REPO / "README.md.jinja"  # the project's: its snippets hold no Jinja


def _section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _snippets(section: str, language: str) -> list[str]:
    return [body for snippet_language, body in fenced_snippets(section) if snippet_language == language]


def _files_to_copy() -> dict[str, str]:
    """Each `# <path>` snippet of "Add a tool", by that path."""
    return snippet_files(_section("Add a tool"))


@pytest.fixture(scope="module")
def readme_project(tmp_path_factory: pytest.TempPathFactory) -> ProjectCopy:
    """A project with no tools, and the README's snippets copied in as they stand."""
    project = copy_project(tmp_path_factory.mktemp("readme") / "project")
    project.write_files(_files_to_copy())
    return project


def test_add_a_tool_names_a_tool_file_and_its_test_file() -> None:
    # GIVEN the README's "Add a tool"
    # WHEN its snippets are read
    paths = sorted(_files_to_copy())
    # THEN there is a tool module for tools/ and its test for tests/tools/, each naming where it goes
    assert [path.split("/")[0] for path in paths] == ["tests", "tools"]
    assert paths[0].startswith("tests/tools/test_")


def test_the_readmes_tool_and_its_test_pass_as_written(readme_project: ProjectCopy) -> None:
    # GIVEN the README's tool and test, copied as they stand into a project with no other tools
    tests = [path for path in _files_to_copy() if path.startswith("tests/")]
    # WHEN the test runs, as `make test` would run it
    finished = readme_project.pytest(*tests)
    # THEN it passes: every name the snippets use exists, and the answers are the ones they expect
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert " passed" in finished.stdout


def test_make_check_accepts_the_readmes_tool(readme_project: ProjectCopy) -> None:
    # WHEN `make check` runs on the project holding the README's tool
    finished = readme_project.run("-m", "median_lambda", "check")
    # THEN Median would accept it
    assert finished.returncode == 0, finished.stderr
    assert "1/20 tools" in finished.stdout


def test_the_readmes_snippets_pass_the_projects_lint(readme_project: ProjectCopy) -> None:
    # WHEN `make lint`'s ruff checks and format-checks the copied snippets
    paths = list(_files_to_copy())
    linted = readme_project.run("-m", "ruff", "check", *paths)
    formatted = readme_project.run("-m", "ruff", "format", "--check", *paths)
    # THEN a user who pastes them keeps `make lint` green
    assert linted.returncode == 0, linted.stdout
    assert formatted.returncode == 0, formatted.stdout


SWAP_SCRIPT = REPO / "maintainers" / "swap_examples.sh"


def _deleted_by_swap_check() -> set[str]:
    [listed] = re.findall(r"^examples=\(([^)]*)\)", SWAP_SCRIPT.read_text(encoding="utf-8"), re.MULTILINE)
    return set(shlex.split(listed))


def test_make_it_yours_is_one_command_that_deletes_what_the_swap_check_expects_gone() -> None:
    # GIVEN the README's "Make it yours", the command it runs, and the script CI runs to prove it
    [commands] = _snippets(_section("Make it yours"), "bash")
    # THEN it is `make remove-examples`, which deletes the example files the swap check then finds gone, by name
    assert commands.strip() == "make remove-examples"
    assert set(EXAMPLE_FILES) == _deleted_by_swap_check()
    assert "tests/tools" not in EXAMPLE_FILES
    assert "in_copy remove-examples" in SWAP_SCRIPT.read_text(encoding="utf-8")


def test_make_it_yours_names_every_file_it_deletes_and_keeps_the_packages_and_the_seed_hook() -> None:
    # GIVEN the README's "Make it yours"
    section = _section("Make it yours")
    # THEN each example file the command deletes is named there, the packages are not deleted, and the seed hook
    # is named as kept
    for name in EXAMPLE_FILES:
        assert f"`{name}`" in section, name
    assert not {"tools/__init__.py", "tests/tools/__init__.py", SEED_HOOK} & set(EXAMPLE_FILES)
    assert f"so does `{SEED_HOOK}`" in section


def test_the_swap_check_is_what_ci_runs() -> None:
    # GIVEN CI's script
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    # THEN it runs the swap check, and the maintainers' make target runs the script
    assert "\nmake swap-check\n" in ci
    assert "maintainers/swap_examples.sh" in (REPO / "maintainer.mk").read_text(encoding="utf-8")
    assert SWAP_SCRIPT.stat().st_mode & 0o111, "the script must be executable"
