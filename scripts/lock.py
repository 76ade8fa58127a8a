"""The lock, uv.lock: what the Makefile installs from it, and whether it still matches pyproject.toml.

    python -m scripts.lock uv-requirement                 # uv==X --hash=..., for pip to install uv itself
    python -m scripts.lock artifact-requirements          # the Lambda artifact's packages, pinned and hashed
    python -m scripts.lock check                          # exit 1, naming `make lock`, if uv.lock is stale

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
# What the artifact holds: the runtime group, and tracing without botocore (and what only it
# brings), which is the Lambda runtime's own (pyproject.toml, aws-sdk).
ARTIFACT_EXPORT = ("--only-group", "runtime", "--only-group", "tracing", "--prune", "botocore")


class LockError(Exception):
    """uv.lock cannot answer: stale, unreadable, or uv failed."""


def uv_executable() -> str:
    beside = Path(sys.executable).with_name("uv")
    return str(beside) if beside.is_file() else "uv"


def _uv(*arguments: str, project: Path = ROOT) -> subprocess.CompletedProcess[str]:
    # UV_PYTHON_DOWNLOADS=never: uv uses the interpreters here and never fetches one of its own.
    environment = {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "NO_COLOR": "1"}
    return subprocess.run(  # noqa: S603 - uv, with arguments of our own
        [uv_executable(), *arguments, "--project", str(project)],
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


def artifact_requirements(*, hashes: bool = True, project: Path = ROOT) -> str:
    """The artifact's packages as a requirements file: exact versions, hashes, environment markers."""
    options = ["--frozen", "--format", "requirements.txt", "--no-header", "--no-annotate", *ARTIFACT_EXPORT]
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


def locked_artifact_versions(machine: str, project: Path = ROOT) -> dict[str, str]:
    """Normalised name -> version of every package the lock puts into an artifact for `machine`."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    environment = lambda_environment(machine)
    versions: dict[str, str] = {}
    for line in artifact_requirements(hashes=False, project=project).splitlines():
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
        elif command == "check":
            problem = stale_lock_problem()
            if problem:
                print(problem, file=sys.stderr)
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
