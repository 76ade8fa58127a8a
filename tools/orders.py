"""Example tools over the sample order store: one per risk level, each field type shown once.

Delete this module and `_sample_store.py` when your own tools are in place.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from median_lambda import ToolContext, ToolError, tool
from pydantic import BaseModel, Field

from tools._sample_store import Order, find_order


def _order(number: str) -> Order:
    order = find_order(number)
    if order is None:
        raise ToolError("No order has that number. Ask the customer to check it; it looks like ORD-1042.")
    return order


class OrderStatusInput(BaseModel):
    orderNumber: str = Field(description="The order number, like ORD-1042.")


# A pure read: running it twice changes nothing, so it need not go through the idempotency table
# (idempotent=False), and a call to it costs no DynamoDB request (the writing tools guide).
@tool(risk="low", idempotent=False)
def order_status(args: OrderStatusInput) -> dict[str, object]:
    """Look up the status of one of the customer's orders."""
    order = _order(args.orderNumber)
    return {"orderNumber": order.number, "status": order.status, "carrier": order.carrier, "tracking": order.tracking}


class ChangeQuantityInput(BaseModel):
    orderNumber: str = Field(description="The order number, like ORD-1042.")
    item: str = Field(description="The item to change, as named in the order.")
    quantity: int = Field(ge=0, le=99, description="The new quantity, 0 to 99; 0 removes the item.")


@tool(risk="medium")
def change_quantity(args: ChangeQuantityInput) -> dict[str, object]:
    """Change how many of one item an order holds, before it ships."""
    order = _order(args.orderNumber)
    if order.status != "processing":
        raise ToolError(f"The order is already {order.status}; quantities can only change while it is processing.")
    if args.item not in order.quantities:
        raise ToolError(f"The order has no item by that name. It holds: {', '.join(order.quantities)}.")
    order.quantities[args.item] = args.quantity
    return {"orderNumber": order.number, "quantities": order.quantities}


class RefundInput(BaseModel):
    orderNumber: str = Field(description="The order number, like ORD-1042.")
    amount: float = Field(gt=0, description="The amount to refund, in the order's currency; at most the order total.")
    reason: Literal["damaged", "late", "wrong_item", "other"] = Field(description="Why the customer wants a refund.")
    notifyCustomer: bool = Field(default=True, description="Email the customer a receipt.")


@tool(risk="reviewed")
def request_refund(args: RefundInput, ctx: ToolContext) -> dict[str, object]:
    """Refund part or all of an order to the customer's original payment method."""
    order = _order(args.orderNumber)
    if args.amount > order.total - order.refunded:
        raise ToolError(f"At most {order.total - order.refunded:.2f} of this order can still be refunded.")
    order.refunded += args.amount
    return {
        "orderNumber": order.number,
        "refunded": round(args.amount, 2),
        "reason": args.reason,
        "receiptSent": args.notifyCustomer,
        "reference": f"RF-{ctx.call_id or 'manual'}",
    }


class CancelReason(StrEnum):
    CHANGED_MIND = "changed_mind"
    FOUND_CHEAPER = "found_cheaper"
    ORDERED_BY_MISTAKE = "ordered_by_mistake"


class CancelOrderInput(BaseModel):
    order_number: str = Field(alias="orderNumber", description="The order number, like ORD-1042.")
    reason: CancelReason = Field(description="Why the customer cancels.")
    note: str | None = Field(default=None, max_length=500, description="Anything the warehouse should know.")


@tool(risk="high", name="cancelOrder")
def cancel(args: CancelOrderInput) -> dict[str, object]:
    """Cancel an order that has not shipped yet. A teammate approves every cancellation."""
    order = _order(args.order_number)
    if order.status != "processing":
        raise ToolError(f"The order is already {order.status} and can no longer be cancelled; offer a return instead.")
    order.status = "cancelled"
    return {"orderNumber": order.number, "status": order.status, "reason": args.reason.value}
