"""An in-memory stand-in for your order system, so the example tools run anywhere.

Replace it with calls to your own API or database (and grant the function's role access
to them in template.yaml). Its name starts with `_`, so it is not loaded as a tool module.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Order:
    number: str
    status: str
    carrier: str | None
    tracking: str | None
    total: float
    quantities: dict[str, int] = field(default_factory=dict)
    refunded: float = 0.0


ORDERS: dict[str, Order] = {
    order.number: order
    for order in (
        Order("ORD-1042", "shipped", "UPS", "1Z999AA10123456784", 84.50, {"mug": 2, "tea": 1}),
        Order("ORD-1043", "processing", None, None, 19.99, {"notebook": 1}),
        Order("ORD-1044", "delivered", "DHL", "JD014600006281230721", 240.00, {"lamp": 1}),
    )
}


def find_order(number: str) -> Order | None:
    return ORDERS.get(number.strip().upper())
