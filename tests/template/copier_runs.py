"""The pinned Copier and git, run on a template clone and its projects as a user runs them: each failure names
the command and what it said."""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING

from tests.project_copy import REPO

if TYPE_CHECKING:
    from pathlib import Path

COPIER = REPO / ".venv" / "copier" / "bin" / "copier"


def run(command: list[str], cwd: Path) -> str:
    environment = {name: value for name, value in os.environ.items() if not name.startswith(("MAKE", "VIRTUAL_ENV"))}
    # These projects are copied to compare and merge files, never to install: the template's lock task skips.
    environment["MEDIAN_RENDER_ONLY"] = "1"
    done = subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True, check=False)  # noqa: S603
    assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def git(cwd: Path, *arguments: str) -> str:
    return run(["git", "-c", "user.email=u@example.invalid", "-c", "user.name=u", *arguments], cwd)


def copier(cwd: Path, *arguments: str) -> str:
    """The pinned Copier, trusted and answering with the defaults (or the project's answers)."""
    return run([str(COPIER), *arguments, "--trust", "--defaults", "--quiet"], cwd)


def commit_all(cwd: Path, message: str) -> None:
    git(cwd, "add", "-A")
    git(cwd, "commit", "--quiet", "-m", message)
