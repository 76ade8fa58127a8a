"""The locks: uv.lock, the project's, and tooling/*.py.lock, each developer tool's own (the SAM CLI, ...).

    python -m scripts.lock uv-requirement                 # uv==X --hash=..., for pip to install uv itself
    python -m scripts.lock artifact-requirements          # the Lambda artifact's packages, pinned and hashed
    python -m scripts.lock tooling [PACKAGE ...|all]      # lock each tooling/NAME.py, upgrading PACKAGE
    python -m scripts.lock tool-requirements NAME         # a tool's venv, pinned and hashed
    python -m scripts.lock check                          # exit 1, naming `make lock`, if a lock is stale

uv-requirement runs on the bare Python that makes the venv (standard library only): uv comes
from the lock like everything else, its version and hashes included. The rest run uv, the one
beside this interpreter (the dev venv's, from the lock group).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "uv.lock"
FIX = "run `make lock` and commit uv.lock"
TOOLING_FIX = "run `make lock` and commit tooling/"
# What the artifact holds: the project's dependencies, and tracing without botocore (and what only
# it brings), which is the Lambda runtime's own (pyproject.toml, aws-sdk).
ARTIFACT_EXPORT = ("--no-default-groups", "--group", "tracing", "--prune", "botocore")
# What the Lambda runtime itself provides, and the artifact therefore leaves out: boto3 and what it brings.
RUNTIME_EXPORT = ("--only-group", "aws-sdk")
# A developer tool that is not the project's dependency gets a venv of its own, from its own lock:
# tooling/NAME.py declares what the venv holds (PEP 723 inline metadata), tooling/NAME.py.lock pins
# it all with hashes (`uv lock --script`), so uv locks, checks and audits it as it does uv.lock.
TOOLING = ROOT / "tooling"


class LockError(Exception):
    """uv.lock cannot answer: stale, unreadable, or uv failed."""


def uv_executable() -> str:
    beside = Path(sys.executable).with_name("uv")
    return str(beside) if beside.is_file() else "uv"


def _uv(*arguments: str, project: Path | None = ROOT) -> subprocess.CompletedProcess[str]:
    # UV_PYTHON_DOWNLOADS=never: uv uses the interpreters here and never fetches one of its own; the
    # venv's own Python is the Lambda runtime's, which a `python3.13` on PATH (a pyenv shim) may not be.
    environment = {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "NO_COLOR": "1", "UV_PYTHON": sys.executable}
    return subprocess.run(  # noqa: S603 - uv, with arguments of our own
        [uv_executable(), *arguments, *(["--project", str(project)] if project else [])],
        capture_output=True,
        text=True,
        check=False,
        env=environment,
    )


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
    result = _uv("lock", "--check", "--offline", "--quiet", project=project)
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
    upgrades = ["--upgrade"] if upgrade == ["all"] else [f"--upgrade-package={name}" for name in upgrade]
    for script in tooling_scripts(directory):
        result = _uv("lock", "--quiet", "--script", str(script), *upgrades, project=None)
        if result.returncode != 0:
            raise LockError(f"uv lock --script tooling/{script.name} failed: {result.stderr.strip()}")


def stale_tooling_problems(directory: Path = TOOLING) -> list[str]:
    """One line for each tooling/NAME.py whose lock is missing or no longer matches it, naming `make lock`."""
    problems = []
    for script in tooling_scripts(directory):
        shown = f"{directory.name}/{script.name}.lock"
        if not script.with_name(f"{script.name}.lock").is_file():
            problems.append(f"{shown} is missing: {TOOLING_FIX}")
        elif _uv("lock", "--check", "--offline", "--quiet", "--script", str(script), project=None).returncode != 0:
            problems.append(f"{shown} does not match {directory.name}/{script.name}: {TOOLING_FIX}")
    return problems


def tool_requirements(name: str, directory: Path = TOOLING) -> str:
    """A tool's venv as a requirements file: exact versions and hashes, from tooling/NAME.py.lock."""
    options = ["--frozen", "--format", "requirements.txt", "--no-header", "--no-annotate"]
    result = _uv("export", "--script", str(directory / f"{name}.py"), *options, project=None)
    if result.returncode != 0:
        raise LockError(f"uv export --script tooling/{name}.py failed: {result.stderr.strip()}")
    return result.stdout


def artifact_requirements(
    *, hashes: bool = True, project: Path = ROOT, export: tuple[str, ...] = ARTIFACT_EXPORT
) -> str:
    """The artifact's packages (or what `export` selects) as a requirements file: exact versions, hashes,
    environment markers."""
    options = ["--frozen", "--format", "requirements.txt", "--no-header", "--no-annotate", *export]
    result = _uv("export", *options, *([] if hashes else ["--no-hashes"]), project=project)
    if result.returncode != 0:
        raise LockError(f"uv export failed: {result.stderr.strip()}")
    return result.stdout


def lambda_environment(machine: str) -> dict[str, str]:
    """PEP 508 marker values of the Lambda runtime (Linux, CPython 3.13) on `machine`."""
    return {
        "implementation_name": "cpython",
        "os_name": "posix",
        "platform_machine": machine,
        "platform_python_implementation": "CPython",
        "platform_system": "Linux",
        "python_full_version": "3.13.0",
        "python_version": "3.13",
        "sys_platform": "linux",
    }


def locked_artifact_versions(
    machine: str, project: Path = ROOT, export: tuple[str, ...] = ARTIFACT_EXPORT
) -> dict[str, str]:
    """Normalised name -> version of every package the lock puts into an artifact for `machine` (or, with
    `export=RUNTIME_EXPORT`, of every package the Lambda runtime provides beside it)."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    environment = lambda_environment(machine)
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


def main(argv: list[str]) -> int:
    command = argv[0] if argv else ""
    try:
        if command == "uv-requirement":
            print(uv_requirement())
        elif command == "artifact-requirements":
            print(artifact_requirements(), end="")
        elif command == "tooling":
            lock_tooling(argv[1:])
        elif command == "tool-requirements" and len(argv) == 2:
            print(tool_requirements(argv[1]), end="")
        elif command == "check":
            problems = [problem for problem in [stale_lock_problem(), *stale_tooling_problems()] if problem]
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
