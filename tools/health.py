"""The endpoint's diagnostics: what Median shows when someone asks whether this endpoint is healthy."""

from __future__ import annotations

from median_lambda import ToolContext, diagnostics

from tools._sample_store import ORDERS


# Diagnostics only read: they never go through the idempotency table, whatever Median's call carries.
@diagnostics
def health(ctx: ToolContext) -> dict[str, object]:
    """Report that the order store answers, without exposing any order."""
    return {"orderStore": "ok", "orders": len(ORDERS), "requestId": ctx.request_id}
