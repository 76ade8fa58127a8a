"""The sample endpoint's diagnostics."""

from __future__ import annotations

from median_lambda import ToolContext, diagnostics

from tests.sample_tools._desk import TICKETS


@diagnostics
def desk_health(ctx: ToolContext) -> dict[str, object]:
    """Report that the desk answers, without exposing any ticket."""
    return {"ticketDesk": "ok", "tickets": len(TICKETS), "requestId": ctx.request_id}
