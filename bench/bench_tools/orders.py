"""`orderStatus`, as Median's manifest page shows it: the one tool the bench's endpoint serves."""

from __future__ import annotations

from median_lambda import ToolError, tool
from pydantic import BaseModel, Field

from bench.bench_tools._orders import find_order, status_of


class OrderStatusInput(BaseModel):
    orderNumber: str = Field(description="The order number, like ORD-1042.")


@tool(risk="low")
def order_status(args: OrderStatusInput) -> dict[str, str | None]:
    """Look up the status of one of the customer's orders."""
    order = find_order(args.orderNumber)
    if order is None:
        raise ToolError("No order has that number. Ask the customer to check it; it looks like ORD-1042.")
    return status_of(order)
