"""The peer: the bench's endpoint as a Powertools user would write it by hand, to race the template.

Powertools' `APIGatewayHttpResolver` routes GET and POST; Parameters' `get_secret` reads the
key through boto3 and caches it (for 300 s, the template's own cache, where its default is
5 s); a pydantic model validates the input; the signature is checked as the protocol says.
Nothing more: no metrics, no logs, no time limit, no idempotency, no base64 or size checks,
one tool. Where a choice was open it takes the faster one, so that the race is against the
strongest reasonable peer: the manifest is a JSON text written once at import (Median's own
example, `orderStatus`), not built from the model at every GET; the model is plain pydantic,
not the resolver's OpenAPI validation.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import time
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.utilities.parameters import get_secret
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bench.bench_tools._orders import find_order, status_of

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

app = APIGatewayHttpResolver()

MANIFEST = json.dumps(
    {
        "version": 1,
        "tools": [
            {
                "name": "orderStatus",
                "description": "Look up the status of one of the customer's orders.",
                "risk": "low",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "orderNumber": {"type": "string", "description": "The order number, like ORD-1042."}
                    },
                    "required": ["orderNumber"],
                    "additionalProperties": False,
                },
            }
        ],
        "diagnostics": False,
    },
    separators=(",", ":"),
)


class OrderStatusInput(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    orderNumber: str = Field(description="The order number, like ORD-1042.")


def _answer(status: int, body: dict[str, Any] | str) -> Response[str]:
    text = body if isinstance(body, str) else json.dumps(body, separators=(",", ":"))
    return Response(status_code=status, content_type="application/json", body=text)


def _signed(body: str) -> bool:
    """Whether median-signature is fresh and one of its v1 entries is the body's HMAC under the key."""
    header = app.current_event.headers.get("median-signature") or ""
    items = [item.strip().partition("=") for item in header.split(",")]
    timestamps = [value for name, _, value in items if name == "t"]
    signatures = [value for name, _, value in items if name == "v1"]
    if len(timestamps) != 1 or not timestamps[0].isdigit() or abs(time.time() - int(timestamps[0])) > 300:
        return False
    key = get_secret(os.environ["MEDIAN_KEY_SECRET_ID"], max_age=300).encode("utf-8")
    expected = hmac.new(key, f"{timestamps[0]}.{body}".encode(), hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(expected, signature) for signature in signatures)


_UNAUTHORIZED = {"error": {"code": "unauthorized", "message": "The signature does not match."}}


@app.get("/")
def manifest() -> Response[str]:
    if not _signed(""):
        return _answer(401, _UNAUTHORIZED)
    return _answer(200, MANIFEST)


@app.post("/")
def call() -> Response[str]:
    body = app.current_event.decoded_body or ""
    if not _signed(body):
        return _answer(401, _UNAUTHORIZED)
    document = app.current_event.json_body
    if document.get("version") != 1 or document.get("op") != "call" or document.get("tool") != "orderStatus":
        return _answer(400, {"version": 1, "ok": False, "error": {"code": "bad_request", "message": "Not a call."}})
    try:
        args = OrderStatusInput.model_validate(document.get("input", {}))
    except ValidationError as error:
        details = [{"field": ".".join(map(str, e["loc"])), "message": e["msg"]} for e in error.errors()]
        invalid = {"code": "invalid_input", "message": "Invalid input.", "details": details}
        return _answer(422, {"version": 1, "ok": False, "error": invalid})
    order = find_order(args.orderNumber)
    if order is None:
        declined = {"code": "tool_error", "message": "No order has that number."}
        return _answer(200, {"version": 1, "ok": False, "error": declined})
    return _answer(200, {"version": 1, "ok": True, "output": status_of(order)})


def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
