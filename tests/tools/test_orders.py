"""tools/orders.py, tested the way an author tests their own tools: through MedianTestClient.

MedianTestClient signs each request with a test key and sends it to `lambda_handler` as a
real API Gateway event, so a test sees exactly the answer Median would. The `sample_store`
fixture (conftest.py) gives every test the shipped orders.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from median_lambda.rules import check_manifest
from median_lambda.testing import MedianTestClient

if TYPE_CHECKING:
    from median_lambda.testing import MedianAWS

# The one tool of the example answer on Median's GET page, which orderStatus copies (the template's
# own tests keep the page's whole answer; a project keeps this test, so it keeps the entry).
SEED_ENTRY = {
    "name": "orderStatus",
    "description": "Look up the status of one of the customer's orders.",
    "risk": "low",
    "inputSchema": {
        "type": "object",
        "properties": {"orderNumber": {"type": "string", "description": "The order number, like ORD-1042."}},
        "required": ["orderNumber"],
        "additionalProperties": False,
    },
}


@pytest.fixture
def median() -> MedianTestClient:
    return MedianTestClient()


def test_order_status_answers_the_order(median: MedianTestClient) -> None:
    # GIVEN the sample order ORD-1042, shipped with UPS
    # WHEN the agent asks for its status
    answer = median.call("orderStatus", {"orderNumber": "ORD-1042"})
    # THEN the status and tracking come back
    assert answer.status == 200
    assert answer.body["output"] == {
        "orderNumber": "ORD-1042",
        "status": "shipped",
        "carrier": "UPS",
        "tracking": "1Z999AA10123456784",
    }


def test_order_status_reads_afresh_on_a_retry_and_writes_no_record(
    median: MedianTestClient, median_aws: MedianAWS
) -> None:
    # GIVEN the idempotency table on, as deployed, and ORD-1043's status asked
    table = median_aws.idempotency_table()
    first = median.call("orderStatus", {"orderNumber": "ORD-1043"})
    # WHEN the order is cancelled, and Median retries the status call with the same callId
    median.call("cancelOrder", {"orderNumber": "ORD-1043", "reason": "changed_mind"})
    retried = median.retry()
    # THEN the retry reads the order as it is now, not the first answer: orderStatus declares it may run
    # twice (a pure read), so its calls write no record: the one in the table is the cancellation's
    assert (first.body["output"]["status"], retried.body["output"]["status"]) == ("processing", "cancelled")
    assert len(median_aws.client("dynamodb").scan(TableName=table)["Items"]) == 1


def test_an_unknown_order_is_a_tool_error_for_the_agent(median: MedianTestClient) -> None:
    # GIVEN no order ORD-0000
    # WHEN the agent asks for it
    answer = median.call("orderStatus", {"orderNumber": "ORD-0000"})
    # THEN the tool declines with a message the agent can pass on
    assert answer.status == 200
    assert answer.body["ok"] is False
    assert answer.body["error"]["code"] == "tool_error"
    assert "No order has that number" in answer.body["error"]["message"]


def test_request_refund_refunds_up_to_what_is_left(median: MedianTestClient) -> None:
    # GIVEN ORD-1042, worth 84.50
    # WHEN the agent refunds 80 of it, then 10 more
    first = median.call("requestRefund", {"orderNumber": "ORD-1042", "amount": 80, "reason": "damaged"}, callId="c1")
    second = median.call("requestRefund", {"orderNumber": "ORD-1042", "amount": 10, "reason": "late"}, callId="c2")
    # THEN the first is done (a receipt by default) and the second is declined: 4.50 is left
    assert first.body["output"] == {
        "orderNumber": "ORD-1042",
        "refunded": 80.0,
        "reason": "damaged",
        "receiptSent": True,
        "reference": "RF-c1",
    }
    assert second.body["error"] == {
        "code": "tool_error",
        "message": "At most 4.50 of this order can still be refunded.",
    }


def test_request_refund_refuses_a_reason_outside_its_enum(median: MedianTestClient) -> None:
    # WHEN the agent gives a reason the schema does not list
    answer = median.call("requestRefund", {"orderNumber": "ORD-1042", "amount": 5, "reason": "bored"})
    # THEN the call is refused 422 on that field
    assert answer.status == 422
    assert [detail["field"] for detail in answer.body["error"]["details"]] == ["reason"]


def test_cancel_order_cancels_a_processing_order(median: MedianTestClient) -> None:
    # GIVEN ORD-1043, still processing
    # WHEN the agent cancels it (the field is orderNumber, as the manifest says)
    answer = median.call("cancelOrder", {"orderNumber": "ORD-1043", "reason": "changed_mind", "note": "Gift"})
    # THEN it is cancelled, and a second status check shows it
    assert answer.body["output"] == {"orderNumber": "ORD-1043", "status": "cancelled", "reason": "changed_mind"}
    assert median.call("orderStatus", {"orderNumber": "ORD-1043"}).body["output"]["status"] == "cancelled"


def test_cancel_order_declines_a_shipped_order(median: MedianTestClient) -> None:
    # WHEN the agent tries to cancel ORD-1042, already shipped
    answer = median.call("cancelOrder", {"orderNumber": "ORD-1042", "reason": "found_cheaper"})
    # THEN the tool declines and suggests a return
    assert answer.body["error"]["code"] == "tool_error"
    assert "offer a return" in answer.body["error"]["message"]


def test_change_quantity_changes_one_item(median: MedianTestClient) -> None:
    # WHEN the agent sets the notebook in ORD-1043 to 3
    answer = median.call("changeQuantity", {"orderNumber": "ORD-1043", "item": "notebook", "quantity": 3})
    # THEN the order holds 3
    assert answer.body["output"] == {"orderNumber": "ORD-1043", "quantities": {"notebook": 3}}


def test_change_quantity_enforces_its_range(median: MedianTestClient) -> None:
    # WHEN the agent asks for 100 (the model allows 0 to 99)
    answer = median.call("changeQuantity", {"orderNumber": "ORD-1043", "item": "notebook", "quantity": 100})
    # THEN it is refused 422 on quantity
    assert answer.status == 422
    assert answer.body["error"]["details"][0]["field"] == "quantity"


def test_the_manifest_lists_every_example_tool(median: MedianTestClient) -> None:
    # WHEN Median asks for the manifest
    answer = median.manifest()
    # THEN it lists the six tools (tools/orders.py's, then tools/returns.py's), with diagnostics on
    # (tools/health.py), and Median would accept it; a tool you add beside them (make new-tool) is
    # listed too, so only the examples' names and order are held here
    examples = ["orderStatus", "changeQuantity", "requestRefund", "cancelOrder", "startReturn", "pickupSlots"]
    assert answer.status == 200
    assert [entry["name"] for entry in answer.body["tools"] if entry["name"] in examples] == examples
    assert answer.body["diagnostics"] is True
    assert check_manifest(answer.body) == []


def test_order_status_is_the_seed_pages_example(median: MedianTestClient) -> None:
    # GIVEN the example answer on Median's GET page, whose one tool orderStatus copies
    # WHEN Median GETs the manifest
    answer = median.manifest()
    # THEN the orderStatus entry equals the page's, as JSON
    [entry] = [tool for tool in answer.body["tools"] if tool["name"] == "orderStatus"]
    assert entry == SEED_ENTRY


def test_the_example_tools_show_every_risk_and_field_kind(median: MedianTestClient) -> None:
    # GIVEN the example tools, which authors copy from
    tools = median.manifest().body["tools"]
    properties = [node for entry in tools for node in entry["inputSchema"]["properties"].values()]
    optional = [
        name
        for entry in tools
        for name in entry["inputSchema"]["properties"]
        if name not in entry["inputSchema"].get("required", [])
    ]
    # THEN together they use every risk; string, number, integer, boolean, enum and optional fields
    assert {entry["risk"] for entry in tools} == {"low", "medium", "reviewed", "high"}
    assert {node["type"] for node in properties} == {"string", "number", "integer", "boolean"}
    assert any("enum" in node for node in properties)
    assert optional
