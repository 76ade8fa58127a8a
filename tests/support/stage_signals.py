"""What one stage's function writes to its log and metrics, in a new process with the environment
template.yaml gives that stage's function: the tests that hold alarms, dashboards and saved queries
to one stack's data read it.

Powertools reads POWERTOOLS_SERVICE_NAME and POWERTOOLS_METRICS_NAMESPACE once per container, so
each stage's signals come from a fresh Python process, as each stage's Lambda containers are. It
serves what every alarm and graph of the handler's own metrics watches: a tool that crashes, one
that outlasts the time left, a ToolError raised from a cause, and a forged signature.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from median_lambda.protocol import TOOL_TIME_MARGIN_SECONDS, TOOLS_PACKAGE_ENV

from tests.scratch_tools import EMPTY_TOOLS

if TYPE_CHECKING:
    from collections.abc import Mapping

_STAGE_SCRIPT = f"""
from median_lambda.authoring.registry import load_tools
from median_lambda.testing import FakeLambdaContext, MedianTestClient, call_body, signed_event
from tests.scratch_tools import register_scratch_tools

load_tools()
tools = register_scratch_tools()
client = MedianTestClient()
client.call("crashQuotingInput", {{"note": "x"}})
client.send(
    signed_event("POST", call_body("waitForRelease", {{}})),
    FakeLambdaContext(timeout_seconds={TOOL_TIME_MARGIN_SECONDS} + 0.2),
)
tools.release.set()
client.call("declineFromACause", {{"note": "x"}})
client.send(signed_event("POST", call_body("crashQuotingInput", {{}}), key="mk_not_the_key"))
"""
_PROJECT_ROOT = Path(__file__).resolve().parents[2]


def function_signals_environment(variables: Mapping[str, Any]) -> dict[str, str]:
    """The function's Powertools variables, as the translated template resolves them for its stack."""
    return {name: value for name, value in variables.items() if name.startswith("POWERTOOLS_")}


def stage_output(signals_environment: Mapping[str, str]) -> list[dict[str, Any]]:
    """The JSON lines (log records and EMF documents) a stage's function writes serving the calls above."""
    return [json.loads(line) for line in _output(tuple(sorted(signals_environment.items())))]


@functools.cache
def _output(signals_environment: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    inherited = {name: value for name, value in os.environ.items() if not name.startswith("POWERTOOLS_")}
    finished = subprocess.run(  # noqa: S603 - our own interpreter, our own script
        [sys.executable, "-c", _STAGE_SCRIPT],
        env={**inherited, **dict(signals_environment), TOOLS_PACKAGE_ENV: EMPTY_TOOLS},
        cwd=_PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return tuple(line for line in finished.stdout.splitlines() if line.startswith("{"))


def emf_documents(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [document for document in lines if "_aws" in document]
