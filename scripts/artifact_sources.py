"""What the build copies into the Lambda artifact: chosen by what belongs there, never by what is left out.

    python -m scripts.artifact_sources ARTIFACTS_DIR handler tools

The Makefile's build-MedianToolsFunction target (what `sam build` runs) copies the two packages
with this. A file goes into the artifact only when it is one of:

- a Python module: `<identifier>.py`, in a folder of identifiers (a package the function can import);
- a data file the framework reads: `tools/settings.toml`, the settings of every stage, and the
  scaffold's templates (`handler/cli/templates/*.template`);
- a data file of your tools' own that pyproject.toml names, `[tool.median.artifact] include`
  (`include = ["tools/data/*.json"]`).

An include pattern is a glob from the project's root, as pathlib's `full_match` reads one (the
shell's, with `**`): `*` and `?` match within one folder's name, `**` any number of folders, none
included (`tools/data/**/*.json` is every JSON file under tools/data/, at any depth), and a pattern
that names a folder (`tools/data`) ships every file under it. It names files under tools/: one
that does not (`handler/...`, `../secrets/*`, `/etc/*`) stops the build, and so does one that
matches nothing here, or matches only local files, which never ship: the file a tool reads would
otherwise be missing only once deployed.

Everything else stays behind, whatever its name: `settings.local.toml`, and with it an editor's
backup or swap file of it (`settings.local.toml~`, `.settings.local.toml.swp`, `#...#`, `.bak`),
which a rule that excluded the one name let through to S3 and Lambda. A local file never ships,
even if an `include` pattern names it, and the build says so when one does. The build names each
file of `tools/` it leaves behind, so a data file a tool needs is not lost without a word;
`scripts/check_artifact.py` holds a built artifact to the same rules.
"""

from __future__ import annotations

import fnmatch
import shutil
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("handler", "tools")
# The data files the framework itself reads, relative to the project.
FRAMEWORK_DATA = ("tools/settings.toml", "handler/cli/templates/*.template")
# A machine's own, an editor's leftovers, or a key: never in the artifact, whatever a rule says.
# `settings.local*` is your machine's configuration (docs/configuration.md); the rest are what
# vim, emacs, nano and merge tools leave beside a file, and the dev server's key.
LOCAL_NAMES = (
    "*.local.*",
    "*.local",
    "settings.local*",
    ".*",  # dotfiles: vim's .x.swp, emacs's .#x lock, .env, .median-dev-key
    "*~",
    "#*#",
    "*.swp",
    "*.swo",
    "*.swx",
    "*.bak",
    "*.orig",
    "*.rej",
    "*.tmp",
    "env.json",
)
INCLUDE_SETTING = "[tool.median.artifact] include"


def is_local(relative: PurePosixPath) -> bool:
    """Whether a path (relative to the project or the artifact) names a machine's or an editor's file."""
    return any(fnmatch.fnmatchcase(part, pattern) for part in relative.parts for pattern in LOCAL_NAMES)


def is_module(relative: PurePosixPath) -> bool:
    """A Python module the function can import: identifiers all the way down, ending in `.py`."""
    *folders, name = relative.parts
    return name.endswith(".py") and name.removesuffix(".py").isidentifier() and all(f.isidentifier() for f in folders)


def included_patterns(root: Path = ROOT) -> tuple[str, ...]:
    """The data files pyproject.toml asks the build to ship, as glob patterns relative to the project."""
    path = root / "pyproject.toml"
    if not path.is_file():
        return ()
    document = tomllib.loads(path.read_text(encoding="utf-8"))
    patterns = document.get("tool", {}).get("median", {}).get("artifact", {}).get("include", [])
    if not isinstance(patterns, list) or not all(isinstance(pattern, str) for pattern in patterns):
        raise SystemExit(f'pyproject.toml {INCLUDE_SETTING} must be a list of patterns, like ["tools/data/*.json"]')
    return tuple(patterns)


def matches(relative: PurePosixPath, pattern: str) -> bool:
    """Whether an include pattern names this file: the file itself, or a folder it is in."""
    glob = pattern.rstrip("/")
    return any(candidate.full_match(glob) for candidate in (relative, *list(relative.parents)[:-1]))


def belongs(relative: PurePosixPath, included: tuple[str, ...] = ()) -> bool:
    """Whether a file of handler/ or tools/ goes into the artifact (see the module's docstring)."""
    if is_local(relative) or "__pycache__" in relative.parts:
        return False
    text = relative.as_posix()
    return (
        is_module(relative)
        or any(fnmatch.fnmatchcase(text, pattern) for pattern in FRAMEWORK_DATA)
        or any(matches(relative, pattern) for pattern in included)
    )


def pattern_problem(pattern: str, packages: tuple[str, ...]) -> str | None:
    """Why an include pattern can name no file the build copies (your tools' own); None when it can."""
    yours = [package for package in packages if package != "handler"] or ["tools"]
    parts = PurePosixPath(pattern).parts
    if not pattern.strip():
        return "is empty"
    if pattern.startswith("/") or ".." in parts:
        return f"leads out of the project's {'/, '.join(yours)}/: name files under it, from the project's root"
    if not parts or parts[0] not in yours:
        return (
            f"names no file under {'/, '.join(yours)}/: the build ships your tools' data files from there, "
            f'written from the project\'s root ("{yours[0]}/data/*.json")'
        )
    return None


@dataclass
class Copied:
    """What the build did with the packages: a line for each thing said, and what stops the build."""

    said: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def copy_packages(artifact: Path, packages: tuple[str, ...] = PACKAGES, root: Path = ROOT) -> Copied:
    """Copy what belongs of each package into `artifact`; say each file of tools/ left behind, not local,
    and each include pattern that ships nothing or names a local file."""
    copied = Copied()
    problems = {pattern: pattern_problem(pattern, packages) for pattern in included_patterns(root)}
    for pattern, problem in problems.items():
        if problem is not None:
            copied.refused.append(f'pyproject.toml {INCLUDE_SETTING} "{pattern}" {problem}')
    # A pattern refused is not applied: `**/*.json` would ship the framework's files, or a neighbour's.
    included = tuple(pattern for pattern, problem in problems.items() if problem is None)
    shipped: dict[str, int] = dict.fromkeys(included, 0)
    local: dict[str, list[str]] = {pattern: [] for pattern in included}
    for package in packages:
        for path in sorted((root / package).rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            relative = PurePosixPath(path.relative_to(root).as_posix())
            named_by = [pattern for pattern in included if matches(relative, pattern)]
            if belongs(relative, included):
                target = artifact / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
                for pattern in named_by:
                    shipped[pattern] += 1
            elif is_local(relative):
                for pattern in named_by:
                    local[pattern].append(relative.as_posix())
            elif package != "handler":
                # A local file is left behind by design, and said nowhere; another may be a tool's data.
                copied.said.append(
                    f"left behind {relative}: not a Python module or settings.toml; name it in pyproject.toml's "
                    f"{INCLUDE_SETTING} if a tool reads it"
                )
    for pattern in included:
        where = f'pyproject.toml {INCLUDE_SETTING} "{pattern}"'
        leaves = (
            f"{', '.join(local[pattern])}, which the build leaves behind: a machine's or an editor's file never ships"
        )
        if shipped[pattern] == 0 and local[pattern]:
            copied.refused.append(f"{where} ships nothing: it matches only {leaves}")
        elif shipped[pattern] == 0:
            copied.refused.append(
                f"{where} matches no file: check its spelling and that the file is in the project "
                "(a glob from the project's root: * within a folder's name, ** any number of folders)"
            )
        elif local[pattern]:
            copied.said.append(f"{where} also matches {leaves}")
    return copied


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    artifact, *packages = argv
    # The packages of the project make runs in (sam build runs it in the project's folder).
    copied = copy_packages(Path(artifact), tuple(packages), Path.cwd())
    for line in copied.said:
        print(line)
    for line in copied.refused:
        print(line, file=sys.stderr)
    if copied.refused:
        print(
            f"The build stops: {len(copied.refused)} include pattern(s) ship nothing a tool could read.",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
