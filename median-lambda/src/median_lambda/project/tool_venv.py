"""A developer tool's venv of its own, exactly as median-lambda's lock of it pins it: `median tool-venv NAME`.

The SAM CLI, Checkov, the workflows' linters and Copier each pin what they need (boto3, cfn-lint,
pydantic, ...) apart from the project's dependencies and from one another, so each gets a venv of
its own beside the one `median` runs in (.venv/sam-cli, .venv/checkov, ...): `make test` stays
light, and no tool's pins change what the tests run on. What each holds is median-lambda's
tooling/NAME.py.lock, every file's hash checked: each version of the library drives the tools it
was tested with. The commands that drive a tool make its venv first, and make it again whenever
the lock it was made from is not the one this median-lambda carries (after an upgrade, say).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from median_lambda.project.lock import TOOLING, LockError, tool_requirements, uv

# The tools the project's commands drive, by the name of their lock, and what each is for.
SAM_CLI, CHECKOV, WORKFLOW_LINT, COPIER = "sam-cli", "checkov", "workflow-lint", "copier"
TOOLS = {
    SAM_CLI: "the SAM CLI and cfn-lint's serverless rules (build, validate, local, deploy, delete)",
    CHECKOV: "Checkov (validate)",
    WORKFLOW_LINT: "check-jsonschema and zizmor (lint-workflows)",
    COPIER: "Copier (upgrade)",
}
# What a venv records of the lock and the Python it was made from: the same both, nothing to do.
STAMP_FILE = ".installed"


class ToolVenvError(Exception):
    """A tool's venv could not be made; the message says which and why."""


def venv_path(name: str) -> Path:
    """Where the tool's venv lives: beside what this venv holds, inside it (.venv/sam-cli for .venv)."""
    return Path(sys.prefix) / name


def _stamp(name: str) -> str:
    lock = TOOLING / f"{name}.py.lock"
    try:
        digest = hashlib.sha256(lock.read_bytes()).hexdigest()
    except OSError as error:
        raise ToolVenvError(f"median-lambda has no lock for {name}: {error.strerror}") from None
    return f"{lock.name} sha256:{digest}\npython {sys.version_info.major}.{sys.version_info.minor}\n"


def installed(name: str) -> Path:
    """The tool's venv, made (or made again) from its lock if it is missing or from another lock; its path."""
    if name not in TOOLS:
        raise ToolVenvError(f"no tool named {name!r}: median tool-venv makes {', '.join(TOOLS)}")
    path = venv_path(name)
    stamp = _stamp(name)
    recorded = path / STAMP_FILE
    if recorded.is_file() and recorded.read_text(encoding="utf-8") == stamp:
        return path
    print(f"Installing {name} in {_shown(path)}, as median-lambda's tooling/{name}.py.lock pins it", file=sys.stderr)
    try:
        requirements = tool_requirements(name)
    except LockError as error:
        raise ToolVenvError(str(error)) from None
    import venv  # only here: every command that never makes a venv is spared its imports

    shutil.rmtree(path, ignore_errors=True)
    # The Python this venv was made from, the Lambda runtime's; uv brings every package, pip included if asked.
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(path)
    pinned = path / "requirements.txt"
    pinned.write_text(requirements, encoding="utf-8")
    python = path / "bin" / "python"
    synced = uv("pip", "sync", "--quiet", "--python", str(python), "--require-hashes", str(pinned), project=None)
    if synced.returncode != 0:
        raise ToolVenvError(f"installing {name} in {_shown(path)} failed: {synced.stderr.strip()}")
    recorded.write_text(stamp, encoding="utf-8")
    return path


def executable(name: str, program: str) -> str:
    """The path of `program` in the tool's venv, made first if need be."""
    return str(installed(name) / "bin" / program)


def run(name: str, program: str, *arguments: str, env: dict[str, str] | None = None) -> int:
    """Run `program` from the tool's venv with `arguments`, in the working directory; its exit code."""
    command = [executable(name, program), *arguments]
    return subprocess.run(command, check=False, env={**os.environ, **(env or {})}).returncode  # noqa: S603


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
