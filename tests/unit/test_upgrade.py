"""median_lambda/project/upgrade.py (`make upgrade`): what it refuses before Copier runs, the conflicts it names after.

`make template-proof` runs the whole upgrade on real projects; these hold the refusals and the
conflict finder on small git repositories of their own.
"""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

import pytest
from median_lambda.project.upgrade import UpgradeStopped, answered_version, conflicted_files, refuse_a_dirty_tree

if TYPE_CHECKING:
    from pathlib import Path


def git(root: Path, *arguments: str) -> None:
    subprocess.run(["git", *arguments], cwd=root, capture_output=True, check=True)  # noqa: S603, S607


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A committed project, as `copier copy` and a first commit leave it."""
    git(tmp_path, "init", "--quiet")
    git(tmp_path, "config", "user.email", "user@example.invalid")
    git(tmp_path, "config", "user.name", "a user")
    (tmp_path / ".copier-answers.yml").write_text("_commit: v1.0.0\n_src_path: gh:example/template\n")
    (tmp_path / "template.yaml").write_text("Resources: {}\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "--quiet", "-m", "copier copy")
    return tmp_path


def test_the_version_is_read_from_the_answers(project: Path) -> None:
    assert answered_version(project) == "v1.0.0"


def test_a_checkout_without_answers_is_told_what_it_is(tmp_path: Path) -> None:
    # GIVEN the template repository itself, or a clone made before the template was a Copier template
    # THEN there is nothing to upgrade from, and the message says where adopting one is explained
    with pytest.raises(UpgradeStopped, match=r"no \.copier-answers\.yml.*docs/upgrading\.md"):
        answered_version(tmp_path)


def test_a_dirty_tree_is_refused_naming_what_is_uncommitted(project: Path) -> None:
    # GIVEN a change not committed, and a file not added
    (project / "template.yaml").write_text("Resources: {Mine: {}}\n")
    (project / "notes.txt").write_text("todo\n")
    # THEN the upgrade stops before Copier runs, naming both
    with pytest.raises(UpgradeStopped, match="Commit or stash your changes first") as stopped:
        refuse_a_dirty_tree(project)
    assert "template.yaml" in str(stopped.value) and "notes.txt" in str(stopped.value)


def test_a_clean_tree_goes_on(project: Path) -> None:
    refuse_a_dirty_tree(project)  # raises nothing


def test_every_file_left_unmerged_is_named(project: Path) -> None:
    # GIVEN what `copier update --conflict inline` leaves: a file with both sides between its markers,
    # a file git holds as unmerged, a .rej file; and a file merged cleanly
    (project / "template.yaml").write_text(
        "Resources:\n<<<<<<< before updating\n  Mine: {}\n=======\n  Theirs: {}\n>>>>>>> after updating\n"
    )
    (project / "samconfig.toml.rej").write_text("@@ a hunk @@\n")
    (project / "Makefile").write_text("all:\n")
    # THEN the conflicts are named, and the clean file is not
    assert conflicted_files(project) == ["samconfig.toml.rej", "template.yaml"]
