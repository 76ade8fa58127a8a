"""uv.lock: it matches pyproject.toml, or `make lint` and `make test` fail naming the command that fixes it."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from typing import TYPE_CHECKING

import pytest

from scripts.lock import LOCK, ROOT, stale_lock_problem, uv_executable, uv_requirement

if TYPE_CHECKING:
    from pathlib import Path

STALE = "uv.lock does not match pyproject.toml: run `make lock` and commit uv.lock"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """pyproject.toml and uv.lock as committed, in a folder of the test's own."""
    for name in ("pyproject.toml", "uv.lock"):
        shutil.copy2(ROOT / name, tmp_path / name)
    return tmp_path


def edit_pyproject(project: Path, old: str, new: str) -> None:
    path = project / "pyproject.toml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_the_committed_lock_matches_pyproject() -> None:
    # GIVEN this checkout's pyproject.toml and uv.lock
    # WHEN the lock is checked against it, offline
    # THEN it matches; if not, the failure says `make lock`
    assert stale_lock_problem() is None


@pytest.mark.parametrize(
    ("change", "old", "new"),
    [
        (
            "a tool's new runtime dependency",
            '    "pydantic>=2.14,<3",\n',
            '    "pydantic>=2.14,<3",\n    "httpx>=0.28",\n',
        ),
        ("a raised lower bound", '"wrapt>=1.16"', '"wrapt>=99"'),
        ("a dependency removed", '    "hypothesis>=6.120",\n', ""),
        ("a new group", "\nlint = [", '\ndocs = ["pyyaml>=6"]\nlint = ['),
    ],
)
def test_a_change_to_pyproject_without_make_lock_names_make_lock(
    project: Path, change: str, old: str, new: str
) -> None:
    # GIVEN pyproject.toml changed and uv.lock left as it was
    edit_pyproject(project, old, new)
    # WHEN the lock is checked
    # THEN the answer is the one line that says what to run
    assert stale_lock_problem(project) == STALE


def test_a_missing_lock_names_make_lock(project: Path) -> None:
    # GIVEN a checkout whose uv.lock was deleted
    (project / "uv.lock").unlink()
    # WHEN it is checked
    # THEN the answer says how to make one
    assert stale_lock_problem(project) == STALE


def test_pip_installs_the_locked_uv_with_every_hash_the_lock_records() -> None:
    # GIVEN the lock's entry for uv, the tool that installs everything else
    entry = next(package for package in tomllib.loads(LOCK.read_text())["package"] if package["name"] == "uv")
    # WHEN the Makefile asks for uv's requirement
    requirement = uv_requirement()
    # THEN it pins the locked version with the hash of every file the lock knows for it (pip refuses any other)
    files = [entry["sdist"], *entry["wheels"]] if "sdist" in entry else entry["wheels"]
    assert requirement.startswith(f"uv=={entry['version']} --hash=sha256:")
    assert set(re.findall(r"--hash=(\S+)", requirement)) == {file["hash"] for file in files}
    # AND the uv this venv runs is that one
    version = subprocess.run([uv_executable(), "--version"], capture_output=True, text=True, check=True).stdout  # noqa: S603
    assert version.split()[1] == entry["version"]
