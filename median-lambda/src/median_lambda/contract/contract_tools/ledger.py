"""Two tools on an in-memory ledger that count their runs: stand-ins for a payment that must not happen twice."""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, Field

from median_lambda import tool

# Runs per tool, since this module was imported (the `contract_tools` fixture imports it afresh).
RUNS: Counter[str] = Counter()


class EntryInput(BaseModel):
    note: str = Field(description="What the entry says; echoed back.")


@tool(risk="high")
def add_entry(args: EntryInput) -> dict[str, object]:
    """Add an entry to the ledger, saying on which run it did."""
    RUNS["addEntry"] += 1
    return {"run": RUNS["addEntry"], "note": args.note}


@tool(risk="high")
def remove_entry(args: EntryInput) -> dict[str, object]:
    """Remove an entry from the ledger, saying on which run it did."""
    RUNS["removeEntry"] += 1
    return {"run": RUNS["removeEntry"], "note": args.note}
