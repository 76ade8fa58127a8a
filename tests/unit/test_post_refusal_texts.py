"""The words of every POST refusal: the cause each names, and what the sender should do instead.

tests/integration/test_post.py pins each refusal's status and code; Median's agent and the
person debugging an integration act on the message, so here each message is pinned too.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda.protocol import MAX_INPUT_ERROR_DETAILS
from median_lambda.testing import FakeLambdaContext, signed_event

if TYPE_CHECKING:
    from median_lambda.testing import MedianTestClient, TestAnswer

    from tests.scratch_tools import ScratchTools


def post(client: MedianTestClient, body: bytes, context: FakeLambdaContext | None = None) -> TestAnswer:
    # Base64, as API Gateway sends a body that is not UTF-8 text: any bytes arrive as sent.
    event = signed_event("POST", body, key=client.key, base64_body=True)
    return client.send(event, context or FakeLambdaContext())


def message_of(answer: TestAnswer, status: int, code: str) -> str:
    assert answer.status == status
    assert answer.body["version"] == 1
    assert answer.body["ok"] is False
    assert answer.body["error"]["code"] == code
    message: str = answer.body["error"]["message"]
    return message


def call(tool: str = "countRunsFresh", **members: Any) -> bytes:
    return json.dumps({"version": 1, "op": "call", "tool": tool, **members}).encode("utf-8")


BAD_REQUESTS = [
    pytest.param(b"\xff\xfe", "The body is not UTF-8 text.", id="not UTF-8"),
    pytest.param(b'{"version": 1,\n  "op": ', "The body is not valid JSON (line 2, column 9).", id="truncated"),
    pytest.param(
        b'{"version": 1, "op": "call", "tool": "countRunsFresh", "input": {"note": NaN}}',
        "The body is not JSON this endpoint accepts: NaN is not JSON.",
        id="NaN",
    ),
    pytest.param(
        b'{"version": 1, "op": "call", "tool": "countRunsFresh", "input": {"note": -Infinity}}',
        "The body is not JSON this endpoint accepts: -Infinity is not JSON.",
        id="-Infinity",
    ),
    pytest.param(
        b'{"version": 1, "op": "call", "tool": "countRunsFresh", "input": {"n": 1e999}}',
        "The body is not JSON this endpoint accepts: a number too large for a double.",
        id="1e999",
    ),
    pytest.param(
        b'{"version": 1, "op": "call", "tool": "countRunsFresh", "input": {"n": -1e999}}',
        "The body is not JSON this endpoint accepts: a number too large for a double.",
        id="-1e999",
    ),
    pytest.param(
        b'{"version": 1, "version": 1, "op": "diagnostics"}',
        "The body is not JSON this endpoint accepts: an object repeats a key.",
        id="repeated key",
    ),
    pytest.param(
        b"[" * 100_000 + b"]" * 100_000,
        "The body is not JSON this endpoint accepts: it nests objects and arrays more than 64 deep.",
        id="nests too deeply",
    ),
    pytest.param(b"[1, 2]", "The body must be a JSON object.", id="array"),
    pytest.param(b'{"version": 1, "op": "list"}', "op must be one of: call, diagnostics.", id="unknown op"),
    pytest.param(call(callId=5), "callId must be a string.", id="callId a number"),
    pytest.param(call(conversation="conv_9"), "conversation must be a JSON object.", id="conversation text"),
    pytest.param(call(tool=""), 'A call must name its tool: "tool": "<name>".', id="empty tool"),
    pytest.param(call(tool=7), 'A call must name its tool: "tool": "<name>".', id="tool a number"),
]


@pytest.mark.parametrize(("body", "message"), BAD_REQUESTS)
def test_each_bad_request_says_what_is_wrong(
    client: MedianTestClient, scratch: ScratchTools, body: bytes, message: str
) -> None:
    # GIVEN a signed body that is not a well-formed call in one way
    # WHEN it arrives
    answer = post(client, body)
    # THEN the 400 says which way, and the tool did not run
    assert message_of(answer, 400, "bad_request") == message
    assert not scratch.runs


@pytest.mark.parametrize("member", ["callId", "conversation", "input"])
def test_a_lone_surrogate_is_refused_naming_its_member_and_the_fix(
    client: MedianTestClient, scratch: ScratchTools, member: str
) -> None:
    # GIVEN a call with a lone surrogate escape in one member
    document = {"callId": "call_1", "conversation": {"id": "conv"}, "input": {"note": "x"}}
    document[member] = {"note": "\ud800"} if member != "callId" else "\ud800"
    # WHEN it arrives
    answer = post(client, call(**document))
    # THEN the 400 names the member, the cause, and the two ways to send the text
    assert message_of(answer, 400, "bad_request") == (
        f"{member} holds a lone surrogate (a \\uD800-\\uDFFF escape without its pair), which is no Unicode text; "
        "escape both halves of a pair, or send the character as UTF-8."
    )
    assert not scratch.runs


@pytest.mark.parametrize("version", [2, 0, True, "1", 1.0, None])
def test_a_version_other_than_1_is_told_which_to_send(
    client: MedianTestClient, scratch: ScratchTools, version: Any
) -> None:
    # GIVEN a call with another version, or a value that only looks like 1
    body = json.dumps({"version": version, "op": "call", "tool": "countRunsFresh"}).encode("utf-8")
    # WHEN it arrives
    # THEN the 400 says which version this endpoint speaks and how to send it
    assert message_of(post(client, body), 400, "unsupported_version") == (
        'This endpoint speaks protocol version 1; send "version": 1.'
    )


def test_an_unknown_tool_is_told_where_to_find_the_tools(client: MedianTestClient, scratch: ScratchTools) -> None:
    # GIVEN a call to a tool the endpoint does not serve
    # WHEN it arrives
    # THEN the 404 points at the manifest
    assert message_of(post(client, call("noSuchTool")), 404, "unknown_tool") == (
        "This endpoint serves no tool by that name; GET the manifest for its tools."
    )


def test_diagnostics_where_none_is_declared_says_so(client: MedianTestClient, scratch: ScratchTools) -> None:
    # GIVEN an endpoint with no @diagnostics function
    # WHEN diagnostics is asked for
    answer = post(client, b'{"version": 1, "op": "diagnostics"}')
    # THEN the 404 says none is declared
    assert message_of(answer, 404, "no_diagnostics") == "This endpoint declares no diagnostics function."


def test_input_that_breaks_the_schema_names_each_field_once(client: MedianTestClient, scratch: ScratchTools) -> None:
    # GIVEN an input with a wrong type and two unknown fields
    answer = post(client, call(input={"note": 5, "zeta": 1, "alpha": 2}))
    # WHEN it is validated
    # THEN the 422 names each field, once and in order, and lists a detail for each problem
    assert message_of(answer, 422, "invalid_input") == "The input does not fit the tool's schema: alpha, note, zeta."
    assert sorted(detail["field"] for detail in answer.body["error"]["details"]) == ["alpha", "note", "zeta"]
    assert "omitted" not in answer.body["error"]


def test_input_that_is_not_an_object_is_told_so(client: MedianTestClient, scratch: ScratchTools) -> None:
    # GIVEN an input that is a list
    answer = post(client, call(input=["note"]))
    # WHEN it is validated
    # THEN the 422 says the input as a whole must be an object of the tool's fields
    assert message_of(answer, 422, "invalid_input") == "The input does not fit the tool's schema: input."
    assert answer.body["error"]["details"] == [
        {"field": "input", "message": "Input should be a JSON object of the tool's fields"}
    ]


@pytest.mark.parametrize("extra", [0, 1, 50], ids=["exactly the cap", "one over", "many over"])
def test_more_problems_than_listed_say_how_many_and_how_many_are_listed(
    client: MedianTestClient, scratch: ScratchTools, extra: int
) -> None:
    # GIVEN an input with as many unknown fields as the answer lists, or more
    count = MAX_INPUT_ERROR_DETAILS + extra
    answer = post(client, call(input={f"f{index:03}": 1 for index in range(count)}))
    # WHEN it is validated
    message = message_of(answer, 422, "invalid_input")
    # THEN the first MAX_INPUT_ERROR_DETAILS are listed; past them the message counts them all
    assert len(answer.body["error"]["details"]) == MAX_INPUT_ERROR_DETAILS
    if extra:
        assert message.endswith(f" ({count:,} problems; the first {MAX_INPUT_ERROR_DETAILS} are listed).")
        assert answer.body["error"]["omitted"] == extra
    else:
        assert "problems;" not in message
        assert "omitted" not in answer.body["error"]


def test_a_crash_gives_only_the_reference(client: MedianTestClient, scratch: ScratchTools) -> None:
    # GIVEN a tool that crashes quoting its input
    context = FakeLambdaContext()
    # WHEN it is called
    answer = post(client, call("crashQuotingInput", input={"note": "secret order"}), context)
    # THEN the 500 says the tool failed and gives the reference to search the logs by, and nothing else
    assert message_of(answer, 500, "internal_error") == (
        f"The tool failed on the server; reference {context.aws_request_id}."
    )


def test_a_timeout_says_the_work_may_be_done_and_to_check_before_retrying(
    client: MedianTestClient, scratch: ScratchTools
) -> None:
    # GIVEN a tool that runs past the time its Lambda has left
    context = FakeLambdaContext(timeout_seconds=0.8)
    # WHEN it is called
    answer = post(client, call("waitForRelease"), context)
    scratch.release.set()
    # THEN the 504 says what is unknown, what to do, and the reference
    assert message_of(answer, 504, "timeout") == (
        "The tool did not finish in the time this function had left, so it is unknown whether it did its work; "
        f"check before retrying. Reference {context.aws_request_id}."
    )


def test_too_little_time_to_start_says_the_tool_did_not_run_and_what_to_raise(
    client: MedianTestClient, scratch: ScratchTools
) -> None:
    # GIVEN a Lambda with less time left than the endpoint keeps for its own steps
    context = FakeLambdaContext(timeout_seconds=0.1)
    # WHEN a call arrives
    answer = post(client, call(), context)
    # THEN the 504 says the tool did not run, to retry, and to raise the timeout if it persists
    assert message_of(answer, 504, "timeout") == (
        "This function had too little time left to run the tool safely, so the tool did not run; retry. "
        f"If this persists, raise the function's timeout. Reference {context.aws_request_id}."
    )
    assert not scratch.runs
