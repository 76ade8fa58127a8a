"""Audit every locked version against known vulnerabilities: `median audit` (make audit), and GitHub's Checks.

uv's own audit reads each lock itself: uv.lock, every group at the versions the venvs and the
artifact install, and each developer tool's own (tooling/NAME.py.lock: the SAM CLI's venv, ...). It asks OSV's
database (https://osv.dev) by default; --service-url names another OSV-compatible server.

Exit 0: no known vulnerability. Exit 1: a finding, printed by uv with the package, its version,
the advisory and the version that fixes it. Exit 2: nothing was audited, because no advisory
data could be reached (one line says so) or uv failed.
"""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

from median_lambda.project.lock import ROOT, tooling_scripts, uv_environment, uv_executable

if TYPE_CHECKING:
    from pathlib import Path

DEFAULT_SERVICE = "https://api.osv.dev"
# `uv audit` is a preview command in the locked uv: naming the feature accepts that and quiets
# the warning. The output this relies on (tests/unit/test_audit.py) is checked at every uv bump.
PREVIEW = ("--preview-features", "audit-command")
# How uv reports a request that got no usable answer: DNS, refused, timeout, TLS, or a server error.
UNREACHABLE = ("error sending request", "Request failed after", "HTTP status server error")
FINDINGS_EXIT = 1


def audit_command(service_url: str | None, script: Path | None = None) -> list[str]:
    """uv's audit of uv.lock, or with `script` of that tool's own lock (tooling/NAME.py.lock)."""
    command = [uv_executable(), "audit", "--frozen", *PREVIEW]
    command += ["--script", str(script)] if script else ["--project", str(ROOT)]
    return command + (["--service-url", service_url] if service_url else [])


def audit(service_url: str | None = None) -> int:
    """Audit uv.lock, then each tool's lock: the exit code the module's docstring gives, uv's findings printed."""
    found = []
    for script in [None, *tooling_scripts()]:
        result = subprocess.run(  # noqa: S603 - uv, with arguments of our own
            audit_command(service_url, script), capture_output=True, text=True, check=False, env=uv_environment()
        )
        if result.returncode not in (0, FINDINGS_EXIT) and any(sign in result.stderr for sign in UNREACHABLE):
            service = service_url or DEFAULT_SERVICE
            # uv's innermost cause says why (name resolution, refused, 503): the one detail worth keeping.
            reason = result.stderr.strip().splitlines()[-1].strip().removeprefix("cause: ").removeprefix("error: ")
            print(
                f"audit: no advisory data reachable from here ({service}: {reason}), so nothing was audited; "
                "GitHub's Checks workflow audits uv.lock and tooling/ on every pull request.",
                file=sys.stderr,
            )
            return 2
        lock = f"tooling/{script.name}.lock" if script else "uv.lock"
        if result.returncode == FINDINGS_EXIT:
            print(f"{lock}:")
            found.append(lock)
        sys.stdout.write(result.stdout)
        sys.stderr.write(result.stderr)
        if result.returncode not in (0, FINDINGS_EXIT):
            return 2
    if found:
        print(
            f"audit: {' and '.join(found)} {'hold' if len(found) > 1 else 'holds'} a version with a known "
            "vulnerability (above: package, version, "
            "advisory, fixed version). `make lock UPGRADE=<package>` moves it to the newest version its "
            "pyproject.toml or tooling/ file allows (raise the range there if the fix is outside it), then commit "
            "the lock.",
            file=sys.stderr,
        )
        return 1
    return 0
