"""What an upgrade must never lose: a user's edit to a file of the template's.

    python -m median_lambda.project.upgrade_guard before   # Copier's migration, before `copier update` merges
    python -m median_lambda.project.upgrade_guard after    # ... and after it

`copier update` merges the template's changes into the files the user also changed, three ways,
and that works for a line changed on both sides: it leaves both between conflict markers. It
loses, without a word, what a three-way merge of text cannot hold: a file the user changed that
the new version deletes or renames (Copier deletes it), and a binary file both sides changed
(Copier takes the template's). So copier.yml runs this on every update, whichever command runs
it (`make upgrade`, a bare `copier update`, an older version's `make upgrade`):

- before: the project's version is rendered afresh, with the project's answers and the template's
  tasks (never its lock), and every file of that render the project holds otherwise is one the
  user changed. Each is kept, as the user left it, under .git/median-upgrade/.
- after: the new version is rendered the same way. A file the user changed that is now gone, or
  is now the new version's own byte for byte (the user's edit not in it), is put back as the user
  left it, named, and the upgrade stops (exit 1): the user carries the edit over, then checks and
  commits. A file the old version had and the new one has not, which Copier leaves because the
  new version's folders exclude it (a 2.x project's docs/ and CHANGELOG.md), is deleted where the
  user never changed it, and named where they did.

The user's own paths (tools/, tests/tools/, uv.lock, the answers file) are never the template's.
Runs in Copier's own interpreter, which has Copier; the standard library otherwise.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path.cwd()  # the project's: Copier runs its migrations in the project's root
ANSWERS_FILE = ".copier-answers.yml"
# What is the user's, whatever a template version renders there.
USERS_OWN = ("tools/", "tests/tools/", "uv.lock", ANSWERS_FILE)
# Set while a version is rendered for comparison: the template's lock task does nothing then.
RENDER_ONLY_ENV = "MEDIAN_RENDER_ONLY"
KEPT_DIRECTORY = "median-upgrade"


class UpgradeLost(Exception):
    """Files the upgrade would have lost: put back, and named in the message."""


def _git_directory(root: Path) -> Path:
    found = subprocess.run(
        ["git", "rev-parse", "--absolute-git-dir"],  # noqa: S607 - the user's git, as Copier runs it
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return Path(found)


def kept_directory(root: Path = ROOT) -> Path:
    return _git_directory(root) / KEPT_DIRECTORY


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _is_users(relative: str) -> bool:
    return relative in USERS_OWN or any(relative.startswith(prefix) for prefix in USERS_OWN if prefix.endswith("/"))


def file_digests(folder: Path) -> dict[str, str]:
    """Each file under `folder` (its .git aside), by its path relative to it, and its content's digest."""
    return {
        path.relative_to(folder).as_posix(): _digest(path)
        for path in sorted(folder.rglob("*"))
        if path.is_file() and ".git" not in path.relative_to(folder).parts
    }


def answers(root: Path) -> dict[str, Any]:
    """The project's answers, without Copier's own keys: what it was copied with."""
    import yaml  # Copier's own dependency: this runs in Copier's interpreter

    document = yaml.safe_load((root / ANSWERS_FILE).read_text(encoding="utf-8")) or {}
    return {name: value for name, value in document.items() if not str(name).startswith("_")}


def render(template: str, version: str, data: dict[str, Any], destination: Path) -> dict[str, str]:
    """The template at `version` as `copier copy` writes it with `data`, its tasks run (its lock not): digests."""
    from copier import run_copy

    previous = os.environ.get(RENDER_ONLY_ENV)
    os.environ[RENDER_ONLY_ENV] = "1"
    try:
        run_copy(template, destination, data=data, vcs_ref=version, defaults=True, quiet=True, unsafe=True)
    finally:
        if previous is None:
            os.environ.pop(RENDER_ONLY_ENV, None)
        else:
            os.environ[RENDER_ONLY_ENV] = previous
    return {name: digest for name, digest in file_digests(destination).items() if not _is_users(name)}


def before(template: str, version_from: str, root: Path = ROOT) -> list[str]:
    """Keep every file of the template's the user changed, as they left it; their paths."""
    kept = kept_directory(root)
    shutil.rmtree(kept, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="median-upgrade-") as scratch:
        rendered = render(template, version_from, answers(root), Path(scratch) / "project")
    changed = [
        name
        for name, digest in rendered.items()
        if (root / name).is_file() and not (root / name).is_symlink() and _digest(root / name) != digest
    ]
    for name in changed:
        target = kept / "yours" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, target)
    kept.mkdir(parents=True, exist_ok=True)
    (kept / "before.json").write_text(
        json.dumps({"version": version_from, "rendered": rendered, "changed": changed}, indent=1), encoding="utf-8"
    )
    return changed


def after(template: str, version_to: str, root: Path = ROOT) -> tuple[list[str], list[str], list[str]]:
    """Put back what the upgrade lost of the user's; delete what the old version left that the user never
    changed. Returns (lost and put back, left behind and kept as the user changed it, deleted)."""
    kept = kept_directory(root)
    recorded = json.loads((kept / "before.json").read_text(encoding="utf-8"))
    old: dict[str, str] = recorded["rendered"]
    changed: list[str] = recorded["changed"]
    with tempfile.TemporaryDirectory(prefix="median-upgrade-") as scratch:
        new = render(template, version_to, answers(root), Path(scratch) / "project")
    # The new version's files: `make upgrade` tells a check's failure in one of them from one in yours.
    (kept / "after.json").write_text(json.dumps({"version": version_to, "rendered": new}, indent=1), encoding="utf-8")
    lost = []
    for name in changed:
        here = root / name
        yours = kept / "yours" / name
        gone = not here.is_file()
        replaced = not gone and _digest(here) == new.get(name) and _digest(yours) != new.get(name)
        if gone or replaced:
            if replaced:  # the new version's own file, for the user to merge theirs into
                theirs = kept / "theirs" / name
                theirs.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(here, theirs)
            here.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(yours, here)
            lost.append(name)
    left_behind, deleted = [], []
    for name, digest in old.items():
        here = root / name
        if name in new or name in lost or not here.is_file():
            continue
        if _digest(here) == digest:
            here.unlink()
            deleted.append(name)
        else:
            left_behind.append(name)
    for folder in sorted({(root / name).parent for name in deleted}, key=lambda path: len(path.parts), reverse=True):
        while folder != root and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent
    return lost, left_behind, deleted


def _listed(names: list[str]) -> str:
    return "\n".join(f"  {name}" for name in names)


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] not in ("before", "after"):
        print("usage: python -m median_lambda.project.upgrade_guard before|after TEMPLATE VERSION", file=sys.stderr)
        return 2
    step, template, version = argv
    if step == "before":
        changed = before(template, version)
        if changed:
            print(f"upgrade: your changes to the template's files, kept until the upgrade ends:\n{_listed(changed)}")
        return 0
    lost, left_behind, deleted = after(template, version)
    if deleted:
        print(f"upgrade: deleted what the previous version left and you never changed:\n{_listed(deleted)}")
    if left_behind:
        print(
            "upgrade: this version no longer has these files, which you changed: kept as you left them; carry your "
            f"change over to where it lives now, then delete each:\n{_listed(left_behind)}"
        )
    if lost:
        theirs = kept_directory() / "theirs"
        print(
            "upgrade: stopped. These files of yours would have been lost: the new version deletes or renames "
            "them, or replaced them without a merge (a binary file both sides changed). Each is back as you left "
            f"it:\n{_listed(lost)}\nThe new version's own, where it has one, is under {theirs}. Carry your change "
            "over to where it lives now (and delete the file if the new version has no use for it), then "
            "`make lock`, `make lint test check`, and commit.",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
