"""`median test-tools` (make test-tools): the inner loop while writing a tool, your tools' tests alone.

`make test` runs everything, the contract suite included; this runs tests/tools/ in seconds. With
no tool tests yet ("Make it yours" deletes the examples' tests), it says so and succeeds.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

TOOL_TESTS = Path("tests") / "tools"


def command_test_tools(arguments: argparse.Namespace) -> int:
    """Run only your tools' tests, tests/tools/ (seconds; make test runs everything)."""
    if not any(TOOL_TESTS.rglob("test_*.py")):
        print(
            f"No tool tests yet: {TOOL_TESTS}/ holds no test_*.py. "
            "make new-tool NAME=loyalty_points writes a tool and its tests."
        )
        return 0
    command = [sys.executable, "-m", "pytest", str(TOOL_TESTS)]
    print(" ".join(command), flush=True)
    return subprocess.run(command, check=False).returncode  # noqa: S603 - this venv's pytest
