"""What the build copies into the Lambda artifact: chosen by what belongs there, never by what is left out.

`median build-artifact` (what `sam build` runs; median_lambda.build.artifact) copies with this the
project's two packages, handler/ (the entry point) and tools/, and the runtime part of median-lambda
itself: every module of the library but its developer's parts (DEVELOPER_PARTS), which never run on
Lambda. A file of the project goes into the artifact only when it is one of:

- a Python module: `<identifier>.py`, in a folder of identifiers (a package the function can import);
- a data file the framework reads: `tools/settings.toml`, the settings of every stage;
- a data file of your tools' own that pyproject.toml names, `[tool.median.artifact] include`
  (`include = ["tools/data/*.json"]`).

Everything else stays behind, whatever its name: `settings.local.toml`, and with it an editor's
backup or swap file of it (`settings.local.toml~`, `.settings.local.toml.swp`, `#...#`, `.bak`),
which a rule that excluded the one name let through to S3 and Lambda. A local file never ships,
even if an `include` pattern names it. The build names each file of `tools/` it leaves behind, so a
data file a tool needs is not lost without a word; `median check-artifact` (median_lambda.build.check)
holds a built artifact to the same rules.
"""

from __future__ import annotations

import fnmatch
import shutil
import sys
import tomllib
from pathlib import Path, PurePosixPath

ROOT = Path.cwd()  # the project's: every command runs in its root, as make runs them
PACKAGES = ("handler", "tools")
# The library's parts that run only on a developer's machine or in CI: the testing kit and the
# contract suite, the dev server and its inspector, the CLI and what it drives. The artifact holds
# the rest of median_lambda/, the runtime, and `median build-artifact` refuses one of these there.
DEVELOPER_PARTS = ("testing", "contract", "devserver", "cli", "build", "project", "rules.py", "__main__.py")
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


def belongs(relative: PurePosixPath, included: tuple[str, ...] = ()) -> bool:
    """Whether a file of handler/ or tools/ goes into the artifact (see the module's docstring)."""
    if is_local(relative) or "__pycache__" in relative.parts:
        return False
    text = relative.as_posix()
    patterns = (*FRAMEWORK_DATA, *included)
    return is_module(relative) or any(fnmatch.fnmatchcase(text, pattern) for pattern in patterns)


def copy_packages(artifact: Path, packages: tuple[str, ...] = PACKAGES, root: Path = ROOT) -> list[str]:
    """Copy what belongs of each package into `artifact`; a line for each file of tools/ left behind, not local."""
    included = included_patterns(root)
    said = []
    for package in packages:
        for path in sorted((root / package).rglob("*")):
            if not path.is_file():
                continue
            relative = PurePosixPath(path.relative_to(root).as_posix())
            if belongs(relative, included):
                target = artifact / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
            elif package != "handler" and not is_local(relative) and "__pycache__" not in relative.parts:
                # A local file is left behind by design, and said nowhere; another may be a tool's data.
                said.append(
                    f"left behind {relative}: not a Python module or settings.toml; name it in pyproject.toml's "
                    f"{INCLUDE_SETTING} if a tool reads it"
                )
    return said


def copy_library_runtime(artifact: Path) -> None:
    """Copy median_lambda's runtime modules, from where this venv has it, into `artifact`/median_lambda."""
    import median_lambda

    library = Path(median_lambda.__file__).resolve().parent
    for path in sorted(library.rglob("*.py")):
        relative = PurePosixPath(path.relative_to(library).as_posix())
        if relative.parts[0] in DEVELOPER_PARTS or not is_module(relative):
            continue
        target = artifact / "median_lambda" / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)


def copy_sources(artifact: Path, root: Path = ROOT) -> list[str]:
    """The project's packages and the library's runtime into `artifact`; a line for each file of tools/ left behind."""
    said = copy_packages(artifact, PACKAGES, root)
    copy_library_runtime(artifact)
    return said


def main(argv: list[str]) -> int:
    """copy_sources into argv's one folder, from the project in the working directory, saying what it left behind."""
    if len(argv) != 1:
        print("usage: main([ARTIFACTS_DIR])", file=sys.stderr)
        return 2
    for line in copy_sources(Path(argv[0]), Path.cwd()):
        print(line)
    return 0
