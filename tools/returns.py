"""Example tools on real backends, written as the guide to your own systems teaches.

- `startReturn`: a `high`-risk write, its amount an integer number of cents, on a DynamoDB
  table of the stack's own (template.yaml's ReturnsTable, its least-privilege policy and
  MEDIAN_SETTING_RETURNS_TABLE), through `ctx.aws_client`, bounded by the call's time left.
- `pickupSlots`: an async call to a carrier's HTTP API with httpx, its base URL per stage
  (tools/settings.toml) and its token from Secrets Manager (`Secret(setting=...)`), bounded
  by `ctx.http_timeout()`.

Delete this module with the other examples (README, "Make it yours"), which also deletes the
blocks marked `example: returns` in template.yaml and tools/settings.toml.
"""

from __future__ import annotations

from typing import Literal

from median_lambda import Secret, Settings, ToolContext, ToolError, tool
from pydantic import BaseModel, Field


class ReturnsSettings(Settings):
    returns_table: str  # RETURNS_TABLE


class PickupSettings(Settings):
    pickup_api_url: str  # PICKUP_API_URL


class StartReturnInput(BaseModel):
    orderNumber: str = Field(pattern=r"^ORD-\d{4,10}$", description="The order number, like ORD-1042.")
    # Cents, an integer: money in a float would refund 19.989999... for 19.99.
    refundCents: int = Field(
        gt=0, le=1_000_000, description="The refund due when the parcel is back, in cents: 1999 for 19.99."
    )
    reason: Literal["damaged", "wrong_item", "not_as_described", "changed_mind"] = Field(
        description="Why the customer sends the order back."
    )


@tool(risk="high")
def start_return(args: StartReturnInput, ctx: ToolContext, settings: ReturnsSettings) -> dict[str, object]:
    """Open a return for one of the customer's orders, with the refund due once the parcel is back."""
    # Imported here, as httpx below: a cold call of another tool does not pay for botocore.
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        ctx.aws_client("dynamodb").put_item(
            TableName=settings.returns_table,
            Item={
                "orderNumber": {"S": args.orderNumber},
                "refundCents": {"N": str(args.refundCents)},
                "reason": {"S": args.reason},
                "callId": {"S": ctx.call_id or "manual"},
            },
            # One return per order: a second would refund twice.
            ConditionExpression="attribute_not_exists(orderNumber)",
        )
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
            raise ToolError("A return is already open for this order; tell the customer it is on its way.") from error
        raise ToolError("The returns store is not answering; try again in a minute.") from error
    except BotoCoreError as error:  # a timeout, a refused or reset connection
        raise ToolError("The returns store is not answering; try again in a minute.") from error
    return {"orderNumber": args.orderNumber, "refundCents": args.refundCents, "status": "open"}


class PickupSlotsInput(BaseModel):
    postcode: str = Field(min_length=2, max_length=10, description="Where the carrier collects, like LS1 4DT.")


@tool(risk="low")
async def pickup_slots(
    args: PickupSlotsInput,
    ctx: ToolContext,
    pickups: PickupSettings,
    token: str = Secret(setting="PICKUP_API_TOKEN_SECRET"),
) -> dict[str, object]:
    """List when the carrier can collect a return from the customer's address."""
    # Imported here: a cold call of any other tool does not pay for httpx (a few tenths of a second).
    import httpx

    try:
        async with httpx.AsyncClient(base_url=pickups.pickup_api_url, timeout=ctx.http_timeout()) as client:
            response = await client.get(
                "/pickup-slots", params={"postcode": args.postcode}, headers={"Authorization": f"Bearer {token}"}
            )
            response.raise_for_status()
            slots = [str(slot) for slot in response.json()["slots"][:5]]
    except httpx.HTTPError as error:  # a timeout, a refused connection, an error status
        raise ToolError("The carrier is not answering; offer to book the pickup later.") from error
    except (ValueError, KeyError, TypeError) as error:  # an answer that is not the carrier's JSON
        raise ToolError("The carrier's answer was not understood; offer to book the pickup later.") from error
    return {"postcode": args.postcode, "slots": slots}
