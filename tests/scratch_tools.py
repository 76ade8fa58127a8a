"""Tools that exist only while a test runs: they count their runs, wait, decline, crash and overrun.

The `scratch` fixture (tests/conftest.py) registers them in `scratch_registry`, which starts
empty and is put back after the test. For a whole endpoint's tool set (a process's, too), the
`sample_tools` fixture serves the package tests/sample_tools/.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from median_lambda import ToolContext, ToolError, tool
from pydantic import BaseModel, Field

# The tools packages a test can serve, by the name $MEDIAN_TOOLS_PACKAGE takes (median_lambda/authoring/registry.py).
SAMPLE_TOOLS = "tests.sample_tools"  # a full endpoint: every risk, every field type, diagnostics
EMPTY_TOOLS = "tests.empty_tools"  # no tool at all: what scratch_registry serves

# Long enough never to end a passing test, short enough that a broken one fails rather than hangs.
_LONGEST_WAIT_SECONDS = 10.0
_LOOK_EVERY_SECONDS = 0.01


def _until_released(release: threading.Event) -> bool:
    """Wait for the test's release in the tool's own code, as a tool overrunning its time does: not in
    `release.wait()`, which waits in threading's code, where a stop means another thread's work may be
    running on (tests/unit/test_work_left_running.py)."""
    ends = time.monotonic() + _LONGEST_WAIT_SECONDS
    while not release.is_set() and time.monotonic() < ends:
        time.sleep(_LOOK_EVERY_SECONDS)
    return release.is_set()


class NoteInput(BaseModel):
    note: str = Field(default="", description="Any text; echoed or quoted back.")


@dataclass
class ScratchTools:
    runs: Counter[str] = field(default_factory=Counter)
    started: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


def register_scratch_tools() -> ScratchTools:
    """Register the scratch tools in the registry the handler serves from; their shared state."""
    state = ScratchTools()

    @tool(risk="high", name="countRuns")
    def count_runs(args: NoteInput) -> dict[str, object]:
        """Count this tool's runs: a stand-in for a refund that must not happen twice."""
        state.runs["countRuns"] += 1
        return {"run": state.runs["countRuns"], "note": args.note}

    @tool(risk="low", name="countRunsFresh", idempotent=False)
    def count_runs_fresh(args: NoteInput) -> dict[str, object]:
        """Count this tool's runs; it opts out of idempotency, as a read-only lookup would."""
        state.runs["countRunsFresh"] += 1
        return {"run": state.runs["countRunsFresh"]}

    @tool(risk="low", name="declineWithRunCount")
    def decline(args: NoteInput) -> dict[str, object]:
        """Always decline, saying how many times it ran."""
        state.runs["declineWithRunCount"] += 1
        raise ToolError(f"Declined on run {state.runs['declineWithRunCount']}.")

    @tool(risk="low", name="declineFromACause")
    def decline_from_a_cause(args: NoteInput) -> dict[str, object]:
        """Decline with a ToolError raised from the exception behind it, whose message quotes the input."""
        state.runs["declineFromACause"] += 1
        try:
            return {"number": int(args.note)}
        except ValueError as error:
            raise ToolError("That note is no number.") from error

    @tool(risk="low", name="crashQuotingInput")
    def crash(args: NoteInput) -> dict[str, object]:
        """Crash with an exception whose message quotes the input, as careless code does."""
        state.runs["crashQuotingInput"] += 1
        raise ValueError(f"cannot handle note {args.note!r}")

    @tool(risk="low", name="waitForRelease")
    def wait_for_release(args: NoteInput) -> dict[str, object]:
        """Run until the test releases it."""
        state.runs["waitForRelease"] += 1
        state.started.set()
        return {"released": _until_released(state.release)}

    @tool(risk="low", name="swallowEveryException")
    def swallow(args: NoteInput) -> dict[str, object]:
        """Wait for the release, and hide any exception raised meanwhile, as over-defensive code does."""
        state.runs["swallowEveryException"] += 1
        try:
            _until_released(state.release)
        except Exception:
            return {"swallowed": True}
        return {"swallowed": False}

    @tool(risk="low", name="remainingTime")
    def remaining_time(args: NoteInput, ctx: ToolContext) -> dict[str, object]:
        """Say how many seconds the tool has left, and, a moment after, how many Lambda says the function has."""
        remaining = ctx.remaining_seconds()
        clock = getattr(ctx.lambda_context, "get_remaining_time_in_millis", None)
        return {"remaining": remaining, "lambdaRemaining": None if clock is None else clock() / 1000}

    return state
