"""What the build copies into the Lambda artifact: chosen by what belongs there, never by what is left out.

`median build-artifact` (what `sam build` runs; median_lambda.build.artifact) copies with this the
project's two packages, handler/ (the entry point) and tools/, and the runtime part of median-lambda
itself: every module of the library but its developer's parts (DEVELOPER_PARTS), which never run on
Lambda. A file of the project goes into the artifact only when it is one of:

- a Python module: `<identifier>.py`, in a folder of identifiers (a package the function can import);
- a data file the framework reads: `tools/settings.toml`, the settings of every stage;
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
`median check-artifact` (median_lambda.build.check) holds a built artifact to the same rules.
"""

from __future__ import annotations

import fnmatch
import shutil
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

ROOT = Path.cwd()  # the project's: every command runs in its root, as make runs them
PACKAGES = ("handler", "tools")
# The library's parts that run only on a developer's machine or in CI: the testing kit and the
# contract suite, the dev server and its inspector, the CLI and what it drives. The artifact holds
# the rest of median_lambda/, the runtime, and `median build-artifact` refuses one of these there.
DEVELOPER_PARTS = (
    "testing",
    "contract",
    "devserver",
    "cli",
    "build",
    "project",
    "rules.py",
    "__main__.py",
)
# The data files the framework itself reads, relative to the project.
FRAMEWORK_DATA = ("tools/settings.toml",)
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


def package_files(root: Path, package: str) -> tuple[list[tuple[Path, PurePosixPath]], list[str]]:
    """Every file of a package folder, as (its path, its name relative to `root`), following links to folders as
    Python's import does; and a line for each link the build cannot follow (to nothing, or to a folder holding it).

    pathlib's `rglob` walks past a linked folder (a package shared by several projects, `tools/carrier ->
    ../../shared/carrier`): the function would advertise its tools (the import follows the link) and fail
    each call. Caches are skipped.
    """
    files: list[tuple[Path, PurePosixPath]] = []
    unfollowed: list[str] = []

    def walk(folder: Path, shown: PurePosixPath, within: tuple[Path, ...]) -> None:
        for path in sorted(folder.iterdir()):
            name = shown / path.name
            if path.name == "__pycache__":
                continue
            if path.is_symlink() and not path.exists():
                unfollowed.append(
                    f"{name} is a link to {path.readlink()}, which does not exist: the build cannot copy it"
                )
            elif path.is_dir():
                real = path.resolve()
                if real in within:
                    unfollowed.append(
                        f"{name} is a link to {path.readlink()}, a folder that holds it: the build cannot copy a "
                        "folder into itself"
                    )
                else:
                    walk(path, name, (*within, real))
            elif path.is_file():
                files.append((path, name))

    start = root / package
    if start.is_dir():
        walk(start, PurePosixPath(package), (start.resolve(),))
    return files, unfollowed


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

    def stop(self) -> str:
        """The line that ends the list of what stops the build."""
        return f"The build stops: {len(self.refused)} problem(s) with what tools/ would ship, each named above."


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
        files, unfollowed = package_files(root, package)
        copied.refused += unfollowed
        linked = sorted({folder for _, relative in files for folder in _linked_folders(root, relative)})
        copied.said += [f"copied {folder}/ from where it links, {(root / folder).readlink()}" for folder in linked]
        for path, relative in files:
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


def _linked_folders(root: Path, relative: PurePosixPath) -> list[str]:
    """The folders on a file's way down from the project that are links: the build names each it follows."""
    return [parent.as_posix() for parent in list(relative.parents)[:-1] if (root / parent).is_symlink()]


def running_library() -> Path:
    """The folder that holds the median_lambda this process runs (a venv's site-packages, or the library's src/)."""
    import median_lambda

    return Path(median_lambda.__file__).resolve().parent.parent


def library_modules(library: Path, *, runtime: bool = True) -> dict[PurePosixPath, Path]:
    """median_lambda's modules in a folder that holds it, by their names in the package: its runtime's (what the
    artifact ships) or, `runtime=False`, all of them."""
    package = library / "median_lambda"
    modules = {}
    for path in sorted(package.rglob("*.py")):
        relative = PurePosixPath(path.relative_to(package).as_posix())
        if is_module(relative) and not (runtime and relative.parts[0] in DEVELOPER_PARTS):
            modules[relative] = path
    return modules


def library_differences(ours: Path, locked: Path, *, runtime: bool = True) -> list[str]:
    """Each module of median_lambda that is not byte for byte the same in the two folders holding it, said."""
    mine, theirs = library_modules(ours, runtime=runtime), library_modules(locked, runtime=runtime)
    differences = [f"{name} differs" for name in sorted(mine.keys() & theirs.keys())
                   if mine[name].read_bytes() != theirs[name].read_bytes()]  # fmt: skip
    differences += [f"{name} is not in the locked one" for name in sorted(mine.keys() - theirs.keys())]
    differences += [f"{name} is missing" for name in sorted(theirs.keys() - mine.keys())]
    return differences


def copy_library_runtime(artifact: Path, library: Path | None = None) -> None:
    """Copy median_lambda's runtime modules from the folder `library` that holds it (the one uv.lock pins, as the
    build installs it; this process's by default) into `artifact`/median_lambda."""
    for relative, path in library_modules(library or running_library()).items():
        target = artifact / "median_lambda" / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)


def copy_sources(artifact: Path, root: Path = ROOT, library: Path | None = None) -> Copied:
    """The project's packages and the library's runtime (from `library`, see copy_library_runtime) into
    `artifact`: what was said, and what stops the build."""
    copied = copy_packages(artifact, PACKAGES, root)
    copy_library_runtime(artifact, library)
    return copied


def main(argv: list[str]) -> int:
    """copy_sources into argv's one folder, from the project in the working directory, saying what it left behind."""
    if len(argv) != 1:
        print("usage: main([ARTIFACTS_DIR])", file=sys.stderr)
        return 2
    copied = copy_sources(Path(argv[0]), Path.cwd())
    for line in copied.said:
        print(line)
    for line in copied.refused:
        print(line, file=sys.stderr)
    if copied.refused:
        print(copied.stop(), file=sys.stderr)
        return 1
    return 0
