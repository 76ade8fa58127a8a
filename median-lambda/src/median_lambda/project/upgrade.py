"""`make upgrade`: take a later version of median-lambda and of the template's files, then check the project.

    median upgrade [VERSION] [--source SOURCE]     # VERSION: a tag such as v3.1.0; the newest by default

One command for both halves of a version, which are released together under one tag: the library
(pyproject.toml's median-lambda source, which the template renders, and uv.lock, locked anew) and
the template-managed files (`copier update`, a three-way merge that never touches tools/,
tests/tools/ or what you write between `# >>> yours` lines). Step by step:

1. It refuses a dirty tree, and says so and stops when the source has nothing newer than this
   project's version (its .copier-answers.yml).
2. `copier update` merges. Copier's migrations (copier.yml; median_lambda/project/upgrade_guard.py)
   keep each file of the template's you changed before the merge, and after it put back, name and
   stop at any the merge lost: a file the new version deletes or renames, a binary both sides
   changed. A change Copier could not merge is left between `<<<<<<< before updating` (yours) and
   `>>>>>>> after updating` (the template's): this names every such file and stops, resolving nothing.
3. uv.lock takes median-lambda at the new version, which pyproject.toml names (`uv lock --upgrade-package
   median-lambda`); `make lint` holds the two to agree from then on (median_lambda/project/lock.py).
4. `make lint`, `make test`, `make check` run. A failure is said with whose file it is: one of the
   template's files is the template's to fix, not yours.

SOURCE (or `make upgrade SOURCE=...`) takes the template and the library from another place than
the one the project was copied from: a fork's URL, or a local checkout's path. The project then
keeps it (.copier-answers.yml's _src_path; pyproject.toml's median-lambda source and the README's
links, which the merge takes from the new version as from any other change of the template's).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from median_lambda.project.upgrade_guard import RENDERED_RECORD, kept_directory

ROOT = Path.cwd()  # the project's: every command runs in its root, as make runs them
ANSWERS = ROOT / ".copier-answers.yml"
COPIER = ROOT / ".venv" / "copier" / "bin" / "copier"
# What `copier update --conflict inline` writes around a change it could not merge.
CONFLICT_MARKER = re.compile(r"^(<<<<<<< before updating|>>>>>>> after updating)$", re.MULTILINE)
RELEASE_TAG = re.compile(r"^v(\d+)\.(\d+)\.(\d+)$")
# A file and line as ruff, mypy and pytest print them.
_PLACE = re.compile(r"(?m)(?:^|[\s(])(?P<path>[\w./-]+\.(?:py|ya?ml|toml|json|md)):\d+")


class UpgradeStopped(Exception):
    """The upgrade cannot go on; str() says why and what to do."""


def _git(root: Path, *arguments: str) -> str:
    command = ["git", *arguments]
    return subprocess.run(command, cwd=root, capture_output=True, text=True, check=True).stdout  # noqa: S603


def _answer(root: Path, key: str) -> str | None:
    answers = root / ANSWERS.name
    if not answers.is_file():
        raise UpgradeStopped(
            "This checkout has no .copier-answers.yml, so no template to upgrade from: it is the template itself, "
            "or a project made before the template was a Copier template (the template's upgrading guide says how "
            "to adopt one)."
        )
    found = re.search(rf"^{re.escape(key)}:\s*(\S+)\s*$", answers.read_text(encoding="utf-8"), re.MULTILINE)
    return found[1].strip("'\"") if found else None


def answered_version(root: Path = ROOT) -> str:
    """The version this project was made from or last upgraded to (.copier-answers.yml's _commit)."""
    return _answer(root, "_commit") or "an unknown version"


def answered_source(root: Path = ROOT) -> str:
    """Where the project was copied from (.copier-answers.yml's _src_path)."""
    source = _answer(root, "_src_path")
    if source is None:
        raise UpgradeStopped(".copier-answers.yml names no _src_path: Copier cannot tell where the template is.")
    return source


def _release(tag: str) -> tuple[int, int, int] | None:
    found = RELEASE_TAG.match(tag)
    return (int(found[1]), int(found[2]), int(found[3])) if found else None


def _git_url(source: str) -> str:
    """A source as git reads it: Copier's gh: and gl: shorthands expanded, a local path as it is."""
    for short, host in (("gh:", "https://github.com/"), ("gl:", "https://gitlab.com/")):
        if source.startswith(short):
            return host + source.removeprefix(short)
    return source


def released_versions(source: str) -> list[str]:
    """The source's release tags, vX.Y.Z, oldest first."""
    listed = subprocess.run(  # noqa: S603 - git, reading the project's own template source
        ["git", "ls-remote", "--tags", "--refs", _git_url(source)],  # noqa: S607
        capture_output=True,
        text=True,
        check=False,
    )
    if listed.returncode != 0:
        raise UpgradeStopped(f"The template's releases could not be read from {source}: {listed.stderr.strip()}")
    tags = [line.rsplit("refs/tags/", 1)[-1] for line in listed.stdout.splitlines() if "refs/tags/" in line]
    return sorted((tag for tag in tags if _release(tag)), key=lambda tag: _release(tag) or (0, 0, 0))


def target_version(current: str, asked: str | None, source: str) -> str | None:
    """The version to upgrade to: `asked`, else the source's newest release; None when it is no newer than `current`.

    `asked` may be any ref of the source (a branch, a commit: a maintainer's proof takes HEAD); a release
    tag it names must exist there.
    """
    if asked is not None and not RELEASE_TAG.match(asked):
        return asked
    releases = released_versions(source)
    if asked is not None:
        if asked not in releases:
            shown = ", ".join(releases[-5:]) or "none"
            raise UpgradeStopped(f"{source} has no release {asked} (its latest: {shown}).")
        return asked
    if not releases:
        raise UpgradeStopped(f"{source} has no release (a vX.Y.Z tag) to upgrade to.")
    now, newest = _release(current.split("-")[0]), _release(releases[-1])
    if now is not None and newest is not None and newest <= now:
        return None
    return releases[-1]


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


def source_as_kept(source: str) -> str:
    """`source` as the project keeps it: a local checkout's relative path made absolute, as uv reads the place
    again from the project's pyproject.toml, where a relative one means nothing ("relative URL without a base")."""
    if "://" not in source and Path(source).is_dir():
        return str(Path(source).resolve())
    return source


def use_source(source: str, root: Path = ROOT) -> None:
    """Make `source` the template's place in .copier-answers.yml, for this upgrade and the next ones."""
    answers = root / ANSWERS.name
    text = answers.read_text(encoding="utf-8")
    answers.write_text(re.sub(r"(?m)^_src_path:.*$", f"_src_path: {source}", text), encoding="utf-8")
    _git(root, "commit", "--quiet", "-m", f"The template's source for make upgrade: {source}", "--", ANSWERS.name)


def templates_files(root: Path = ROOT) -> set[str]:
    """The files the new version of the template rendered (the upgrade guard's record): the template's, not yours."""
    try:
        recorded = json.loads((kept_directory(root) / RENDERED_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError, subprocess.CalledProcessError):
        return set()
    return set(recorded.get("rendered", ()))


@dataclass(frozen=True)
class Named:
    """The files a check's output names, by whose they are."""

    templates: list[str]
    library: list[str]  # median-lambda's own, in the venv
    yours: list[str]


def whose(output: str, templates: set[str], root: Path = ROOT) -> Named:
    """The files a check's output names, told apart: the template's, median-lambda's own (in the venv, as a
    traceback names them; another installed package's is no one's here), and yours."""
    named = {found["path"].removeprefix("./").removeprefix(f"{root.as_posix()}/") for found in _PLACE.finditer(output)}
    installed = {path for path in named if path.startswith((".venv/", "/")) or "/site-packages/" in path}
    own = named - installed
    return Named(
        templates=sorted(own & templates),
        library=sorted(
            {"median_lambda/" + path.split("/median_lambda/", 1)[1] for path in installed if "/median_lambda/" in path}
        ),
        yours=sorted(own - templates),
    )


def _make(target: str, root: Path) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "MAKEFLAGS": ""}
    finished = subprocess.run(  # noqa: S603 - make, on the project's own targets
        ["make", "--no-print-directory", target],  # noqa: S607
        cwd=root,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    sys.stdout.write(finished.stdout)
    sys.stderr.write(finished.stderr)
    return finished


def _copier_update(version: str, root: Path) -> None:
    command = [str(COPIER), "update", "--trust", "--skip-answered", "--conflict", "inline", "--vcs-ref", version]
    # Without a terminal (CI), a question a later version adds takes its default.
    command += [] if sys.stdin.isatty() else ["--defaults"]
    if subprocess.run(command, cwd=root, check=False).returncode != 0:  # noqa: S603 - the pinned copier
        raise UpgradeStopped(
            "copier update stopped (above). If it names files of yours it put back, carry your change over, then "
            "`make lock`, `make lint test check`, and commit; `git diff` shows what it merged."
        )


def relock(root: Path) -> None:
    """median-lambda at the release the template's files came from, which pyproject.toml now names (a git tag, or
    from an index the version exactly), and nothing else moved."""
    uv = root / ".venv" / "bin" / "uv"
    command = [str(uv) if uv.is_file() else "uv", "lock", "--upgrade-package", "median-lambda"]
    environment = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
    if subprocess.run(command, cwd=root, env=environment, check=False).returncode != 0:  # noqa: S603
        raise UpgradeStopped("uv lock could not lock median-lambda's new version (above): fix that, then `make lock`.")


def run(version: str | None, source: str | None, root: Path = ROOT) -> int:
    before = answered_version(root)
    refuse_a_dirty_tree(root)
    if source is not None and source_as_kept(source) != answered_source(root):
        use_source(source_as_kept(source), root)
    source = answered_source(root)
    target = target_version(before, version, source)
    if target is None:
        print(f"upgrade: {before} is the newest version {source} has released: nothing to upgrade.")
        return 0
    print(f"upgrade: from {before} to {target}, from {source}", flush=True)
    _copier_update(target, root)
    # The guard's record of the new version's files, read once: nothing of yours is kept there after a clean merge.
    templates = templates_files(root)
    shutil.rmtree(kept_directory(root), ignore_errors=True)
    conflicts = conflicted_files(root)
    if conflicts:
        listed = "\n".join(f"  {path}" for path in conflicts)
        raise UpgradeStopped(
            f"copier update could not merge these files: each keeps both versions of what it could not merge,\n"
            f"yours under '<<<<<<< before updating' and the template's under '>>>>>>> after updating':\n{listed}\n"
            "Resolve each (or `git checkout -- . && git clean -fd` to drop the upgrade), then `make lock` and "
            "`make lint test check`. What each version asks of you is in its CHANGELOG."
        )
    after = answered_version(root)
    relock(root)
    print(f"upgrade: now on {after}; checking it: make lint test check", flush=True)
    for target_name in ("lint", "test", "check"):
        finished = _make(target_name, root)
        if finished.returncode == 0:
            continue
        named = whose(finished.stdout + finished.stderr, templates, root)
        said = [f"`make {target_name}` fails on {after} (above)."]
        not_yours = [*named.templates, *(f"{name} (median-lambda's, in .venv)" for name in named.library)]
        if not_yours:
            said.append(
                f"It names files of the template's or of median-lambda's, which you did not write: "
                f"{', '.join(not_yours)}. That is theirs to fix, not yours: report it, and stay on {before} "
                f"meanwhile (`git checkout -- . && git clean -fd`, or `make upgrade VERSION=...` for another release)."
            )
        if named.yours or not not_yours:
            said.append(
                f"{'It names files of yours: ' + ', '.join(named.yours) + '. ' if named.yours else ''}What each "
                f"version after {before} asks of your project is under 'What you must do' in the CHANGELOG: do it, "
                "then `make lint test check`, and commit."
            )
        raise UpgradeStopped("\n".join(said))
    print(f"upgrade: {before} -> {after}, merged and checked. Review `git diff`, then commit.")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="median upgrade", description=__doc__.split("\n\n")[0])
    parser.add_argument("version", nargs="?", help="the release to take, such as v3.1.0 (default: the newest)")
    parser.add_argument("--source", help="the template's place: a fork's URL or a local checkout's path")
    arguments = parser.parse_args([argument for argument in argv if argument])
    try:
        return run(arguments.version, arguments.source)
    except UpgradeStopped as stopped:
        print(f"upgrade: {stopped}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
