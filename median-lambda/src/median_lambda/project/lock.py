"""The locks: uv.lock, the project's, and tooling/*.py.lock, median-lambda's own of each developer tool it drives.

A project's `median lock [--upgrade PACKAGE|all]` (make lock) re-locks uv.lock and `median lock
--check` (make lint) names `make lock` when uv.lock no longer matches pyproject.toml. The build
installs the artifact's packages from the lock (artifact_requirements), and `median tool-venv`
each tool's venv from its own (tool_requirements). The template repository's maintainers lock
and check the library's tooling/ with this module itself (maintainer.mk):

    python -m median_lambda.project.lock tooling [PACKAGE ...|all]      # lock each tooling/NAME.py, upgrading PACKAGE
    python -m median_lambda.project.lock check-tooling                  # exit 1, naming `make lock`, if one is stale
    python -m median_lambda.project.lock tool-requirements NAME         # a tool's requirements, pinned and hashed
    python -m median_lambda.project.lock check                          # as `median lock --check`
    python -m median_lambda.project.lock library                        # the median-lambda uv.lock pins, one line

Each runs uv, the one beside this interpreter (the dev venv's, which the project's lock pins).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

ROOT = Path.cwd()  # the project's: every command runs in its root, as make runs them
LOCK = ROOT / "uv.lock"
FIX = "run `make lock` and commit uv.lock"
TOOLING_FIX = "run `make lock` and commit tooling/"
# What the artifact holds: the project's dependencies (median-lambda[tracing] among them) without
# botocore (and what only it brings), which is the Lambda runtime's own; and without median-lambda
# itself, whose runtime part the build copies (median_lambda/build/sources.py): never its testing
# kit, CLI or dev server.
ARTIFACT_EXPORT = ("--no-default-groups", "--no-emit-package", "median-lambda", "--prune", "botocore")
# What the Lambda runtime itself provides, and the artifact therefore leaves out: boto3 and what it
# brings, as uv.lock locks them (runtime_packages).
RUNTIME_ROOT = "boto3"
# A developer tool that is not the project's dependency gets a venv of its own, from its own lock:
# tooling/NAME.py declares what the venv holds (PEP 723 inline metadata), tooling/NAME.py.lock pins
# it all with hashes (`uv lock --script`), so uv locks, checks and audits it as it does uv.lock.
# They are the library's: each version of median-lambda drives the tools it was tested with.
TOOLING = Path(__file__).resolve().parent / "tooling"
_RELEASE = re.compile(r"^v(\d+\.\d+\.\d+)$")
_DESCRIBED = re.compile(r"(?:^|-g)([0-9a-f]{7,40})$")


LIBRARY = "median-lambda"
# uv.lock's kinds of source for a package that is a folder of the project (a workspace member, a path).
FOLDER_SOURCES = ("editable", "directory", "path", "virtual")


class LockError(Exception):
    """uv.lock cannot answer: stale, unreadable, or uv failed."""


@dataclass(frozen=True)
class LockedLibrary:
    """median-lambda as uv.lock pins it: its version, and where it comes from (the lock's `source` table:
    `registry`, a package index; `git`, a repository's commit; `editable`, `directory` or `path`, a folder)."""

    version: str
    source: dict[str, str]

    @property
    def kind(self) -> str:
        return next(iter(self.source), "")

    @property
    def origin(self) -> str:
        """Where it comes from, as a person reads it: the index, the repository and commit, or the folder."""
        where = self.source.get(self.kind, "")
        if self.kind == "git":
            url, _, commit = where.partition("#")
            return f"{url.split('?')[0]} at commit {commit[:12]}"
        if self.kind == "registry":
            return f"the index {where}"
        return f"the folder {where}"

    def __str__(self) -> str:
        # A folder's version is its own to say (the lock records none for a dynamic one): read once installed.
        return f"{LIBRARY} {self.version or "(its folder's version)"} from {self.origin}"


def locked_library(lock: Path = LOCK) -> LockedLibrary:
    """The median-lambda uv.lock pins (LockError where it pins none, or several)."""
    try:
        packages = tomllib.loads(lock.read_text(encoding="utf-8")).get("package", [])
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise LockError(f"{lock.name} cannot be read ({error}): {FIX}") from None
    entries = [package for package in packages if package.get("name") == LIBRARY]
    if len(entries) != 1:
        raise LockError(f"{lock.name} pins {len(entries)} versions of {LIBRARY}, not one: {FIX}")
    return LockedLibrary(str(entries[0].get("version", "")), dict(entries[0].get("source", {})))


def locked_library_requirement(project: Path = ROOT) -> str:
    """median-lambda as a requirements file gives it to an installer, exactly as uv.lock pins it: a folder's
    path; or uv's own export of the lock's line, an index's `==` with every hash the lock records, or a git commit."""
    library = locked_library(project / "uv.lock")
    if library.kind in FOLDER_SOURCES:
        return f"{(project / library.source[library.kind]).resolve()}\n"
    exported = artifact_requirements(project=project, export=("--no-default-groups", "--no-editable"))
    requirements = exported.replace("\\\n", " ").splitlines()
    found = [line for line in requirements if line.startswith((f"{LIBRARY}==", f"{LIBRARY} @ "))]
    if len(found) != 1:
        raise LockError(f"uv export gave no single line for {LIBRARY} from {project / 'uv.lock'}: {FIX}")
    return f"{found[0]}\n"


def install_locked_library(target: Path, project: Path = ROOT) -> LockedLibrary:
    """Install the median-lambda uv.lock pins, alone, into the folder `target`, as the build ships it: from
    the index with the lock's hashes checked, from the locked commit, or built from the locked folder anew."""
    library = locked_library(project / "uv.lock")
    target.mkdir(parents=True, exist_ok=True)
    requirements = target.parent / f"{target.name}-requirements.txt"
    requirements.write_text(locked_library_requirement(project), encoding="utf-8")
    options = []
    if library.kind == "registry":
        # The index the lock took it from (a company's, say), not whichever this machine would ask.
        index = library.source["registry"]
        options += ["--require-hashes", "--index-url", index] if "://" in index else ["--find-links", index]
    if library.kind in FOLDER_SOURCES:
        # uv keys a folder's built wheel on its pyproject.toml, not its modules: built anew, never a stale one.
        options += ["--refresh-package", LIBRARY]
    installed = uv(
        "pip", "install", "--quiet", "--python", sys.executable, "--target", str(target), "--no-deps",
        *options, "--requirement", str(requirements), project=None,
    )  # fmt: skip
    requirements.unlink()
    if installed.returncode != 0:
        raise LockError(f"installing {library} as uv.lock pins it failed: {installed.stderr.strip()}")
    metadata = sorted(target.glob(f"{LIBRARY.replace('-', '_')}-*.dist-info"))
    version = metadata[0].name.removesuffix(".dist-info").partition("-")[2] if metadata else library.version
    return LockedLibrary(version, library.source)


def uv_executable() -> str:
    beside = Path(sys.executable).with_name("uv")
    return str(beside) if beside.is_file() else "uv"


def uv_environment() -> dict[str, str]:
    """This process's environment, for uv: UV_PYTHON_DOWNLOADS=never, so uv uses the interpreters here and never
    fetches one of its own; UV_PYTHON, this venv's, the Lambda runtime's (a `python3.13` shim on PATH may not be)."""
    return {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "NO_COLOR": "1", "UV_PYTHON": sys.executable}


def uv(*arguments: str, project: Path | None = ROOT, capture: bool = True) -> subprocess.CompletedProcess[str]:
    """Run uv on `project` (None: on no project); its output captured, or with `capture=False` shown as it comes."""
    return subprocess.run(  # noqa: S603 - uv, with arguments of our own
        [uv_executable(), *arguments, *(["--project", str(project)] if project else [])],
        capture_output=capture,
        text=True,
        check=False,
        env=uv_environment(),
    )


def lock(upgrade: list[str], project: Path = ROOT) -> None:
    """`uv lock`: uv.lock made to match pyproject.toml, moving only the packages named (`all`: every one)."""
    upgrades = ["--upgrade"] if "all" in upgrade else [f"--upgrade-package={name}" for name in upgrade]
    if uv("lock", *upgrades, project=project, capture=False).returncode != 0:
        raise LockError("uv lock failed (above): uv.lock is unchanged")


def uv_requirement(lock: Path = LOCK) -> str:
    """A pip requirement for the locked uv, with every hash the lock records for it."""
    packages = tomllib.loads(lock.read_text(encoding="utf-8")).get("package", [])
    entries = [package for package in packages if package.get("name") == "uv"]
    if len(entries) != 1:
        raise LockError(f"{lock.name} holds {len(entries)} versions of uv, not one: {FIX}")
    entry = entries[0]
    files = [entry["sdist"], *entry.get("wheels", [])] if "sdist" in entry else entry.get("wheels", [])
    hashes = " ".join(f"--hash={file['hash']}" for file in files)
    return f"uv=={entry['version']} {hashes}"


def stale_lock_problem(project: Path = ROOT) -> str | None:
    """None if uv.lock matches pyproject.toml; otherwise what is wrong and the command that fixes it."""
    result = uv("lock", "--check", "--offline", "--quiet", project=project)
    if result.returncode == 0:
        return None
    lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
    cause = lines[0].removeprefix("error: ") if lines else f"uv lock --check exited {result.returncode}"
    # Offline, a requirement the lock lacks shows as one uv cannot resolve: the lock is behind either way.
    if any(sign in cause for sign in ("needs to be updated", "Unable to find lockfile", "No solution found")):
        return f"uv.lock does not match pyproject.toml: {FIX}"
    return f"uv.lock could not be checked against pyproject.toml ({cause}): {FIX}"


def _git_pin(url: str) -> tuple[str, str]:
    """A locked git source's ref as pyproject.toml named it (`tag v3.0.0`, `rev <hash>`), and the commit uv locked."""
    parts = urlsplit(url)
    named = dict(parse_qsl(parts.query))
    kind = next((kind for kind in ("tag", "rev", "branch") if kind in named), "")
    return f"{kind} {named[kind]}" if kind else "", parts.fragment


def _as_locked(version: str, source: dict[str, str]) -> str:
    if "git" in source:
        ref, commit = _git_pin(source["git"])
        return f"{version} (git {ref + ', ' if ref else ''}commit {commit[:12]})"
    return f"{version} ({', '.join(f'{kind} {place}' for kind, place in source.items())})"


def library_disagreement(project: Path = ROOT) -> str | None:
    """None where uv.lock pins the median-lambda of the template version .copier-answers.yml records (its _commit:
    a release tag, or `git describe` of the commit copied); otherwise both, and what to do. The two are released
    together: template files of one version beside another version's library are a project no one tested. A
    checkout with no answers (the template repository itself) has nothing to agree with."""
    answers = project / ".copier-answers.yml"
    lock = project / LOCK.name
    if not answers.is_file() or not lock.is_file():
        return None
    found = re.search(r"(?m)^_commit:\s*['\"]?([^'\"\s]+)", answers.read_text(encoding="utf-8"))
    if found is None:
        return None
    recorded = found[1]
    locked = locked_library(lock)
    version, source = locked.version, locked.source
    release = _RELEASE.match(recorded)
    # A commit no release tag names, as `git describe` gives it: `v3.0.0-4-gabc1234`, or `abc1234` in a template
    # with no tags. Another tag's name says nothing this can check offline.
    described = _DESCRIBED.search(recorded)
    if release is None and described is None:
        return None
    if "git" in source:
        ref, commit = _git_pin(source["git"])
        if ref == f"tag {recorded}" if release else described and commit.startswith(described[1]):
            return None
    elif "registry" in source and release and version == release[1]:
        return None
    return (
        f"uv.lock pins median-lambda {_as_locked(version, source)}, but this project's template files are "
        f"{recorded} (.copier-answers.yml's _commit): the two are released together and must agree. Run `make "
        f"lock`: it locks {recorded}'s median-lambda where pyproject.toml names it as the template writes it (its "
        "median-lambda source, or from a package index its constraint-dependencies); if pyproject.toml names "
        "another, put the template's line back first. To move both to a later version: `make upgrade`."
    )


def tooling_scripts(directory: Path = TOOLING) -> list[Path]:
    """Each developer tool's declaration, tooling/NAME.py."""
    return sorted(directory.glob("*.py"))


def lock_tooling(upgrade: list[str], directory: Path = TOOLING) -> None:
    """Each tooling/NAME.py locked into NAME.py.lock, keeping its pins but for the packages upgraded."""
    upgrades = ["--upgrade"] if "all" in upgrade else [f"--upgrade-package={name}" for name in upgrade]
    for script in tooling_scripts(directory):
        result = uv("lock", "--quiet", "--script", str(script), *upgrades, project=None)
        if result.returncode != 0:
            raise LockError(f"uv lock --script tooling/{script.name} failed: {result.stderr.strip()}")


def stale_tooling_problems(directory: Path = TOOLING) -> list[str]:
    """One line for each tooling/NAME.py whose lock is missing or no longer matches it, naming `make lock`."""
    problems = []
    for script in tooling_scripts(directory):
        shown = f"{directory.name}/{script.name}.lock"
        if not script.with_name(f"{script.name}.lock").is_file():
            problems.append(f"{shown} is missing: {TOOLING_FIX}")
        elif uv("lock", "--check", "--offline", "--quiet", "--script", str(script), project=None).returncode != 0:
            problems.append(f"{shown} does not match {directory.name}/{script.name}: {TOOLING_FIX}")
    return problems


def tool_requirements(name: str, directory: Path = TOOLING) -> str:
    """A tool's venv as a requirements file: exact versions and hashes, from tooling/NAME.py.lock."""
    options = ["--frozen", "--format", "requirements.txt", "--no-header", "--no-annotate"]
    result = uv("export", "--script", str(directory / f"{name}.py"), *options, project=None)
    if result.returncode != 0:
        raise LockError(f"uv export --script tooling/{name}.py failed: {result.stderr.strip()}")
    return result.stdout


def artifact_requirements(
    *, hashes: bool = True, project: Path = ROOT, export: tuple[str, ...] = ARTIFACT_EXPORT
) -> str:
    """The artifact's packages (or what `export` selects) as a requirements file: exact versions, hashes,
    environment markers."""
    options = ["--frozen", "--format", "requirements.txt", "--no-header", "--no-annotate", *export]
    result = uv("export", *options, *([] if hashes else ["--no-hashes"]), project=project)
    if result.returncode != 0:
        raise LockError(f"uv export failed: {result.stderr.strip()}")
    return result.stdout


def lambda_environment(machine: str, python: str) -> dict[str, str]:
    """PEP 508 marker values of the Lambda runtime (Linux, CPython `python`, "3.13") on `machine`."""
    return {
        "implementation_name": "cpython",
        "os_name": "posix",
        "platform_machine": machine,
        "platform_python_implementation": "CPython",
        "platform_system": "Linux",
        "python_full_version": f"{python}.0",
        "python_version": python,
        "sys_platform": "linux",
    }


def locked_artifact_versions(
    machine: str, python: str, project: Path = ROOT, export: tuple[str, ...] = ARTIFACT_EXPORT
) -> dict[str, str]:
    """Normalised name -> version of every package the lock puts into an artifact for `machine` and the runtime's
    `python` (or what another `export` selects)."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    environment = lambda_environment(machine, python)
    versions: dict[str, str] = {}
    for line in artifact_requirements(hashes=False, project=project, export=export).splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        requirement = Requirement(line)
        if requirement.marker is not None and not requirement.marker.evaluate(environment):
            continue
        pins = [spec.version for spec in requirement.specifier if spec.operator == "=="]
        if len(pins) != 1:
            raise LockError(f"uv export gave {line!r}, not one exact version")
        versions[canonicalize_name(requirement.name)] = pins[0]
    return versions


def runtime_packages(lock: Path = LOCK) -> set[str]:
    """Normalised names of the packages the Lambda runtime provides beside the artifact: boto3 and every package
    it brings, as uv.lock locks them (a project's lock holds boto3 through median-lambda's dev extra)."""
    from packaging.utils import canonicalize_name

    packages = tomllib.loads(lock.read_text(encoding="utf-8")).get("package", [])
    brings = {
        canonicalize_name(package["name"]): [
            canonicalize_name(needed["name"]) for needed in package.get("dependencies", [])
        ]
        for package in packages
    }
    found: set[str] = set()
    waiting = [canonicalize_name(RUNTIME_ROOT)]
    while waiting:
        name = waiting.pop()
        if name not in found and name in brings:
            found.add(name)
            waiting.extend(brings[name])
    return found


def main(argv: list[str]) -> int:
    command = argv[0] if argv else ""
    arguments = argv[1:]
    # --directory DIR: tools declared elsewhere than the library's own tooling/ (the maintainers' mutmut).
    directory = TOOLING
    if arguments[:1] == ["--directory"] and len(arguments) >= 2:
        directory, arguments = Path(arguments[1]), arguments[2:]
    try:
        if command == "uv-requirement":
            print(uv_requirement())
        elif command == "artifact-requirements":
            print(artifact_requirements(), end="")
        elif command == "library":
            print(locked_library())
        elif command == "tooling":
            lock_tooling(arguments, directory)
        elif command == "tool-requirements" and len(arguments) == 1:
            print(tool_requirements(arguments[0], directory), end="")
        elif command in ("check", "check-tooling"):
            # check-tooling: the locks of the tools declared in `directory`, in the template repository.
            checked = [stale_lock_problem(), library_disagreement()] if command == "check" else []
            problems = [problem for problem in checked if problem]
            problems += stale_tooling_problems(directory) if command == "check-tooling" else []
            if problems:
                print("\n".join(problems), file=sys.stderr)
                return 1
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except LockError as error:
        print(error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
