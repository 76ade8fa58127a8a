"""`make upgrade` in a generated project, as its user runs it: the template version recorded and the library the lock
pins never part, and the upgrade says only what is true.

A project is copied (its lock task run, uv on PATH as `uvx copier` has it) from a clone of this working tree with a
release of its own, gets its venv, and takes later releases made in the clone, and in a fork of it, with its own
`make upgrade`, as `make template-proof` does (maintainers/template_proof.py); a project taking median-lambda from a
package index (a folder of the releases' wheels here, beside PyPI for the rest) is copied and updated the same way.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest
from median_lambda.project.lock import library_disagreement

from maintainers.template_proof import later_releases, locked_library, make_release, template_clone
from tests.project_copy import REPO
from tests.template.copier_runs import COPIER, commit_all, git

if TYPE_CHECKING:
    from pathlib import Path

# A user's shell: nothing the framework's tests set reaches the project's make; the network's settings do.
_SHELL = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER")
_NETWORK = ("SSL_CERT_FILE", "SSL_CERT_DIR", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "UV_", "PIP_")
_TIMEOUT_SECONDS = 900
A_LATER_LINE = "# a later release's line\n"


def users_shell(**more: str) -> dict[str, str]:
    shell = {name: value for name, value in os.environ.items() if name in _SHELL or name.upper().startswith(_NETWORK)}
    return {**shell, **more}


def run(command: list[str], cwd: Path, **more: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - make, copier and the project's own commands
        command, cwd=cwd, env=users_shell(**more), capture_output=True, text=True, timeout=_TIMEOUT_SECONDS, check=False
    )


def copy_project(template: Path, version: str, project: Path, *answers: str, **more: str) -> None:
    """`uvx copier copy` as a user runs it: the template's tasks and its lock, with uv on PATH; then committed."""
    data = [item for answer in answers for item in ("--data", answer)]
    command = [str(COPIER), "copy", "--trust", "--defaults", "--quiet", "--vcs-ref", version, *data]
    path = f"{REPO / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}"
    copied = run([*command, str(template), str(project)], template, PATH=path, UV_PYTHON=sys.executable, **more)
    assert copied.returncode == 0, copied.stdout + copied.stderr
    git(project, "init", "--quiet")
    commit_all(project, "copier copy")


def make(project: Path, *arguments: str, **more: str) -> subprocess.CompletedProcess[str]:
    return run(["make", "--no-print-directory", *arguments], project, **more)


def answers(project: Path) -> str:
    return (project / ".copier-answers.yml").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Road:
    template: Path
    project: Path
    releases: list[str]  # the copied one, then two later ones
    upgraded: subprocess.CompletedProcess[str]  # make upgrade, from the first to the second


@pytest.fixture(scope="module")
def road(tmp_path_factory: pytest.TempPathFactory) -> Road:
    """A project copied from a release and given its venv, then `make upgrade` to the next release."""
    scratch = tmp_path_factory.mktemp("road")
    template = template_clone(scratch)
    releases = later_releases(template, 3)
    make_release(template, releases[0])
    project = scratch / "project"
    copy_project(template, releases[0], project)
    installed = make(project, "install")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    make_release(template, releases[1], A_LATER_LINE)
    return Road(template, project, releases, make(project, "upgrade"))


def test_a_plain_upgrade_moves_the_library_and_the_template_together(road: Road) -> None:
    # GIVEN a project upgraded from its release to the next with make upgrade
    _, later, _ = road.releases
    # THEN the upgrade went through, and the template's files, pyproject.toml and the lock all name the new release
    assert road.upgraded.returncode == 0, road.upgraded.stdout[-3000:] + road.upgraded.stderr[-3000:]
    assert f"_commit: {later}\n" in answers(road.project)
    assert (road.project / "template.yaml").read_text(encoding="utf-8").endswith(A_LATER_LINE)
    assert f'tag = "{later}"' in (road.project / "pyproject.toml").read_text(encoding="utf-8")
    assert locked_library(road.project) == f"{later[1:]} from file://{road.template}"
    assert library_disagreement(road.project) is None


def test_a_plain_upgrade_names_no_change_of_the_users_and_says_each_thing_once(road: Road) -> None:
    # GIVEN a project the user never changed, upgraded
    said = road.upgraded.stdout + road.upgraded.stderr
    # THEN nothing is called a change of theirs (README.md and pyproject.toml, which name the library's source,
    # neither), no task says what it did to a render, and each thing the upgrade says, it says once
    assert "your changes to the template's files" not in said
    assert "already arm64" not in said and "example block" not in said
    upgrade_lines = [line for line in said.splitlines() if line.startswith("upgrade: ")]
    assert upgrade_lines and len(upgrade_lines) == len(set(upgrade_lines))


def test_a_clean_upgrade_leaves_nothing_behind_in_git(road: Road) -> None:
    # GIVEN the upgraded project
    kept = road.project / ".git" / "median-upgrade"
    # THEN what the guard kept during the upgrade is gone
    assert road.upgraded.returncode == 0
    assert not kept.exists()


@pytest.fixture(scope="module")
def forked(road: Road, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The upgraded project, committed, with the user's edit of the line the later release added; then `make upgrade
    SOURCE=<a fork>` to the fork's own release, which changes that same line: (the fork, what make upgrade said)."""
    commit_all(road.project, "make upgrade")
    template = road.project / "template.yaml"
    template.write_text(template.read_text(encoding="utf-8").replace(A_LATER_LINE, "# my own line\n"), "utf-8")
    commit_all(road.project, "my own line")
    fork = tmp_path_factory.mktemp("fork") / "fork"
    git(road.template.parent, "clone", "--quiet", "--no-local", str(road.template), str(fork))
    forks_line = "# the fork's own line\n"
    text = (fork / "template.yaml").read_text(encoding="utf-8")
    (fork / "template.yaml").write_text(text.replace(A_LATER_LINE, forks_line), encoding="utf-8")
    git(fork, "-c", "user.email=f@example.invalid", "-c", "user.name=f", "commit", "--quiet", "-am", "the fork's")
    make_release(fork, road.releases[2])
    return fork, make(road.project, "upgrade", f"SOURCE={fork}")


def test_a_fork_s_release_taken_with_source_conflicts_only_where_the_user_edited(
    road: Road, forked: tuple[Path, subprocess.CompletedProcess[str]]
) -> None:
    # GIVEN the project upgraded from a fork, to a release that changed a line the user had edited too
    fork, upgraded = forked
    said = upgraded.stdout + upgraded.stderr
    # THEN the upgrade stops at that one file: pyproject.toml's source line and the README, which the user never
    # edited, take the fork's, and every link of the README names the fork
    assert upgraded.returncode != 0
    assert "could not merge these files" in said
    listed = said.split("'>>>>>>> after updating':\n", 1)[1].split("\nResolve", 1)[0]
    assert listed.splitlines() == ["  template.yaml"]
    pyproject = (road.project / "pyproject.toml").read_text(encoding="utf-8")
    assert "<<<<<<<" not in pyproject
    assert f'median-lambda = {{ git = "file://{fork}", tag = "{road.releases[2]}"' in pyproject
    readme = (road.project / "README.md").read_text(encoding="utf-8")
    assert "<<<<<<<" not in readme and str(road.template) not in readme
    assert f"(file://{fork}/docs/upgrading.md)" in readme


def test_after_a_conflict_make_lint_names_both_versions_until_make_lock_takes_the_template_s(
    road: Road, forked: tuple[Path, subprocess.CompletedProcess[str]]
) -> None:
    # GIVEN the project the fork's upgrade left in conflict, its lock still the previous release's
    fork, _ = forked
    previous, recorded = road.releases[1], road.releases[2]
    # WHEN its lock is checked as make lint checks it
    before = subprocess.run(  # noqa: S603 - the project's own median
        [str(road.project / ".venv" / "bin" / "median"), "lock", "--check"],
        cwd=road.project,
        env=users_shell(),
        capture_output=True,
        text=True,
        check=False,
    )
    # THEN it fails, naming the library locked and the template version recorded, and what to do
    assert before.returncode != 0
    assert f"uv.lock pins median-lambda {previous[1:]} (git tag {previous}," in before.stderr
    assert f"but this project's template files are {recorded} (.copier-answers.yml's _commit)" in before.stderr
    assert "Run `make lock`" in before.stderr
    # WHEN the user resolves the conflict as the upgrade says, then runs the prescribed make lock
    template = road.project / "template.yaml"
    resolved = re.sub(
        r"<<<<<<< before updating\n.*?=======\n(.*?)>>>>>>> after updating\n",
        r"\1",
        template.read_text(encoding="utf-8"),
        flags=re.DOTALL,
    )
    template.write_text(resolved, encoding="utf-8")
    locked = make(road.project, "lock")
    # THEN the lock pins the fork's release the template files are, and the check agrees
    assert locked.returncode == 0, locked.stdout + locked.stderr
    assert locked_library(road.project) == f"{recorded[1:]} from file://{fork}"
    assert library_disagreement(road.project) is None


def released_wheels(template: Path, releases: list[str], index: Path) -> None:
    """median-lambda's wheel of each release, built from its tag as `make dist` builds it, in the folder `index`."""
    for release in releases:
        source, archive = index.parent / f"source-{release}", index.parent / f"{release}.tar"
        git(template, "archive", "--output", str(archive), release, "median-lambda")
        with tarfile.open(archive) as files:
            files.extractall(source, filter="data")
        built = run(
            [str(REPO / ".venv" / "bin" / "uv"), "build", "--wheel", "--quiet", "--out-dir", str(index)],
            source / "median-lambda",
            UV_PYTHON=sys.executable,
        )
        assert built.returncode == 0, built.stdout + built.stderr


def test_a_project_from_an_index_locks_the_release_its_template_files_are_through_copy_and_upgrade(
    road: Road, tmp_path: Path
) -> None:
    # GIVEN a package index (a folder of median-lambda's wheels, beside PyPI) already holding the release after the one
    # a project is copied from
    first, later, _ = road.releases
    index = tmp_path / "index"
    index.mkdir()
    released_wheels(road.template, [first, later], index)
    # WHEN a project answering library_from_index is copied from the first release
    project = tmp_path / "project"
    copy_project(road.template, first, project, "library_from_index=true", UV_FIND_LINKS=str(index))
    # THEN its lock pins the release copied, not the newest the index has
    assert locked_library(project) == f"{first[1:]} from {index}"
    assert library_disagreement(project) is None
    # WHEN it is updated to the next release by the pinned Copier, as make upgrade merges, and locked as make lock does
    updated = run([str(COPIER), "update", "--trust", "--defaults", "--skip-answered", "--vcs-ref", later], project)
    assert updated.returncode == 0, updated.stdout + updated.stderr
    disagreement = library_disagreement(project)
    locked = make(project, "lock", UV_FIND_LINKS=str(index))
    # THEN until make lock the check names both versions, and make lock takes the new release's library exactly
    assert disagreement is not None and f"template files are {later} " in disagreement
    assert locked.returncode == 0, locked.stdout + locked.stderr
    assert locked_library(project) == f"{later[1:]} from {index}"
    assert library_disagreement(project) is None
