"""tools/returns.py on its backends: moto's DynamoDB and Secrets Manager over HTTP, and a stand-in carrier.

`median_aws` (handler.testing's pytest fixture) gives each test an empty AWS on moto's server,
with the tools' clients and `Secret` pointed at it. The carrier is a small HTTP server on
this machine, whose URL the test sets with MEDIAN_SETTING_PICKUP_API_URL: an override in the
environment comes before tools/settings.toml.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest

from handler.testing import FakeLambdaContext, MedianAWS, MedianTestClient

if TYPE_CHECKING:
    from collections.abc import Iterator

TOKEN_SECRET = "returns-test/pickup-api-token"  # a secret of the tests' own, named with MEDIAN_SETTING_...
RETURN = {"orderNumber": "ORD-1042", "refundCents": 1999, "reason": "damaged"}


@pytest.fixture
def median() -> MedianTestClient:
    return MedianTestClient()


@pytest.fixture
def returns_table(median_aws: MedianAWS, monkeypatch: pytest.MonkeyPatch) -> str:
    """The returns table, as template.yaml's ReturnsTable makes it, under a name only this test uses."""
    monkeypatch.setenv("MEDIAN_SETTING_RETURNS_TABLE", "returns-under-test")
    median_aws.client("dynamodb").create_table(
        TableName="returns-under-test",
        KeySchema=[{"AttributeName": "orderNumber", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "orderNumber", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    return "returns-under-test"


class Carrier:
    """A stand-in for the carrier's API: answers, fails or stalls, and remembers what it was asked."""

    def __init__(self) -> None:
        self.mode = "answer"
        self.requests: list[tuple[str, str | None]] = []
        self.released = threading.Event()
        carrier = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                carrier.requests.append((self.path, self.headers.get("Authorization")))
                if carrier.mode == "stall":  # accepts the request, never answers
                    carrier.released.wait()
                    return
                status, body = {
                    "fail": (503, b"busy"),
                    "garbled": (200, b'{"slots": {"Tue": "9-12"}}'),
                }.get(carrier.mode, (200, b'{"slots": ["Tue 9-12"]}'))
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def carrier(median_aws: MedianAWS, monkeypatch: pytest.MonkeyPatch) -> Iterator[Carrier]:
    """The stand-in carrier as PICKUP_API_URL (its override, MEDIAN_SETTING_PICKUP_API_URL), and its token in
    moto's Secrets Manager."""
    stand_in = Carrier()
    thread = threading.Thread(target=stand_in.server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("MEDIAN_SETTING_PICKUP_API_URL", stand_in.url)
    monkeypatch.setenv("MEDIAN_SETTING_PICKUP_API_TOKEN_SECRET", TOKEN_SECRET)
    median_aws.create_secret(TOKEN_SECRET, "carrier-test-token")
    try:
        yield stand_in
    finally:
        stand_in.released.set()
        stand_in.server.shutdown()
        stand_in.server.server_close()


def test_start_return_records_the_refund_in_whole_cents(
    median: MedianTestClient, median_aws: MedianAWS, returns_table: str
) -> None:
    # GIVEN an empty returns table
    # WHEN the agent opens a return for 19.99, approved as a high-risk call is
    answer = median.call("startReturn", RETURN, callId="call-1")
    # THEN the return is open, and the table holds the amount as the integer the agent sent
    assert answer.status == 200, answer.body
    assert answer.body["output"] == {"orderNumber": "ORD-1042", "refundCents": 1999, "status": "open"}
    item = median_aws.client("dynamodb").get_item(TableName=returns_table, Key={"orderNumber": {"S": "ORD-1042"}})
    assert item["Item"]["refundCents"] == {"N": "1999"}
    assert item["Item"]["callId"] == {"S": "call-1"}


def test_a_second_return_for_one_order_is_declined(median: MedianTestClient, returns_table: str) -> None:
    # GIVEN a return already open for ORD-1042
    median.call("startReturn", RETURN, callId="call-1")
    # WHEN another call (another callId, so no retry) opens one again
    answer = median.call("startReturn", {**RETURN, "refundCents": 500}, callId="call-2")
    # THEN the tool declines rather than refunding twice, and says what to tell the customer
    assert answer.body["error"] == {
        "code": "tool_error",
        "message": "A return is already open for this order; tell the customer it is on its way.",
    }


def test_a_retried_return_is_opened_once_and_answered_as_the_first(
    median: MedianTestClient, median_aws: MedianAWS, returns_table: str
) -> None:
    # GIVEN the idempotency table on, as deployed, and a return opened
    median_aws.idempotency_table()
    first = median.call("startReturn", RETURN)
    # WHEN Median retries the call with the same callId, its first answer lost on the way
    retried = median.retry()
    # THEN the retry gets the first answer (run again, the tool would have declined a second return)
    assert first.body["output"] == {"orderNumber": "ORD-1042", "refundCents": 1999, "status": "open"}
    assert retried.body == first.body
    # AND the table holds the one return, opened by that call
    items = median_aws.client("dynamodb").scan(TableName=returns_table)["Items"]
    assert [item["callId"]["S"] for item in items] == [median.last_call_id]


def test_without_the_idempotency_table_a_retry_runs_the_tool_again(
    median: MedianTestClient, returns_table: str
) -> None:
    # GIVEN no idempotency table, as under make serve without LOCAL_AWS=moto
    first = median.call("startReturn", RETURN)
    # WHEN Median retries the call with the same callId
    retried = median.retry()
    # THEN the tool ran again, and only its own check kept it from opening a second return
    assert first.body["ok"] is True
    assert (
        retried.body["error"]["message"]
        == "A return is already open for this order; tell the customer it is on its way."
    )


@pytest.mark.parametrize("amount", [19.99, 0, -100, 1_000_001, "1999"], ids=repr)
def test_start_return_takes_only_whole_positive_cents(
    median: MedianTestClient, returns_table: str, amount: object
) -> None:
    # WHEN the agent sends an amount that is not a whole number of cents within the limit
    answer = median.call("startReturn", {**RETURN, "refundCents": amount})
    # THEN the call is refused on that field, and no return is opened
    assert answer.status == 422
    assert [detail["field"] for detail in answer.body["error"]["details"]] == ["refundCents"]


def test_without_its_table_start_return_says_the_store_is_not_answering(
    median: MedianTestClient, median_aws: MedianAWS, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN RETURNS_TABLE naming a table that does not exist
    monkeypatch.setenv("MEDIAN_SETTING_RETURNS_TABLE", "no-such-table")
    # WHEN the agent opens a return
    answer = median.call("startReturn", RETURN)
    # THEN the tool's own message, with what to do, reaches Median
    assert answer.body["error"]["message"] == "The returns store is not answering; try again in a minute."


def test_the_manifest_shows_start_return_as_high_risk_with_an_integer_amount(median: MedianTestClient) -> None:
    # WHEN Median GETs the manifest
    tools = {entry["name"]: entry for entry in median.manifest().body["tools"]}
    # THEN startReturn waits for a person's approval, its amount an integer, and the token is no input
    assert tools["startReturn"]["risk"] == "high"
    assert tools["startReturn"]["inputSchema"]["properties"]["refundCents"]["type"] == "integer"
    assert list(tools["pickupSlots"]["inputSchema"]["properties"]) == ["postcode"]


def test_pickup_slots_asks_the_carrier_with_the_token_from_secrets_manager(
    median: MedianTestClient, carrier: Carrier
) -> None:
    # GIVEN the carrier at PICKUP_API_URL and its token in Secrets Manager
    # WHEN the agent asks for pickup slots
    answer = median.call("pickupSlots", {"postcode": "LS1 4DT"})
    # THEN the carrier was asked with the secret's token, and its slots reach Median
    assert answer.body["output"] == {"postcode": "LS1 4DT", "slots": ["Tue 9-12"]}
    assert carrier.requests == [("/pickup-slots?postcode=LS1+4DT", "Bearer carrier-test-token")]


def test_a_failing_carrier_is_the_tools_own_error(median: MedianTestClient, carrier: Carrier) -> None:
    # GIVEN a carrier answering 503
    carrier.mode = "fail"
    # WHEN the agent asks for pickup slots
    answer = median.call("pickupSlots", {"postcode": "LS1 4DT"})
    # THEN the agent is told what to offer the customer, not an internal error
    assert answer.body["error"] == {
        "code": "tool_error",
        "message": "The carrier is not answering; offer to book the pickup later.",
    }


def test_an_answer_that_is_not_the_carriers_is_the_tools_own_error(median: MedianTestClient, carrier: Carrier) -> None:
    # GIVEN a carrier whose answer is JSON, but not the list of slots the tool expects
    carrier.mode = "garbled"
    # WHEN the agent asks for pickup slots
    answer = median.call("pickupSlots", {"postcode": "LS1 4DT"})
    # THEN the agent is told the answer was not understood, and what to offer
    assert answer.body["error"] == {
        "code": "tool_error",
        "message": "The carrier's answer was not understood; offer to book the pickup later.",
    }


def test_a_stalled_carrier_ends_in_the_tools_own_error_before_the_functions_deadline(
    median: MedianTestClient, carrier: Carrier
) -> None:
    # GIVEN a carrier that accepts the request and never answers, and a call with 2 s left
    carrier.mode = "stall"
    # WHEN the agent asks for pickup slots
    answer = median.call("pickupSlots", {"postcode": "LS1 4DT"}, context=FakeLambdaContext(timeout_seconds=2))
    # THEN httpx gave up within ctx.http_timeout(), and the tool's own message reached Median
    assert answer.status == 200, answer.body
    assert answer.body["error"]["message"] == "The carrier is not answering; offer to book the pickup later."
    assert len(carrier.requests) == 1


def test_without_its_token_pickup_slots_does_not_run(
    median: MedianTestClient, median_aws: MedianAWS, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN no carrier token in Secrets Manager
    monkeypatch.setenv("MEDIAN_SETTING_PICKUP_API_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("MEDIAN_SETTING_PICKUP_API_TOKEN_SECRET", TOKEN_SECRET)
    # WHEN the agent asks for pickup slots
    answer = median.call("pickupSlots", {"postcode": "LS1 4DT"})
    # THEN the tool did not run, Median is told to retry, and no answer carries the secret's name
    assert answer.status == 500
    assert "did not run; retry" in answer.body["error"]["message"]
    assert TOKEN_SECRET not in json.dumps(answer.body)


def test_make_serves_seed_gives_the_tools_what_settings_toml_names(
    median: MedianTestClient, median_aws: MedianAWS
) -> None:
    # GIVEN moto seeded as `make serve LOCAL_AWS=moto` seeds it, and no value but tools/settings.toml's
    from tests.tools.local_aws_seed import seed

    seed()
    # WHEN the agent opens a return
    answer = median.call("startReturn", RETURN)
    # THEN the table settings.toml names is there, keyed as the tool writes it
    assert answer.body["output"]["status"] == "open"
