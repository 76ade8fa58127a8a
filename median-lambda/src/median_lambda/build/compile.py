"""Precompile the artifact's Python files, when the build runs on the function's own Python.

Lambda's /var/task is read-only, so a module without a .pyc there is compiled again at
every cold start: for pydantic and Powertools that is ~150-250 ms (bench/README.md,
"Bytecode"). Bytecode is specific to a Python version, so only a build running the
runtime's version (e.g. `sam build --use-container`) can make it; elsewhere the artifact
ships source only, and this says so. Hash-based .pyc files stay valid whatever the files'
timestamps become in the zip.

    python -m median_lambda.build.compile ARTIFACTS_DIR 3.13
"""

from __future__ import annotations

import compileall
import py_compile
import sys


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    artifact, runtime_version = argv
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    if here != runtime_version:
        print(
            f"Not precompiling: this build runs Python {here}, the function runs {runtime_version}; "
            "the artifact ships source only (build with `sam build --use-container` for .pyc files).",
        )
        return 0
    compiled = compileall.compile_dir(
        artifact, quiet=1, workers=0, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
    )
    return 0 if compiled else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
