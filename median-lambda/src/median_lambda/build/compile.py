"""Precompile the artifact's Python files, when the build runs on the function's own Python.

Lambda's /var/task is read-only, so a module without a .pyc there is compiled again at
every cold start: for pydantic and Powertools that is ~150-250 ms (bench/README.md,
"Bytecode"). Bytecode is specific to a Python version, so only a build running the
runtime's version (e.g. `sam build --use-container`) can make it; elsewhere the artifact
ships source only, and this says so. Hash-based .pyc files stay valid whatever the files'
timestamps become in the zip. `median build-artifact` (median_lambda.build.artifact) runs it.
"""

from __future__ import annotations

import compileall
import py_compile
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def precompile(artifact: Path | str, runtime_version: str) -> bool:
    """Write the artifact's bytecode if this is the runtime's Python (else say why not); False if a module failed."""
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    if here != runtime_version:
        print(
            f"Not precompiling: this build runs Python {here}, the function runs {runtime_version}; "
            "the artifact ships source only (build with `sam build --use-container` for .pyc files).",
        )
        return True
    return bool(
        compileall.compile_dir(
            artifact, quiet=1, workers=0, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
        )
    )


def main(argv: list[str]) -> int:
    """precompile(ARTIFACTS_DIR, RUNTIME_VERSION) as an exit code: 2 for other arguments."""
    if len(argv) != 2:
        print("usage: main([ARTIFACTS_DIR, RUNTIME_VERSION])", file=sys.stderr)
        return 2
    return 0 if precompile(*argv) else 1
