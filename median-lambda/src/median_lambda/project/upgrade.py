"""`make upgrade`: take a later version of the template into this project, then check it.

    python -m median_lambda.project.upgrade [VERSION]      # VERSION: a tag such as v1.2.0; the newest by default

`copier update` replays what the template changed between this project's version (its
.copier-answers.yml) and VERSION, with a three-way merge: the template's files take its changes
and keep yours, and tools/, tests/tools/ and tools/settings*.toml are never touched. A change it
cannot merge is left in the file between `<<<<<<< before updating` (yours) and `>>>>>>> after
updating` (the template's): this names every such file and stops, resolving nothing. Otherwise it
re-locks if the merged pyproject.toml asks for it, and runs `make lint test check`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path.cwd()  # the project's: every command runs in its root, as make runs them
ANSWERS = ROOT / ".copier-answers.yml"
COPIER = ROOT / ".venv" / "copier" / "bin" / "copier"
# What `copier update --conflict inline` writes around a change it could not merge.
CONFLICT_MARKER = re.compile(r"^(<<<<<<< before updating|>>>>>>> after updating)$", re.MULTILINE)


class UpgradeStopped(Exception):
    """The upgrade cannot go on; str() says why and what to do."""


def _git(root: Path, *arguments: str) -> str:
    command = ["git", *arguments]
    return subprocess.run(command, cwd=root, capture_output=True, text=True, check=True).stdout  # noqa: S603


def answered_version(root: Path = ROOT) -> str:
    """The template version this project was made from or last upgraded to (.copier-answers.yml's _commit)."""
    answers = root / ANSWERS.name
    if not answers.is_file():
        raise UpgradeStopped(
            "This checkout has no .copier-answers.yml, so no template to upgrade from: it is the template itself, "
            "or a project made before the template was a Copier template (docs/upgrading.md says how to adopt one)."
        )
    found = re.search(r"^_commit:\s*(\S+)\s*$", answers.read_text(encoding="utf-8"), re.MULTILINE)
    return found[1] if found else "an unknown version"


def refuse_a_dirty_tree(root: Path = ROOT) -> None:
    changed = _git(root, "status", "--porcelain", "--untracked-files=normal").splitlines()
    if changed:
        shown = "\n".join(f"  {line}" for line in changed[:10]) + ("\n  ..." if len(changed) > 10 else "")
        raise UpgradeStopped(
            f"Commit or stash your changes first: copier update merges into a clean tree only.\n{shown}"
        )


def conflicted_files(root: Path = ROOT) -> list[str]:
    """The files Copier left unmerged: git's unmerged entries, and any file holding Copier's markers."""
    unmerged = {line.split("\t", 1)[1] for line in _git(root, "ls-files", "--unmerged").splitlines() if "\t" in line}
    others = _git(root, "ls-files", "--others", "--exclude-standard").splitlines()
    rejected = {path for path in others if path.endswith(".rej")}
    for path in _git(root, "ls-files", "--modified").splitlines():
        try:
            text = (root / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if CONFLICT_MARKER.search(text):
            unmerged.add(path)
    return sorted(unmerged | rejected)


def run(argv: list[str]) -> int:
    version = argv[0] if argv else None
    before = answered_version()
    refuse_a_dirty_tree()
    command = [str(COPIER), "update", "--trust", "--skip-answered", "--conflict", "inline"]
    # Without a terminal (CI), a question a later version adds takes its default.
    command += [] if sys.stdin.isatty() else ["--defaults"]
    command += ["--vcs-ref", version] if version else []
    print(f"upgrade: from {before} to {version or 'the newest version'}: {' '.join(command[1:])}", flush=True)
    if subprocess.run(command, cwd=ROOT, check=False).returncode != 0:  # noqa: S603 - the pinned copier
        raise UpgradeStopped("copier update failed (above); nothing was checked.")
    conflicts = conflicted_files()
    if conflicts:
        listed = "\n".join(f"  {path}" for path in conflicts)
        raise UpgradeStopped(
            f"copier update could not merge these files: each keeps both versions of what it could not merge,\n"
            f"yours under '<<<<<<< before updating' and the template's under '>>>>>>> after updating':\n{listed}\n"
            "Resolve each (or `git checkout -- .` to drop the upgrade), then `make lock` if uv.lock is among "
            "them, and `make lint test check build`. CHANGELOG.md says what changed and what you must do."
        )
    after = answered_version()
    environment = {**os.environ, "MAKEFLAGS": ""}
    if (
        subprocess.run([sys.executable, "-m", "median_lambda.project.lock", "check"], cwd=ROOT, check=False).returncode
        != 0
    ):
        print("upgrade: the merged pyproject.toml asks for a new lock: make lock", flush=True)
        subprocess.run(["make", "lock"], cwd=ROOT, check=True, env=environment)  # noqa: S607
    print(f"upgrade: now on {after}; checking it: make lint test check", flush=True)
    checked = subprocess.run(["make", "lint", "test", "check"], cwd=ROOT, check=False, env=environment)  # noqa: S607
    if checked.returncode != 0:
        raise UpgradeStopped(
            f"The project on {after} fails the checks above. CHANGELOG.md's 'What you must do', for each "
            f"version after {before}, says what a version asks of your project: do it, then "
            "`make lint test check`, and commit."
        )
    print(
        f"upgrade: {before} -> {after}, merged and checked. Review `git diff`, read CHANGELOG.md for what you "
        "must do, then commit."
    )
    return 0


def main(argv: list[str]) -> int:
    try:
        return run(argv)
    except UpgradeStopped as stopped:
        print(f"upgrade: {stopped}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
