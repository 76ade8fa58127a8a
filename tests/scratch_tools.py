"""Tools that exist only while a test runs: they count their runs, wait, decline, crash and overrun.

They are added to the one registry the handler serves from and taken out again after the
test, so the example manifest that other tests GET never holds them.
"""

from __future__ import annotations

import threading
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from handler import ToolContext, ToolError, tool
from handler.app import manifest_answer
from handler.registry import load_tools, registry

if TYPE_CHECKING:
    from collections.abc import Iterator

# Long enough never to end a passing test, short enough that a broken one fails rather than hangs.
_LONGEST_WAIT_SECONDS = 10.0


class NoteInput(BaseModel):
    note: str = Field(default="", description="Any text; echoed or quoted back.")


@dataclass
class ScratchTools:
    runs: Counter[str] = field(default_factory=Counter)
    started: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


def _register(state: ScratchTools) -> None:
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
        released = state.release.wait(_LONGEST_WAIT_SECONDS)
        return {"released": released}

    @tool(risk="low", name="swallowEveryException")
    def swallow(args: NoteInput) -> dict[str, object]:
        """Wait for the release, and hide any exception raised meanwhile, as over-defensive code does."""
        state.runs["swallowEveryException"] += 1
        try:
            state.release.wait(_LONGEST_WAIT_SECONDS)
        except Exception:
            return {"swallowed": True}
        return {"swallowed": False}

    @tool(risk="low", name="remainingTime")
    def remaining_time(args: NoteInput, ctx: ToolContext) -> dict[str, object]:
        """Say how many seconds the tool has left."""
        return {"remaining": ctx.remaining_seconds()}


@contextmanager
def scratch_tools() -> Iterator[ScratchTools]:
    load_tools()  # the example tools first, so that restoring the list restores exactly them
    # GET's answer is built once per container: build it now, so it never holds a scratch tool.
    manifest_answer()
    before = list(registry.tools)
    state = ScratchTools()
    _register(state)
    try:
        yield state
    finally:
        state.release.set()  # lets any tool a test abandoned finish
        registry.tools[:] = before
