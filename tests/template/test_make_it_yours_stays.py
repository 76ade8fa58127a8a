"""What the README's "Make it yours" removed stays removed through Copier's next runs: `copier recopy`, and a
`copier update` to a version that changed the examples.

The pinned Copier (as `make upgrade` runs it), on a clone of this working tree (maintainers.template_proof's,
with the releases tagged), into a project whose examples are deleted with the README's own commands.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import pytest
from median_lambda.project.examples import EXAMPLE_FILES

from maintainers.template_proof import template_clone
from tests.template.copier_runs import commit_all, copier, git, run
from tests.template.test_generated_project import _make_it_yours

if TYPE_CHECKING:
    from pathlib import Path

# What a later version changes in the examples: a line of the returns table's block in template.yaml,
# and the example tool itself.
RETURNS_BLOCK_LINE = "      PointInTimeRecoverySpecification:\n"
CHANGED_RETURNS_BLOCK_LINE = "      # Kept for 35 days, point-in-time.\n      PointInTimeRecoverySpecification:\n"


def examples_left(project: Path) -> list[str]:
    left = [name for name in EXAMPLE_FILES if (project / name).exists()]
    for name in ("template.yaml", "tools/settings.toml", "pipeline/oidc-role.yaml", "README.md"):
        text = (project / name).read_text(encoding="utf-8")
        markers = (">>> example", "ReturnsTable", "Make it yours", "<<<<<<<")
        left += [f"{name}: {marker}" for marker in markers if marker in text]
    return left


def templates_files(project: Path) -> dict[str, bytes]:
    """Every file of the project outside the user's own folders (tools/, tests/tools/) and git's."""
    return {
        path.relative_to(project).as_posix(): path.read_bytes()
        for path in project.rglob("*")
        if path.is_file()
        and path.relative_to(project).parts[0] not in ("tools", ".git")
        and not path.relative_to(project).as_posix().startswith("tests/tools/")
    }


@pytest.fixture(scope="module")
def made_yours(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the template's clone, a project copied from it whose examples "Make it yours" deleted, committed)."""
    scratch = tmp_path_factory.mktemp("yours")
    template = template_clone(scratch)
    project = scratch / "project"
    copier(scratch, "copy", "--vcs-ref", "HEAD", str(template), str(project))
    # The README's `make remove-examples` runs `median remove-examples` in the project's venv: this
    # interpreter's median-lambda stands in for it (tests/integration/test_readme.py holds the README to it).
    assert _make_it_yours(project).strip() == "make remove-examples"
    run([sys.executable, "-m", "median_lambda", "remove-examples"], project)
    git(project, "init", "--quiet")
    commit_all(project, "copier copy, made ours")
    assert examples_left(project) == []
    return template, project


def test_made_yours_the_project_is_what_a_copy_without_the_examples_is(
    made_yours: tuple[Path, Path], tmp_path: Path
) -> None:
    # GIVEN a project whose examples "Make it yours" deleted
    template, project = made_yours
    # WHEN the same version is copied without the examples
    without = tmp_path / "without"
    copier(tmp_path, "copy", "--vcs-ref", "HEAD", "--data", "keep_examples=false", str(template), str(without))
    # THEN every file of the template's is byte for byte the same in both (the README without its "Make it yours",
    # the answers saying keep_examples: false), so later upgrades merge into it as into the other
    assert templates_files(project) == templates_files(without)
    # AND of tests/tools/ the package and the seed hook are left, and nothing of the examples
    assert sorted(path.name for path in (project / "tests" / "tools").iterdir() if path.is_file()) == [
        "__init__.py",
        "local_aws_seed.py",
    ]


def test_copier_recopy_brings_no_example_back(made_yours: tuple[Path, Path]) -> None:
    # GIVEN a project whose examples "Make it yours" deleted
    _, project = made_yours
    try:
        # WHEN Copier copies the template over it again, with the project's answers
        copier(project, "recopy", "--overwrite", "--vcs-ref", "HEAD")
        # THEN neither the example tools, their tests, nor their blocks in the template's files are back
        assert examples_left(project) == []
    finally:  # the project as it was, for the next test
        git(project, "checkout", "--quiet", "--", ".")
        git(project, "clean", "--quiet", "-fd")


def test_copier_update_to_a_version_that_changed_the_examples_merges_without_them(
    made_yours: tuple[Path, Path],
) -> None:
    # GIVEN a later version of the template that changes the returns table's block and the example tool
    template, project = made_yours
    text = (template / "template.yaml").read_text(encoding="utf-8")
    assert text.count(RETURNS_BLOCK_LINE) == 1
    (template / "template.yaml").write_text(text.replace(RETURNS_BLOCK_LINE, CHANGED_RETURNS_BLOCK_LINE))
    with (template / "tools" / "returns.py").open("a", encoding="utf-8") as tool:
        tool.write("# A later version's change to the example.\n")
    git(template, "commit", "--quiet", "-am", "A later version: the examples change")
    # WHEN the project takes it
    copier(project, "update", "--vcs-ref", "HEAD")
    # THEN the merge is clean, and brings back neither the examples nor their blocks
    assert examples_left(project) == []
    assert "<<<<<<<" not in git(project, "diff")
