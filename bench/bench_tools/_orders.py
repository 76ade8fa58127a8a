"""The orders the bench's `orderStatus` looks up: shared by the endpoint's tool, the floor and the peer,
so that all three do the same lookup and give the same answer."""

from __future__ import annotations

from typing import NamedTuple


class Order(NamedTuple):
    number: str
    status: str
    carrier: str | None
    tracking: str | None


ORDERS = {
    order.number: order
    for order in (
        Order("ORD-1042", "shipped", "UPS", "1Z999AA10123456784"),
        Order("ORD-1043", "processing", None, None),
    )
}


def find_order(number: str) -> Order | None:
    return ORDERS.get(number.strip().upper())


def status_of(order: Order) -> dict[str, str | None]:
    """The tool's output for an order, as all three build it."""
    return {"orderNumber": order.number, "status": order.status, "carrier": order.carrier, "tracking": order.tracking}
