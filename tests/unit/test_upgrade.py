"""median_lambda/project/upgrade.py (`make upgrade`): what it refuses before Copier runs, the conflicts it names after.

`make template-proof` runs the whole upgrade on real projects; these hold the refusals and the
conflict finder on small git repositories of their own.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from median_lambda.project.upgrade import (
    UpgradeStopped,
    answered_source,
    answered_version,
    conflicted_files,
    refuse_a_dirty_tree,
    relock,
    source_as_kept,
    target_version,
    use_source,
    whose,
)

if TYPE_CHECKING:
    from collections.abc import Iterator


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
    with pytest.raises(UpgradeStopped, match=r"no \.copier-answers\.yml.*upgrading guide says how to adopt one"):
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


@pytest.fixture
def releases(tmp_path: Path) -> Path:
    """A template's repository with three releases and a commit after the last."""
    source = tmp_path / "template"
    source.mkdir()
    git(source, "init", "--quiet")
    for version in ("v2.0.0", "v3.0.0", "v3.1.0", None):
        (source / "CHANGELOG.md").write_text(f"{version}\n")
        git(source, "add", "-A")
        git(source, "-c", "user.email=m@example.invalid", "-c", "user.name=m", "commit", "--quiet", "-m", "x")
        if version:
            git(source, "tag", version)
    git(source, "tag", "not-a-release")
    return source


def test_the_newest_release_is_the_target(releases: Path) -> None:
    # GIVEN a project on v3.0.0 of a template whose newest release is v3.1.0
    # THEN the upgrade takes v3.1.0, and a project copied between releases is on the one before
    assert target_version("v3.0.0", None, str(releases)) == "v3.1.0"
    assert target_version("v3.0.0-4-gabc1234", None, str(releases)) == "v3.1.0"


def test_nothing_newer_is_said_as_nothing_to_do(releases: Path) -> None:
    # GIVEN a project on the newest release (or past it, copied from a later commit)
    # THEN there is no target: the upgrade says so and stops
    assert target_version("v3.1.0", None, str(releases)) is None
    assert target_version("v3.1.0-2-gabc1234", None, str(releases)) is None


def test_a_version_asked_for_is_taken_and_one_the_template_never_released_is_refused(releases: Path) -> None:
    # GIVEN VERSION= a release, an older one, and one that does not exist
    assert target_version("v3.0.0", "v3.1.0", str(releases)) == "v3.1.0"
    assert target_version("v3.1.0", "v2.0.0", str(releases)) == "v2.0.0"
    with pytest.raises(UpgradeStopped, match=r"has no release v9\.9\.9 \(its latest: v2\.0\.0, v3\.0\.0, v3\.1\.0\)"):
        target_version("v3.0.0", "v9.9.9", str(releases))
    # AND a ref that is no release (a maintainer's HEAD, a branch) goes to Copier as it is
    assert target_version("v3.0.0", "HEAD", str(releases)) == "HEAD"


def test_a_source_that_cannot_be_read_is_said(tmp_path: Path) -> None:
    with pytest.raises(UpgradeStopped, match="could not be read from"):
        target_version("v3.0.0", None, str(tmp_path / "no-such-template"))


def test_another_source_is_kept_for_this_upgrade_and_the_next(project: Path) -> None:
    # GIVEN a project copied from gh:example/template, upgraded from a fork
    use_source("https://github.com/a-fork/template.git", project)
    # THEN its answers name the fork, committed, so Copier and the next upgrade take it from there
    assert answered_source(project) == "https://github.com/a-fork/template.git"
    refuse_a_dirty_tree(project)  # nothing left uncommitted


def test_a_local_checkout_named_by_a_relative_path_is_kept_by_its_absolute_one(
    project: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a checkout of the template beside the project, named as a user types it: make upgrade SOURCE=../template
    beside = tmp_path_factory.mktemp("beside")
    (beside / "template").mkdir()
    monkeypatch.chdir(beside / "template")
    # WHEN the upgrade takes it
    use_source(source_as_kept("../template"), project)
    # THEN the answers name it whole, which uv and the next upgrade read from the project's own folder
    assert answered_source(project) == str(beside / "template")
    # AND a URL, or a shorthand no folder here has, is kept as given
    for source in ("gh:a-fork/template", "git@github.com:a-fork/template.git", "https://example.com/template"):
        assert source_as_kept(source) == source


def test_a_failing_check_says_whose_each_file_it_names_is(tmp_path: Path) -> None:
    # GIVEN a check's output naming a file of the template's, one of the user's (relative and whole), median-lambda's
    # own in the venv (as pytest and a traceback name them), and another installed package's
    output = (
        "handler/app.py:3: error: Name 'x' is not defined\n"
        "tools/loyalty.py:12:5: F821 undefined name\n"
        f"{tmp_path}/tests/tools/test_loyalty.py:4: AssertionError\n"
        ".venv/lib/python3.13/site-packages/median_lambda/contract/test_post.py:120: in test_refusals\n"
        f"{tmp_path}/.venv/lib/python3.13/site-packages/median_lambda/calls/dispatch.py:88: ValueError\n"
        ".venv/lib/python3.13/site-packages/pydantic/main.py:250: ValidationError\n"
    )
    # WHEN they are told apart by the template's files of the new version
    named = whose(output, {"handler/app.py", "template.yaml"}, tmp_path)
    # THEN the library's own files are never the user's, and another package's is no one's here
    assert named.templates == ["handler/app.py"]
    assert named.library == ["median_lambda/calls/dispatch.py", "median_lambda/contract/test_post.py"]
    assert named.yours == ["tests/tools/test_loyalty.py", "tools/loyalty.py"]


def _library_wheel(index: Path, version: str) -> None:
    """A wheel of median-lambda `version` as an index serves it (metadata only: uv locks, never installs it)."""
    info = f"median_lambda-{version}.dist-info"
    with zipfile.ZipFile(index / f"median_lambda-{version}-py3-none-any.whl", "w") as wheel:
        wheel.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: median-lambda\nVersion: {version}\n")
        wheel.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        wheel.writestr(f"{info}/RECORD", "")


@pytest.fixture
def indexed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A project whose median-lambda comes from a package index holding 3.0.1, 3.0.2 and 3.0.3, locked at 3.0.1, and
    whose template files are now 3.0.2's: its pyproject.toml constrains the library to 3.0.2, as the template writes
    it for a project taking median-lambda from an index (pyproject.toml.jinja)."""
    index = tmp_path / "index"
    index.mkdir()
    _library_wheel(index, "3.0.1")
    root = tmp_path / "project"
    root.mkdir()
    pyproject = (
        '[project]\nname = "p"\nversion = "0"\nrequires-python = ">=3.13"\n'
        'dependencies = ["median-lambda>=3.0,<4"]\n[tool.uv]\npackage = false\n'
    )
    (root / "pyproject.toml").write_text(pyproject + 'constraint-dependencies = ["median-lambda==3.0.1"]\n')
    # uv from the dev venv, as a project's own .venv/bin/uv, reading this folder as its only index.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("UV_PYTHON", sys.executable)
    monkeypatch.setenv("UV_PYTHON_DOWNLOADS", "never")
    monkeypatch.setenv("UV_NO_INDEX", "1")
    monkeypatch.setenv("UV_FIND_LINKS", str(index))
    subprocess.run(["uv", "lock", "--quiet"], cwd=root, check=True)  # noqa: S607
    _library_wheel(index, "3.0.2")
    _library_wheel(index, "3.0.3")
    (root / "pyproject.toml").write_text(pyproject + 'constraint-dependencies = ["median-lambda==3.0.2"]\n')
    yield root


def _locked(root: Path) -> str:
    lock = (root / "uv.lock").read_text(encoding="utf-8")
    return lock.split('name = "median-lambda"\nversion = "', 1)[1].split('"', 1)[0]


def test_the_lock_takes_the_release_upgraded_to_where_an_index_holds_later_ones(indexed: Path) -> None:
    # GIVEN a project at 3.0.1 upgraded to 3.0.2's template files, whose index already holds 3.0.2 and 3.0.3
    # WHEN the upgrade relocks median-lambda
    relock(indexed)
    # THEN it gets 3.0.2's library, the one its template files were made with, not the newest the index has
    assert _locked(indexed) == "3.0.2"
