"""What an upgrade must never lose: a user's edit to a file of the template's.

    python -m median_lambda.project.upgrade_guard before VERSION   # Copier's migration, before `copier update` merges
    python -m median_lambda.project.upgrade_guard after VERSION    # ... and after it

`copier update` merges the template's changes into the files the user also changed, three ways,
and that works for a line changed on both sides: it leaves both between conflict markers. It
loses, without a word, what a three-way merge of text cannot hold: a file the user changed that
the new version deletes or renames (Copier deletes it), and a binary file both sides changed
(Copier takes the template's). So copier.yml runs this on every update, whichever command runs
it (`make upgrade`, a bare `copier update`, an older version's `make upgrade`):

- before: the project's version is rendered afresh, as Copier renders the merge's base: from the
  project's source (.copier-answers.yml's _src_path), with its answers (the median-lambda source
  its files were rendered with among them) and the template's tasks (never its lock). Every file
  of that render the project holds otherwise is one the user changed. Each is kept, as the user
  left it, under .git/median-upgrade/.
- after: the new version is rendered the same way. A file the user changed that is now gone, or
  is now the new version's own byte for byte (the user's edit not in it), is put back as the user
  left it, named, and the upgrade stops (exit 1): the user carries the edit over, then checks and
  commits. A file the old version had and the new one has not, which Copier leaves because the
  new version's folders exclude it (a 2.x project's docs/ and CHANGELOG.md), is deleted where the
  user never changed it, and named where they did. Then what a version asks of the user's own
  files is done for them (migrations.py). When any of this fails, the whole upgrade is undone:
  every file is back as the user's last commit has it (the answers file too, so the project is
  not recorded as on a version it did not take), and what failed is said. After a clean upgrade,
  only the new version's list of files is left under .git/median-upgrade/ (`make upgrade` reads
  it, to tell the template's files from the user's, then deletes it).

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

from median_lambda.project import migrations

ROOT = Path.cwd()  # the project's: Copier runs its migrations in the project's root
ANSWERS_FILE = ".copier-answers.yml"
# What is the user's, whatever a template version renders there.
USERS_OWN = ("tools/", "tests/tools/", "uv.lock", ANSWERS_FILE)
# Set while a version is rendered for comparison: the template's lock task does nothing then.
RENDER_ONLY_ENV = "MEDIAN_RENDER_ONLY"
KEPT_DIRECTORY = "median-upgrade"
# The new version's files, as `make upgrade` reads them after the merge (upgrade.py).
RENDERED_RECORD = "after.json"


class RenderFailed(Exception):
    """A version of the template could not be rendered to compare with; str() says what Copier said."""


def _git(root: Path, *arguments: str) -> str:
    return subprocess.run(  # noqa: S603 - git, with arguments of our own
        ["git", *arguments],  # noqa: S607 - the user's git, as Copier runs it
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def kept_directory(root: Path = ROOT) -> Path:
    return Path(_git(root, "rev-parse", "--absolute-git-dir").strip()) / KEPT_DIRECTORY


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


def recorded_answers(root: Path) -> dict[str, Any]:
    """.copier-answers.yml, whole: Copier's own keys (_src_path, _commit) and the answers."""
    import yaml  # Copier's own dependency: this runs in Copier's interpreter

    return yaml.safe_load((root / ANSWERS_FILE).read_text(encoding="utf-8")) or {}


def render(version: str, root: Path, destination: Path) -> dict[str, str]:
    """The template at `version`, as Copier renders the merge's base and the new version: from the project's
    source, with its answers, its tasks run (its lock not, and what they print kept out of the upgrade's
    output); the digest of each file of the template's, by its path."""
    recorded = recorded_answers(root)
    answers = {name: value for name, value in recorded.items() if not str(name).startswith("_")}
    with tempfile.TemporaryDirectory(prefix="median-upgrade-answers-") as folder:
        data_file = Path(folder) / "answers.json"  # JSON is YAML, which --data-file reads
        data_file.write_text(json.dumps(answers), encoding="utf-8")
        command = [sys.executable, "-m", "copier", "copy", "--trust", "--defaults", "--quiet"]
        command += ["--vcs-ref", version, "--data-file", str(data_file), str(recorded["_src_path"]), str(destination)]
        # Copier runs its tasks in the environment its process started with (its plumbum's copy, taken at import),
        # never in one changed later in that process: the switch reaches them only from a Copier process of its own.
        rendered = subprocess.run(  # noqa: S603 - this interpreter's Copier, on the project's own template
            command,
            env={**os.environ, RENDER_ONLY_ENV: "1"},
            capture_output=True,
            text=True,
            check=False,
        )
    if rendered.returncode != 0:
        said = (rendered.stderr.strip() or rendered.stdout.strip()).splitlines()[-15:]
        raise RenderFailed(f"the template's {version} could not be rendered to compare with:\n" + "\n".join(said))
    return {name: digest for name, digest in file_digests(destination).items() if not _is_users(name)}


def before(version_from: str, root: Path = ROOT) -> list[str]:
    """Keep every file of the template's the user changed, as they left it; their paths."""
    kept = kept_directory(root)
    shutil.rmtree(kept, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="median-upgrade-") as scratch:
        rendered = render(version_from, root, Path(scratch) / "project")
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


def after(version_to: str, root: Path = ROOT) -> tuple[list[str], list[str], list[str]]:
    """Put back what the upgrade lost of the user's; delete what the old version left that the user never
    changed. Returns (lost and put back, left behind and kept as the user changed it, deleted)."""
    kept = kept_directory(root)
    recorded = json.loads((kept / "before.json").read_text(encoding="utf-8"))
    old: dict[str, str] = recorded["rendered"]
    changed: list[str] = recorded["changed"]
    with tempfile.TemporaryDirectory(prefix="median-upgrade-") as scratch:
        new = render(version_to, root, Path(scratch) / "project")
    (kept / RENDERED_RECORD).write_text(
        json.dumps({"version": version_to, "rendered": new}, indent=1), encoding="utf-8"
    )
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


def undo(root: Path = ROOT) -> tuple[str, list[str]]:
    """The upgrade undone: every file of the project back as the last commit has it (Copier merges into a clean
    project only, so that is the project as the upgrade found it), and nothing outside its folder touched (a
    project may be one folder of a larger repository, which Copier lets be dirty). Returns the commit, and the
    files of the template's the user had changed that the upgrade had altered, now back."""
    kept = kept_directory(root)
    try:
        changed: list[str] = json.loads((kept / "before.json").read_text(encoding="utf-8"))["changed"]
    except (OSError, ValueError, KeyError):
        changed = []
    altered = [
        name
        for name in changed
        if not (root / name).is_file() or _digest(root / name) != _digest(kept / "yours" / name)
    ]
    _git(root, "reset", "--quiet", "HEAD", "--", ".")
    _git(root, "checkout", "--", ".")
    _git(root, "clean", "--quiet", "--force", "-d", "--", ".")
    shutil.rmtree(kept, ignore_errors=True)
    return _git(root, "rev-parse", "--short", "HEAD").strip(), altered


def _listed(names: list[str]) -> str:
    return "\n".join(f"  {name}" for name in names)


def _before(version: str) -> int:
    try:
        changed = before(version)
    except (RenderFailed, subprocess.CalledProcessError, OSError) as failed:
        print(f"upgrade: stopped before the merge, which changed nothing: {failed}", file=sys.stderr)
        return 1
    if changed:
        print(f"upgrade: your changes to the template's files, kept until the upgrade ends:\n{_listed(changed)}")
    return 0


def _after(version: str) -> int:
    try:
        lost, left_behind, deleted = after(version)
        migrated = migrations.migrate(ROOT)
    # Whatever failed (a render, a file that would not write, a migration's own mistake), the project must not
    # be left half upgraded and recorded as on the new version: it goes back to the user's last commit.
    except Exception as failed:
        was = _was_on()
        commit, put_back = undo()
        named = f"\nYour changes to these files of the template's are back as you left them:\n{_listed(put_back)}"
        print(
            f"upgrade: stopped after the merge, which is undone: {type(failed).__name__}: {failed}\n"
            f"Every file is back as your last commit ({commit}) has it, and .copier-answers.yml still names {was}."
            f"{named if put_back else ''}\nFix what is said above, then upgrade again.",
            file=sys.stderr,
        )
        return 1
    for line in migrated:
        print(f"upgrade: {line}")
    if deleted:
        print(f"upgrade: deleted what the previous version left and you never changed:\n{_listed(deleted)}")
    if left_behind:
        print(
            "upgrade: this version no longer has these files, which you changed: kept as you left them; carry your "
            f"change over to where it lives now, then delete each:\n{_listed(left_behind)}"
        )
    kept = kept_directory()
    if lost:
        print(
            "upgrade: stopped. These files of yours would have been lost: the new version deletes or renames "
            "them, or replaced them without a merge (a binary file both sides changed). Each is back as you left "
            f"it:\n{_listed(lost)}\nThe new version's own, where it has one, is under {kept / 'theirs'}. Carry your "
            "change over to where it lives now (and delete the file if the new version has no use for it), then "
            "`make lock`, `make lint test check`, and commit.",
            file=sys.stderr,
        )
        return 1
    # Nothing lost: what was kept of the user's is no longer needed; the new version's list of files stays for
    # `make upgrade`, which deletes it once read.
    shutil.rmtree(kept / "yours", ignore_errors=True)
    (kept / "before.json").unlink(missing_ok=True)
    return 0


def _was_on() -> str:
    try:
        return str(json.loads((kept_directory() / "before.json").read_text(encoding="utf-8"))["version"])
    except (OSError, ValueError, KeyError, subprocess.CalledProcessError):
        return "the version it was on"


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("before", "after"):
        print("usage: python -m median_lambda.project.upgrade_guard before|after VERSION", file=sys.stderr)
        return 2
    step, version = argv
    return _before(version) if step == "before" else _after(version)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
