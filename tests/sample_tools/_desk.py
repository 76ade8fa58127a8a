"""An in-memory support desk for the sample tools. Its name starts with `_`: a helper, not a tool module."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Ticket:
    number: str
    status: str
    assignee: str | None
    queue: str
    priority: int
    credit_limit: float
    credited: float = 0.0


TICKETS: dict[str, Ticket] = {
    ticket.number: ticket
    for ticket in (
        Ticket("TCK-1042", "waiting", "Ada", "billing", 3, 84.50),
        Ticket("TCK-1043", "open", None, "shipping", 2, 19.99),
        Ticket("TCK-1044", "solved", "Grace", "billing", 1, 240.00),
    )
}


def find_ticket(number: str) -> Ticket | None:
    return TICKETS.get(number.strip().upper())
