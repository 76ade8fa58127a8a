"""POST (docs/protocol.md §6): what your endpoint refuses, and in which words, before any tool runs.

For each of your tools, input with a field the tool does not have, and input without a field it
requires, is 422 naming the field; a tool you do not serve is 404; a body that is no request is 400;
a body over the cap is 413. Each call carries a callId and reaches the function as deployed, its
idempotency table on: none of these refusals runs your tool or touches the table. Only the size
cap's boundary runs a tool, the suite's own (median_lambda/contract/contract_tools/).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from median_lambda.contract.deployed import NO_SUCH_TOOL, your_tools
from median_lambda.protocol import MAX_BODY_BYTES
from median_lambda.testing import PAYLOAD_FORMATS

if TYPE_CHECKING:
    from types import ModuleType

    from median_lambda.contract.deployed import Endpoint
    from median_lambda.testing import TestAnswer

# A value only the suite sends: an answer that held it would be echoing a customer's input.
CUSTOMERS_VALUE = "jane.contract@example.com"


def _error(answer: TestAnswer, status: int, code: str) -> dict[str, Any]:
    """Asserts an error answer's status, code and POST envelope; returns its error member."""
    assert answer.status == status, answer.body
    assert answer.headers["Content-Type"] == "application/json"
    assert (answer.body["version"], answer.body["ok"]) == (1, False)
    error: dict[str, Any] = answer.body["error"]
    assert error["code"] == code, error
    assert error["message"]
    return error


def _schema_of(tool_name: str) -> dict[str, Any]:
    [served] = [served for served in your_tools() if served.name == tool_name]
    schema: dict[str, Any] = served.input_model.model_json_schema(by_alias=True, mode="validation")
    return schema


def _a_field_it_does_not_have(tool_name: str) -> str:
    fields = set(_schema_of(tool_name).get("properties", {}))
    return next(name for name in (f"contractUnknownField{n}" for n in range(len(fields) + 1)) if name not in fields)


def test_input_with_a_field_your_tool_does_not_have_is_422_naming_that_field(
    your_tool: str, contract_endpoint: Endpoint
) -> None:
    # GIVEN a call of your tool whose input holds a field the tool's schema does not list
    unknown = _a_field_it_does_not_have(your_tool)
    # WHEN Median sends it
    answer = contract_endpoint.call(your_tool, {unknown: CUSTOMERS_VALUE})
    # THEN 422 invalid_input names the field, in the details and in the message, and echoes no value
    error = _error(answer, 422, "invalid_input")
    assert {"field": unknown, "message": "Extra inputs are not permitted"} in error["details"]
    assert error["message"].startswith("The input does not fit the tool's schema: ")
    assert unknown in error["message"]
    assert CUSTOMERS_VALUE not in json.dumps(answer.body)


def test_input_without_a_field_your_tool_requires_is_422_naming_each_one(
    your_tool_requiring_fields: str, contract_endpoint: Endpoint
) -> None:
    # GIVEN a call of your tool whose input leaves out every field the tool requires
    required = _schema_of(your_tool_requiring_fields)["required"]
    # WHEN Median sends it
    answer = contract_endpoint.call(your_tool_requiring_fields, {})
    # THEN 422 invalid_input names each required field, as the manifest's schema names it
    error = _error(answer, 422, "invalid_input")
    for field in required:
        assert {"field": field, "message": "Field required"} in error["details"]
        assert field in error["message"]


def test_a_call_of_a_tool_you_do_not_serve_is_404_unknown_tool(contract_endpoint: Endpoint) -> None:
    # GIVEN a call of a tool this endpoint does not serve
    assert NO_SUCH_TOOL not in [served.name for served in your_tools()]
    # WHEN it arrives
    error = _error(contract_endpoint.call(NO_SUCH_TOOL, {}), 404, "unknown_tool")
    # THEN 404 unknown_tool, pointing at the manifest, without echoing the name
    assert NO_SUCH_TOOL not in error["message"]
    assert "GET the manifest" in error["message"]


def _document(**members: Any) -> bytes:
    return json.dumps(members).encode("utf-8")


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"{not json", id="not JSON"),
        pytest.param(b'{"version": 1, "op": "call",', id="truncated"),
        pytest.param(b'{"version": 1, "op": "call", "tool": "anyTool", "input": {"a": NaN}}', id="NaN"),
        pytest.param(b'{"version": 1, "version": 1, "op": "diagnostics"}', id="repeated key"),
        pytest.param(b"[1, 2]", id="array"),
        pytest.param(b'"call"', id="string"),
        pytest.param(b"null", id="null"),
        pytest.param(b'{"version": 1}', id="no op"),
        pytest.param(b'{"version": 1, "op": "list"}', id="unknown op"),
        pytest.param(b'{"version": 1, "op": null}', id="null op"),
        pytest.param(b'{"version": 1, "op": "call", "input": {}}', id="no tool"),
        pytest.param(b'{"version": 1, "op": "call", "tool": ""}', id="empty tool"),
        pytest.param(b'{"version": 1, "op": "call", "tool": 7}', id="tool not a string"),
        pytest.param(b'{"version": 1, "op": "call", "tool": "anyTool", "callId": 5}', id="callId not a string"),
        pytest.param(b'{"version": 1, "op": "diagnostics", "conversation": "conv_9"}', id="conversation not object"),
    ],
)
def test_a_body_that_is_no_request_is_400_bad_request(body: bytes, contract_endpoint: Endpoint) -> None:
    # GIVEN a signed body that is not a well-formed operation
    # WHEN it arrives
    # THEN 400 bad_request, with a message that says what is wrong
    _error(contract_endpoint.post(body), 400, "bad_request")


@pytest.mark.parametrize("version", [pytest.param(None, id="missing"), 2, 0, "1", True, 1.5, [1]])
def test_a_version_other_than_1_is_400_unsupported_version(version: Any, contract_endpoint: Endpoint) -> None:
    # GIVEN a call whose version is missing or not the number 1
    document: dict[str, Any] = {"op": "call", "tool": NO_SUCH_TOOL, "input": {}, "callId": "call_version"}
    if version is not None:
        document["version"] = version
    # WHEN it arrives
    # THEN it is refused whole, saying which version to send
    error = _error(contract_endpoint.post(json.dumps(document).encode()), 400, "unsupported_version")
    assert '"version": 1' in error["message"]


def test_a_version_is_checked_before_the_op(contract_endpoint: Endpoint) -> None:
    # GIVEN a version 2 request with an op this endpoint does not know
    # WHEN it arrives
    # THEN the version is what is refused: a newer protocol may have new ops
    _error(contract_endpoint.post(_document(version=2, op="stream")), 400, "unsupported_version")


def _padded_call(size: int) -> bytes:
    """A call of the suite's addEntry of exactly `size` bytes, padded inside its conversation, with a callId."""
    start = (
        b'{"version":1,"op":"call","tool":"addEntry","callId":"call_padded",'
        b'"input":{"note":"at the cap"},"conversation":{"pad":"'
    )
    end = b'"}}'
    return start + b"a" * (size - len(start) - len(end)) + end


@pytest.mark.parametrize("payload_format", PAYLOAD_FORMATS)
@pytest.mark.parametrize("base64_body", [False, True], ids=["text", "base64"])
def test_a_body_at_the_cap_is_served_and_one_byte_more_is_413(
    payload_format: str, base64_body: bool, contract_endpoint: Endpoint, contract_tools: ModuleType
) -> None:
    # GIVEN signed calls of exactly the cap and one byte over, as text or base64, through the table
    # WHEN they are sent
    at_cap = contract_endpoint.post(
        _padded_call(MAX_BODY_BYTES), payload_format=payload_format, base64_body=base64_body
    )
    over = contract_endpoint.post(
        _padded_call(MAX_BODY_BYTES + 1), payload_format=payload_format, base64_body=base64_body
    )
    # THEN the first is served; the second is refused as too large, saying the limit, and runs nothing
    assert at_cap.status == 200, at_cap.body
    assert at_cap.body["output"] == {"run": 1, "note": "at the cap"}
    assert f"{MAX_BODY_BYTES:,} bytes" in _error(over, 413, "too_large")["message"]
    assert contract_tools.RUNS["addEntry"] == 1
