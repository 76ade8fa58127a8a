"""POST: every row of PROTOCOL.md §6 this endpoint answers on its own, signed with the key in moto's Secrets Manager.

Every test runs as deployed (tests/conftest.py, `configuration`): with the idempotency table on
moto's DynamoDB, and every call carrying a callId, as Median sends it, so that each call that
reaches its tool goes through the table. The table-less path, `make serve`'s, is proven by
test_post_without_the_table.py.
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda import tool
from median_lambda.protocol import MAX_BODY_BYTES
from median_lambda.testing import TEST_KEY, FakeLambdaContext, call_body
from pydantic import BaseModel, Field

from tests.conftest import with_call_id

if TYPE_CHECKING:
    from collections.abc import Callable

    from median_lambda.authoring.registry import Registry
    from median_lambda.testing import TestAnswer

    from tests.conftest import EventBuilder, LogCapture


@pytest.fixture(autouse=True)
def _key(key_in_secrets_manager: str, sample_tools: Registry, configuration: str) -> None:
    """TEST_KEY in moto's Secrets Manager, the sample tools (tests/sample_tools/) served, their desk as shipped;
    the idempotency table on, as deployed."""


@pytest.fixture
def deployed(monkeypatch: pytest.MonkeyPatch) -> None:
    """As Lambda runs the function, not sam local: what its log holds is what these tests check. (Off
    Lambda, a crash is also printed in full for its author: tests/unit/test_crashes_explained_locally.py.)"""
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "median-tools")
    monkeypatch.delenv("AWS_SAM_LOCAL", raising=False)


@pytest.fixture
def post(make_event: EventBuilder, invoke: Callable[..., TestAnswer]) -> Callable[..., TestAnswer]:
    """POSTs raw body bytes, signed, as an HTTP API event; a call that names no callId gets one."""

    def send(body: bytes, *, shape: str = "http_api_v2", context: FakeLambdaContext | None = None) -> TestAnswer:
        return invoke(make_event(shape, "POST", with_call_id(body)), context)

    return send


def _document(**members: Any) -> bytes:
    return json.dumps(members).encode("utf-8")


def _error(answer: TestAnswer, status: int, code: str) -> dict[str, Any]:
    """Asserts an error answer's status, code and POST shape; returns its error member."""
    assert answer.status == status, answer.body
    assert answer.headers["Content-Type"] == "application/json"
    assert answer.body["version"] == 1
    assert answer.body["ok"] is False
    error: dict[str, Any] = answer.body["error"]
    assert error["code"] == code
    assert error["message"]
    return error


def test_a_call_that_runs_is_200_ok_with_the_output(shape: str, post: Callable[..., TestAnswer]) -> None:
    # GIVEN a signed call of ticketStatus for an existing ticket
    # WHEN it arrives in any event shape
    answer = post(call_body("ticketStatus", {"ticketNumber": "TCK-1042"}, callId="call_1"), shape=shape)
    # THEN 200 with ok true and the tool's output
    assert answer.status == 200
    assert answer.body == {
        "version": 1,
        "ok": True,
        "output": {"ticketNumber": "TCK-1042", "status": "waiting", "assignee": "Ada", "queue": "billing"},
    }


def test_a_tool_error_is_200_not_ok_with_the_tools_message(post: Callable[..., TestAnswer]) -> None:
    # GIVEN a call for a ticket that does not exist
    # WHEN it arrives
    answer = post(call_body("ticketStatus", {"ticketNumber": "TCK-0000"}))
    # THEN 200 tool_error, carrying the message the tool wrote for the agent
    assert answer.status == 200
    assert _error(answer, 200, "tool_error")["message"].startswith("No ticket has that number.")


def test_diagnostics_is_200_with_what_the_function_returned(post: Callable[..., TestAnswer]) -> None:
    # GIVEN the endpoint declares a diagnostics function
    context = FakeLambdaContext()
    # WHEN Median asks for diagnostics
    answer = post(_document(version=1, op="diagnostics"), context=context)
    # THEN 200 ok with its output (which includes the request id it was given)
    assert answer.status == 200
    assert answer.body == {
        "version": 1,
        "ok": True,
        "output": {"ticketDesk": "ok", "tickets": 3, "requestId": context.aws_request_id},
    }


def test_other_members_are_ignored_and_input_defaults_to_empty(post: Callable[..., TestAnswer]) -> None:
    # GIVEN a call with members the protocol does not define, and one with no input at all
    extra = _document(version=1, op="call", tool="ticketStatus", input={"ticketNumber": "TCK-1042"}, trace="x", n=1)
    no_input = _document(version=1, op="call", tool="ticketStatus")
    # WHEN they arrive
    # THEN the first runs, and the second is judged as input {} (its required field is missing)
    assert post(extra).status == 200
    assert _error(post(no_input), 422, "invalid_input")["details"] == [
        {"field": "ticketNumber", "message": "Field required"}
    ]


def test_a_body_that_is_not_utf8_is_400_bad_request(
    shape: str, make_event: EventBuilder, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN signed bytes that are not UTF-8 (only a base64-encoded body can carry them)
    event = make_event(shape, "POST", b'\xff\xfe{"version": 1}', base64_body=True)
    # WHEN they arrive
    # THEN 400 bad_request
    assert "UTF-8" in _error(invoke(event), 400, "bad_request")["message"]


@pytest.mark.parametrize(
    ("tool_name", "tool_input", "details"),
    [
        pytest.param(
            "closeTicket",
            {"reason": "solved"},
            [{"field": "ticketNumber", "message": "Field required"}],
            id="missing (by alias)",
        ),
        pytest.param(
            "closeTicket",
            {"ticket_number": "TCK-1043", "ticketNumber": "TCK-1043", "reason": "solved"},
            [{"field": "ticket_number", "message": "Extra inputs are not permitted"}],
            id="extra (the Python name is not the schema name)",
        ),
        pytest.param(
            "setPriority",
            {"ticketNumber": "TCK-1043", "queue": "shipping", "priority": "3"},
            [{"field": "priority", "message": "Input should be a valid integer"}],
            id="wrong type (string for integer)",
        ),
        pytest.param(
            "issueCredit",
            {"ticketNumber": "TCK-1042", "amount": 5, "reason": "outage", "notifyCustomer": "yes"},
            [{"field": "notifyCustomer", "message": "Input should be a valid boolean"}],
            id="wrong type (string for boolean)",
        ),
        pytest.param(
            "setPriority",
            {"ticketNumber": "TCK-1043", "queue": "shipping", "priority": 2.5},
            [{"field": "priority", "message": "Input should be a valid integer"}],
            id="wrong type (fraction for integer)",
        ),
        pytest.param(
            "issueCredit",
            {"ticketNumber": "TCK-1042", "amount": 5, "reason": "bored"},
            [{"field": "reason", "message": "Input should be 'outage', 'late_reply', 'billing_error' or 'other'"}],
            id="bad enum (Literal)",
        ),
        pytest.param(
            "closeTicket",
            {"ticketNumber": "TCK-1043", "reason": "SOLVED"},
            [{"field": "reason", "message": "Input should be 'solved', 'duplicate' or 'no_reply'"}],
            id="bad enum (Enum)",
        ),
        pytest.param(
            "issueCredit",
            {"ticketNumber": "TCK-1042", "amount": 0, "reason": "outage"},
            [{"field": "amount", "message": "Input should be greater than 0"}],
            id="failed constraint (gt)",
        ),
        pytest.param(
            "closeTicket",
            {"ticketNumber": "TCK-1043", "reason": "solved", "note": "n" * 501},
            [{"field": "note", "message": "String should have at most 500 characters"}],
            id="failed constraint (max_length)",
        ),
    ],
)
def test_input_that_breaks_the_schema_is_422_with_each_field_by_schema_name(
    tool_name: str, tool_input: dict[str, Any], details: list[dict[str, str]], post: Callable[..., TestAnswer]
) -> None:
    # GIVEN a call whose input breaks the tool's model in one field
    # WHEN it arrives
    error = _error(post(call_body(tool_name, tool_input)), 422, "invalid_input")
    # THEN 422 invalid_input names that field as the manifest's schema does, and why
    assert error["details"] == details
    assert details[0]["field"] in error["message"]


def test_every_bad_field_is_listed(post: Callable[..., TestAnswer]) -> None:
    # GIVEN a call that gets three fields wrong at once
    body = call_body("issueCredit", {"amount": -1, "reason": "bored", "coupon": "X"})
    # WHEN it arrives
    error = _error(post(body), 422, "invalid_input")
    # THEN each one is in the details
    assert sorted(detail["field"] for detail in error["details"]) == ["amount", "coupon", "reason", "ticketNumber"]


@pytest.mark.parametrize("tool_input", [[], "TCK-1042", None, 3], ids=["list", "string", "null", "number"])
def test_input_that_is_not_an_object_is_422(tool_input: Any, post: Callable[..., TestAnswer]) -> None:
    # GIVEN a call whose input is not a JSON object
    body = _document(version=1, op="call", tool="ticketStatus", input=tool_input)
    # WHEN it arrives
    error = _error(post(body), 422, "invalid_input")
    # THEN the input as a whole is named
    assert [detail["field"] for detail in error["details"]] == ["input"]


def test_a_422_does_not_echo_the_customers_input(post: Callable[..., TestAnswer]) -> None:
    # GIVEN a bad call whose values are a customer's data
    body = call_body("setPriority", {"ticketNumber": "TCK-1043", "queue": "shipping", "priority": "jane@example.com"})
    # WHEN it arrives
    answer = post(body)
    # THEN the answer names the field, not the value
    assert answer.status == 422
    assert "jane@example.com" not in json.dumps(answer.body)


class _CrashInput(BaseModel):
    ticketNumber: str = Field(description="The order number.")


@pytest.mark.usefixtures("deployed")
def test_a_crashing_tool_is_500_internal_error_naming_the_request_id_only(
    scratch_registry: Registry, post: Callable[..., TestAnswer], logs: LogCapture
) -> None:
    # GIVEN a tool that fails with an exception quoting the customer's input
    @tool(risk="low")
    def fragile(args: _CrashInput) -> str:
        """Fails."""
        raise RuntimeError(f"database rejected {args.ticketNumber} for jane@example.com")

    context = FakeLambdaContext()
    # WHEN Median calls it
    answer = post(call_body("fragile", {"ticketNumber": "TCK-SECRET-7"}, callId="call_crash_1"), context=context)
    # THEN 500 internal_error names the request id, never the exception's text
    error = _error(answer, 500, "internal_error")
    assert context.aws_request_id in error["message"]
    assert "jane@example.com" not in json.dumps(answer.body)
    assert "RuntimeError" not in json.dumps(answer.body)
    # AND the log has the crash with the call id and the answer's reference (so an operator finds it),
    # but not the exception's message
    [record] = [record for record in logs.records() if record["level"] == "ERROR"]
    assert record["call_id"] == "call_crash_1"
    assert record["reference"] == context.aws_request_id
    assert record["error_type"] == "RuntimeError"
    assert "jane@example.com" not in logs.text()
    assert "TCK-SECRET-7" not in logs.text()


def test_a_return_value_that_is_not_json_is_500_internal_error(
    scratch_registry: Registry, post: Callable[..., TestAnswer]
) -> None:
    # GIVEN a tool that returns something JSON cannot carry
    @tool(risk="low")
    def returns_a_set(args: _CrashInput) -> object:
        """Returns a set."""
        return {args.ticketNumber}

    # WHEN Median calls it
    # THEN 500 internal_error, not a Lambda failure
    _error(post(call_body("returnsASet", {"ticketNumber": "TCK-1"})), 500, "internal_error")


def test_a_crashing_diagnostics_function_is_500_internal_error(
    scratch_registry: Registry, post: Callable[..., TestAnswer]
) -> None:
    # GIVEN diagnostics that fail
    def broken_health() -> object:
        raise ConnectionError("store at 10.0.0.7 is down")

    scratch_registry.diagnostics[:] = [broken_health]
    # WHEN Median asks for diagnostics
    answer = post(_document(version=1, op="diagnostics"))
    # THEN 500 internal_error without the exception's text
    _error(answer, 500, "internal_error")
    assert "10.0.0.7" not in json.dumps(answer.body)


def _padded_call(size: int) -> bytes:
    """A valid ticketStatus call of exactly `size` bytes (JSON allows trailing whitespace)."""
    body = with_call_id(call_body("ticketStatus", {"ticketNumber": "TCK-1042"}))
    return body + b" " * (size - len(body))


def test_the_cap_counts_bytes_not_characters(make_event: EventBuilder, invoke: Callable[..., TestAnswer]) -> None:
    # GIVEN a body under the cap in characters but over it in UTF-8 bytes
    note = "é" * (MAX_BODY_BYTES // 2)
    document = {"version": 1, "op": "call", "tool": "closeTicket", "input": {"ticketNumber": "TCK-1", "note": note}}
    body = json.dumps(document, ensure_ascii=False).encode("utf-8")
    assert len(body.decode("utf-8")) < MAX_BODY_BYTES < len(body)
    # WHEN it arrives
    # THEN 413 too_large
    _error(invoke(make_event("http_api_v2", "POST", body)), 413, "too_large")


def test_base64_that_does_not_decode_is_400(make_event: EventBuilder, invoke: Callable[..., TestAnswer]) -> None:
    # GIVEN a body marked base64-encoded that is not base64
    event = make_event("http_api_v2", "POST", b"", key=None)
    event.update(body="not base64 at all!", isBase64Encoded=True)
    # WHEN it arrives
    # THEN 400 bad_request, before any signature is checked
    _error(invoke(event), 400, "bad_request")


def test_a_base64_body_is_verified_and_parsed_as_its_decoded_bytes(
    shape: str, make_event: EventBuilder, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN a call signed over its raw bytes and delivered base64-encoded (as API Gateway does for binary types)
    body = with_call_id(call_body("ticketStatus", {"ticketNumber": "TCK-1042"}))
    event = make_event(shape, "POST", body, base64_body=True)
    assert event["body"] == base64.b64encode(body).decode()
    # WHEN it arrives
    # THEN the signature verifies against the decoded bytes and the tool runs
    assert invoke(event).body["output"]["status"] == "waiting"


@pytest.mark.usefixtures("deployed")
def test_no_log_line_carries_the_key_a_signature_or_an_input_value(
    scratch_registry: Registry, make_event: EventBuilder, invoke: Callable[..., TestAnswer], logs: LogCapture
) -> None:
    # GIVEN a tool that crashes, beside the sample tools
    @tool(risk="low")
    def fragile_lookup(args: _CrashInput) -> str:
        """Fails."""
        raise ValueError(args.ticketNumber)

    secret_value = "TCK-PRIVATE-4242"
    bodies = [
        call_body("ticketStatus", {"ticketNumber": secret_value}),
        call_body("setPriority", {"ticketNumber": secret_value, "queue": "billing", "priority": "many"}),
        call_body("fragileLookup", {"ticketNumber": secret_value}),
    ]
    events = [make_event("http_api_v2", "POST", with_call_id(body)) for body in bodies]
    events.append(make_event("http_api_v2", "POST", bodies[0], key="mk_live_forger"))
    # WHEN a tool_error, a 422, a crash and a forged request are answered
    statuses = [invoke(event).status for event in events]
    # THEN none of the log lines holds the key, any signature sent, or the input value
    assert statuses == [200, 422, 500, 401]
    text = logs.text()
    assert text
    assert TEST_KEY not in text
    assert secret_value not in text
    for event in events:
        assert event["headers"]["median-signature"].split("v1=")[1] not in text
