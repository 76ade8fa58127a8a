"""The sample tools: one per risk level, each field type shown once, over the in-memory desk."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from median_lambda import ToolContext, ToolError, tool
from pydantic import BaseModel, Field

from tests.sample_tools._desk import Ticket, find_ticket


def _ticket(number: str) -> Ticket:
    ticket = find_ticket(number)
    if ticket is None:
        raise ToolError("No ticket has that number. Ask the customer to check it; it looks like TCK-1042.")
    return ticket


class TicketStatusInput(BaseModel):
    ticketNumber: str = Field(description="The ticket number, like TCK-1042.")


@tool(risk="low")
def ticket_status(args: TicketStatusInput) -> dict[str, object]:
    """Look up the status of one of the customer's support tickets."""
    ticket = _ticket(args.ticketNumber)
    return {"ticketNumber": ticket.number, "status": ticket.status, "assignee": ticket.assignee, "queue": ticket.queue}


class SetPriorityInput(BaseModel):
    ticketNumber: str = Field(description="The ticket number, like TCK-1042.")
    queue: str = Field(description="The queue the ticket is in, as the status names it.")
    priority: int = Field(ge=1, le=5, description="The new priority, 1 (lowest) to 5 (most urgent).")


@tool(risk="medium")
def set_priority(args: SetPriorityInput) -> dict[str, object]:
    """Change how urgent an open ticket is."""
    ticket = _ticket(args.ticketNumber)
    if ticket.status != "open":
        raise ToolError(f"The ticket is {ticket.status}; only an open ticket's priority can change.")
    if args.queue != ticket.queue:
        raise ToolError(f"The ticket is in the {ticket.queue} queue, not {args.queue}.")
    ticket.priority = args.priority
    return {"ticketNumber": ticket.number, "priority": ticket.priority}


class IssueCreditInput(BaseModel):
    ticketNumber: str = Field(description="The ticket number, like TCK-1042.")
    amount: float = Field(gt=0, description="The credit, in the account's currency; at most the ticket's limit.")
    reason: Literal["outage", "late_reply", "billing_error", "other"] = Field(description="Why the customer is owed.")
    notifyCustomer: bool = Field(default=True, description="Email the customer a receipt.")


@tool(risk="reviewed")
def issue_credit(args: IssueCreditInput, ctx: ToolContext) -> dict[str, object]:
    """Credit the customer's account for a problem this ticket is about."""
    ticket = _ticket(args.ticketNumber)
    if args.amount > ticket.credit_limit - ticket.credited:
        raise ToolError(f"At most {ticket.credit_limit - ticket.credited:.2f} can still be credited on this ticket.")
    ticket.credited += args.amount
    return {
        "ticketNumber": ticket.number,
        "credited": round(args.amount, 2),
        "reason": args.reason,
        "receiptSent": args.notifyCustomer,
        "reference": f"CR-{ctx.call_id or 'manual'}",
    }


class CloseReason(StrEnum):
    SOLVED = "solved"
    DUPLICATE = "duplicate"
    NO_REPLY = "no_reply"


class CloseTicketInput(BaseModel):
    ticket_number: str = Field(alias="ticketNumber", description="The ticket number, like TCK-1042.")
    reason: CloseReason = Field(description="Why the ticket is closed.")
    note: str | None = Field(default=None, max_length=500, description="Anything the next agent should know.")


@tool(risk="high", name="closeTicket")
def close(args: CloseTicketInput) -> dict[str, object]:
    """Close a ticket that is not solved yet. A teammate approves every closing."""
    ticket = _ticket(args.ticket_number)
    if ticket.status == "solved":
        raise ToolError("The ticket is already solved; there is nothing to close.")
    ticket.status = "closed"
    return {"ticketNumber": ticket.number, "status": ticket.status, "reason": args.reason.value}
