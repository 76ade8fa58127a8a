"""The peer: the bench's endpoint as a Powertools user would write it by hand, to race the template.

Powertools' `APIGatewayHttpResolver` routes GET and POST; Parameters' `get_secret` reads the
key through boto3 and caches it (for 300 s, the template's own cache, where its default is
5 s); a pydantic model validates the input; the signature is checked as the protocol says;
where the function's environment names an idempotency table ($IDEMPOTENCY_TABLE, as every
deployed stack's does), a call runs at most once per callId through Powertools Idempotency's
public API (`idempotent_function` over a `DynamoDBPersistenceLayer` on that table, keyed on the
callId, the Lambda context registered for the in-progress mark's lapse), as its documentation
shows; and each call that runs the tool publishes the per-tool metrics the endpoint publishes
(ToolCalls and ToolDuration, ToolErrors when it declines, under `tool` and `service`) through
Powertools Metrics as its guide shows: `add_dimension`, `add_metric`, and `log_metrics` with the
cold-start metric around the handler. Nothing more: no logs, no time limit, no base64 or size
checks, one tool. Where a choice was open it takes the faster one, so that the race is against
the strongest reasonable peer: the manifest is the build's JSON text (the example project's,
$BENCH_MANIFEST), read once at import, not built from the model at every GET; the model is plain
pydantic, not the resolver's OpenAPI validation; the record is keyed on the callId alone, with
Powertools' own defaults for the rest (no check that a reused callId names the same call). It
serves the example project's `orderStatus` from its sample store (tools/_sample_store.py), as
the endpoint and the floors do.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import time
import warnings
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.parameters import get_secret
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tools._sample_store import find_order

if TYPE_CHECKING:
    from collections.abc import Callable

    from aws_lambda_powertools.utilities.typing import LambdaContext

app = APIGatewayHttpResolver()
metrics = Metrics()  # the namespace and service the function's environment names, as template.yaml sets them
# A GET publishes no metric: Powertools' warning for it silenced, as its Metrics guide advises.
warnings.filterwarnings("ignore", message="No application metrics to publish", category=UserWarning)

with open(os.environ["BENCH_MANIFEST"], encoding="utf-8") as manifest_file:  # noqa: PTH123 - as the floors read it
    MANIFEST = manifest_file.read().strip()


class OrderStatusInput(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    orderNumber: str = Field(description="The order number, like ORD-1042.")


def _reply(status: int, body: dict[str, Any] | str) -> Response[str]:
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
        return _reply(401, _UNAUTHORIZED)
    return _reply(200, MANIFEST)


@app.post("/")
def call() -> Response[str]:
    body = app.current_event.decoded_body or ""
    if not _signed(body):
        return _reply(401, _UNAUTHORIZED)
    document = app.current_event.json_body
    if document.get("version") != 1 or document.get("op") != "call" or document.get("tool") != "orderStatus":
        return _reply(400, {"version": 1, "ok": False, "error": {"code": "bad_request", "message": "Not a call."}})
    return _reply(*_answer(document))


def _order_status(call: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """The call's answer: its status and body, as a JSON value Powertools can record."""
    try:
        args = OrderStatusInput.model_validate(call.get("input", {}))
    except ValidationError as error:
        details = [{"field": ".".join(map(str, e["loc"])), "message": e["msg"]} for e in error.errors()]
        invalid = {"code": "invalid_input", "message": "Invalid input.", "details": details}
        return 422, {"version": 1, "ok": False, "error": invalid}
    started = time.perf_counter()
    order = find_order(args.orderNumber)
    if order is None:
        declined = {"code": "tool_error", "message": "No order has that number."}
        answer = {"version": 1, "ok": False, "error": declined}
    else:
        output = {
            "orderNumber": order.number,
            "status": order.status,
            "carrier": order.carrier,
            "tracking": order.tracking,
        }
        answer = {"version": 1, "ok": True, "output": output}
    metrics.add_dimension(name="tool", value="orderStatus")
    metrics.add_metric(name="ToolCalls", unit=MetricUnit.Count, value=1)
    metrics.add_metric(name="ToolDuration", unit=MetricUnit.Milliseconds, value=(time.perf_counter() - started) * 1000)
    if order is None:
        metrics.add_metric(name="ToolErrors", unit=MetricUnit.Count, value=1)
    return 200, answer


def _at_most_once(table: str) -> Callable[[dict[str, Any]], tuple[int, dict[str, Any]]]:
    """_order_status through Powertools Idempotency on `table`, keyed on the callId."""
    from aws_lambda_powertools.utilities.idempotency import (
        DynamoDBPersistenceLayer,
        IdempotencyConfig,
        idempotent_function,
    )

    persistence = DynamoDBPersistenceLayer(table_name=table)
    config = IdempotencyConfig(event_key_jmespath="callId")

    @idempotent_function(data_keyword_argument="call", persistence_store=persistence, config=config)
    def order_status(call: dict[str, Any]) -> dict[str, Any]:
        status, body = _order_status(call)
        return {"status": status, "body": body}

    def answer(call: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        config.register_lambda_context(app.lambda_context)
        recorded = order_status(call=call)
        return recorded["status"], recorded["body"]

    return answer


# As the stack's environment says: at most once per callId where a table is named.
_TABLE = os.environ.get("IDEMPOTENCY_TABLE")
_answer = _at_most_once(_TABLE) if _TABLE else _order_status


@metrics.log_metrics(capture_cold_start_metric=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
