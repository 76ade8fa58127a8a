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

Each runs uv, the one beside this interpreter (the dev venv's, which the project's lock pins).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

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


class LockError(Exception):
    """uv.lock cannot answer: stale, unreadable, or uv failed."""


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
        elif command == "tooling":
            lock_tooling(arguments, directory)
        elif command == "tool-requirements" and len(arguments) == 1:
            print(tool_requirements(arguments[0], directory), end="")
        elif command in ("check", "check-tooling"):
            # check-tooling: the locks of the tools declared in `directory`, in the template repository.
            problems = [problem for problem in [stale_lock_problem()] if problem] if command == "check" else []
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
