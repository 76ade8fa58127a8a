"""A new container: the handler laid out as `sam build` lays it out, answering in a fresh Python process.

The tests that hold a cold start to what it must not import, and the bench that times one, run the
handler this way, as the Lambda runtime does in a new container.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from median_lambda.build.sources import copy_library_runtime
from median_lambda.protocol import PREBUILT_MANIFEST_FILE, PREBUILT_STAGES_FILE, PREBUILT_TOOL_MODULES_FILE
from median_lambda.runtime.env import tools_package
from median_lambda.testing import TestAnswer, answer_of

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


def fresh_python(code: str, env: Mapping[str, str]) -> list[str]:
    """The output lines of a fresh Python running `code` from the repository's root, with `env` over this process's
    environment: what a new container chooses at import, made anew."""
    result = subprocess.run(  # noqa: S603 - our own interpreter, our own code
        [sys.executable, "-c", code],
        env={**os.environ, **env},
        cwd=Path(__file__).parents[2],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return result.stdout.splitlines()


# What the Lambda runtime does in a new container: import the handler, answer one event. It
# reports the modules that took, so a test can hold a path to what it must not import.
# MEDIAN_COLD_PREIMPORT names modules to import first (the benchmark weighs ideas with it).
_COLD_START_SCRIPT = """
import json, os, sys, time

class Context:
    function_name = "median-tools"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:median-tools"
    aws_request_id = "cold-start-request"
    _deadline = time.monotonic() + 30
    def get_remaining_time_in_millis(self):
        return int((self._deadline - time.monotonic()) * 1000)

event = json.loads(sys.stdin.read())
for name in filter(None, os.environ.get("MEDIAN_COLD_PREIMPORT", "").split(",")):
    __import__(name)
from median_lambda.app import lambda_handler
response = lambda_handler(event, Context())
# On a line of its own and last: the handler's log lines and metrics share stdout, as on Lambda.
sys.stdout.write("\\n" + json.dumps({"response": response, "modules": sorted(sys.modules)}) + "\\n")
"""
_PROJECT_ROOT = Path(__file__).resolve().parents[2]
# What the build writes beside median_lambda/app.py, each by a command of `median` (median build-artifact).
_BUILT_FILES = {
    "manifest": PREBUILT_MANIFEST_FILE,
    "stages": PREBUILT_STAGES_FILE,
    "tool-modules": PREBUILT_TOOL_MODULES_FILE,
}


@dataclass(frozen=True)
class ColdStart:
    response: dict[str, Any]  # as lambda_handler returned it
    modules: frozenset[str]  # every module the process had imported by then
    seconds: float  # the whole process, Python's start included
    output: str = ""  # what it printed before its report: the handler's log lines and metrics, as on Lambda

    @property
    def answer(self) -> TestAnswer:
        return answer_of(self.response)


def lay_out_artifact(directory: Path, *, prebuilt_manifest: bool = True) -> Path:
    """handler/, median-lambda's runtime and the tools package copied to `directory` as `sam build` lays
    them out, with the manifest, the stages and the tools' modules the build writes (`median manifest`,
    `median stages`, `median tool-modules`) when `prebuilt_manifest`.

    The tools package is the one served here: `tools`, or the one $MEDIAN_TOOLS_PACKAGE names,
    copied to the same import path (give `cold_start` the same variable to serve it).
    """
    ignore = shutil.ignore_patterns("__pycache__", *_BUILT_FILES.values())
    package = tools_package()
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(f"{package} is not a package that can be imported from here")
    shutil.copytree(_PROJECT_ROOT / "handler", directory / "handler", ignore=ignore)
    copy_library_runtime(directory)
    shutil.copytree(spec.submodule_search_locations[0], directory.joinpath(*package.split(".")), ignore=ignore)
    if prebuilt_manifest:
        for command, written in _BUILT_FILES.items():
            printed = subprocess.run(  # noqa: S603 - this interpreter, the handler's own CLI, a fixed command
                [sys.executable, "-m", "median_lambda", command], cwd=_PROJECT_ROOT, check=True, capture_output=True
            )
            (directory / "median_lambda" / written).write_bytes(printed.stdout)
    return directory


def cold_start(
    event: dict[str, Any],
    artifact: Path,
    env: Mapping[str, str],
    *,
    python: str = sys.executable,
    preimport: Sequence[str] = (),
) -> ColdStart:
    """Answer `event` in a new Python process that imports the handler from `artifact`, as a new
    Lambda container would, with exactly `env` for its environment."""
    child_env = {**env, "PYTHONPATH": str(artifact), "MEDIAN_COLD_PREIMPORT": ",".join(preimport)}
    stdin = json.dumps(event).encode("utf-8")
    started = time.perf_counter()
    # A Python the caller chose, running the script above: no untrusted input. In the artifact's
    # directory, as Lambda runs in /var/task: `-c` puts the working directory first on sys.path.
    finished = subprocess.run(  # noqa: S603
        [python, "-c", _COLD_START_SCRIPT],
        input=stdin,
        env=child_env,
        cwd=artifact,
        capture_output=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if finished.returncode != 0:
        raise RuntimeError(f"the cold process failed:\n{finished.stderr.decode('utf-8', errors='replace')}")
    # The report is the last line: log lines and metrics come before it.
    printed, _, last = finished.stdout.decode("utf-8").rstrip("\n").rpartition("\n")
    report = json.loads(last)
    return ColdStart(report["response"], frozenset(report["modules"]), seconds, printed)
