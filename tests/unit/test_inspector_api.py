"""The inspector's JSON API, in process: what the page is given and what a call sends."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda import tool
from median_lambda.authoring.registry import Tool, load_tools, registry
from median_lambda.devserver.inspector import route
from median_lambda.manifest.build import build_manifest
from median_lambda.protocol import KEY_SECRET_ENV, RISKS
from median_lambda.testing import TEST_KEY, dev_key
from pydantic import BaseModel

if TYPE_CHECKING:
    from collections.abc import Iterator

    from median_lambda.authoring.registry import Registry
    from median_lambda.devserver.inspector import Reply

# The inspector shows and calls the sample tools (tests/sample_tools/).
pytestmark = pytest.mark.usefixtures("sample_tools")

PORT = 3000
TOKEN = "the-token-make-serve-printed"
LOCAL = {"host": f"127.0.0.1:{PORT}", "x-inspector-token": TOKEN}


@pytest.fixture(autouse=True)
def signing_with_a_dev_key() -> Iterator[None]:
    with dev_key(TEST_KEY):
        yield


def get(path: str, headers: dict[str, str] | None = None) -> Reply:
    return route("GET", path, headers if headers is not None else LOCAL, b"", port=PORT, token=TOKEN)


def call(document: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[int, Any]:
    sent = {**LOCAL, "content-type": "application/json", "origin": f"http://127.0.0.1:{PORT}", **(headers or {})}
    reply = route("POST", "/_inspector/api/call", sent, json.dumps(document).encode(), port=PORT, token=TOKEN)
    return reply.status, json.loads(reply.body)


def test_the_manifest_view_is_what_the_checker_builds() -> None:
    # GIVEN the sample tools
    manifest, problems = build_manifest(load_tools())
    # WHEN the page asks for the manifest
    reply = get("/_inspector/api/manifest")
    view = json.loads(reply.body)
    # THEN it gets the very manifest GET serves, no problems, the limits and every risk's meaning
    assert reply.status == 200
    assert view["manifest"] == manifest
    assert problems == [] and view["problems"] == []
    assert view["limits"]["tools"] == {"count": 4, "max": 20}
    assert 0 < view["limits"]["bytes"]["size"] < view["limits"]["bytes"]["max"] == 500_000
    assert set(view["risks"]) == set(RISKS)
    assert view["signing"]["available"] is True


class BugInput(BaseModel):
    summary: str


def test_the_manifest_view_lists_every_sync_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a tool that takes a name Median reserves
    reserved = Tool("reportBug", "Files a bug.", "low", BugInput, lambda args: {}, "args", None)
    monkeypatch.setattr(registry, "tools", [*registry.tools, reserved])
    # WHEN the page asks for the manifest
    view = json.loads(get("/_inspector/api/manifest").body)
    # THEN the problem is there as `make check` words it, naming the tool and the field
    assert {"tool": "reportBug", "field": "name", "rule": "is reserved by Median; choose another name"} in [
        {key: problem[key] for key in ("tool", "field", "rule")} for problem in view["problems"]
    ]


def test_a_call_goes_through_the_handler_signed_with_the_dev_key() -> None:
    # GIVEN the inspector
    # WHEN the page calls ticketStatus
    status, reply = call({"op": "call", "tool": "ticketStatus", "input": {"ticketNumber": "TCK-1042"}})
    # THEN the handler verified the signature and ran the tool with a fresh callId
    assert status == 200
    assert reply["status"] == 200
    assert reply["answer"]["output"]["status"] == "waiting"
    assert reply["callId"].startswith("call_")
    sent = json.loads(reply["request"])
    assert sent["callId"] == reply["callId"]
    assert sent["conversation"] == {"id": "conv_inspector"}
    assert isinstance(reply["elapsedMs"], float)


def test_each_call_gets_a_fresh_call_id_unless_the_last_is_reused() -> None:
    # GIVEN one call made
    request = {"op": "call", "tool": "ticketStatus", "input": {"ticketNumber": "TCK-1042"}}
    _, first = call(request)
    # WHEN a second is made fresh, and a third reusing the first's callId
    _, fresh = call(request)
    _, reused = call({**request, "callId": first["callId"]})
    # THEN only the reused one carries the first's callId
    assert fresh["callId"] != first["callId"]
    assert reused["callId"] == first["callId"]
    assert json.loads(reused["request"])["callId"] == first["callId"]


def test_the_curl_command_leaves_the_key_out() -> None:
    # GIVEN a call made from the inspector
    _, reply = call({"op": "call", "tool": "ticketStatus", "input": {"ticketNumber": "O'Brien's order"}})
    curl = reply["curl"]
    # THEN its curl command signs at run time, carries the exact body, and holds neither key nor signature
    assert TEST_KEY not in curl
    assert "v1=" not in curl
    assert '-H "median-signature: $(.venv/bin/python -m median_lambda sign --body "$BODY")"' in curl
    assert curl.startswith("BODY='") and "O'\"'\"'Brien'\"'\"'s order" in curl


def test_a_missing_required_field_comes_back_as_the_handlers_422() -> None:
    # GIVEN the inspector
    # WHEN ticketStatus is called with its required field left out
    _, reply = call({"op": "call", "tool": "ticketStatus", "input": {}})
    # THEN the answer is the handler's 422 with the field named
    assert reply["status"] == 422
    assert reply["errorCode"] == "invalid_input"
    assert reply["answer"]["error"]["details"] == [{"field": "ticketNumber", "message": "Field required"}]


def test_diagnostics_runs_the_declared_function() -> None:
    # GIVEN the sample tools, which declare diagnostics
    # WHEN the page runs diagnostics
    _, reply = call({"op": "diagnostics"})
    # THEN the handler ran it; a diagnostics op carries no callId
    assert reply["status"] == 200
    assert reply["answer"]["output"]["ticketDesk"] == "ok"
    assert reply["callId"] is None


def test_calls_are_off_when_the_key_comes_from_secrets_manager(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a dev server verifying with a key from Secrets Manager, which the inspector never holds
    monkeypatch.setenv(KEY_SECRET_ENV, "median/key")
    # WHEN the page loads and tries a call
    view = json.loads(get("/_inspector/api/manifest").body)
    status, reply = call({"op": "call", "tool": "ticketStatus", "input": {"ticketNumber": "TCK-1042"}})
    # THEN it is told why calls are off, and no call is made
    assert view["signing"]["available"] is False
    assert KEY_SECRET_ENV in view["signing"]["reason"]
    assert status == 503
    assert reply["error"]["code"] == "no_dev_key"


@pytest.mark.parametrize(
    ("headers", "status", "code"),
    # A foreign Host or Origin never gets this far: the server refuses it on every path
    # (tests/integration/test_devserver_guards.py).
    [({"content-type": "text/plain"}, 415, "unsupported_media_type")],
)
def test_calls_from_another_site_are_refused(headers: dict[str, str], status: int, code: str) -> None:
    # GIVEN a page on another site posting to the inspector through the visitor's browser
    # WHEN its call arrives
    refused_status, reply = call({"op": "call", "tool": "ticketStatus", "input": {"ticketNumber": "TCK-1042"}}, headers)
    # THEN it is refused before any tool runs
    assert refused_status == status
    assert reply["error"]["code"] == code


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"op": "delete"}, "op must be one of: call, diagnostics."),
        ({"op": "call"}, "Name the tool to call."),
        ({"op": "call", "tool": "ticketStatus", "input": []}, "input must be a JSON object of the tool's fields."),
        ({"op": "call", "tool": "ticketStatus", "callId": 7}, "callId must be a non-empty string"),
    ],
)
def test_a_malformed_call_request_says_what_to_fix(document: dict[str, Any], message: str) -> None:
    # GIVEN the inspector
    # WHEN a call request is malformed
    status, reply = call(document)
    # THEN it is a 400 that says what is wrong
    assert status == 400
    assert reply["error"]["message"].startswith(message)


def test_wrong_methods_and_paths_are_answered_plainly() -> None:
    # GIVEN the inspector
    # WHEN the call endpoint is read, the page is posted to, and a path that does not exist is asked for
    wrong_method = get("/_inspector/api/call")
    post_page = route("POST", "/_inspector", LOCAL, b"", port=PORT, token=TOKEN)
    missing = get("/_inspector/nothing-here")
    # THEN each gets its own clear status
    assert (wrong_method.status, wrong_method.headers["Allow"]) == (405, "POST")
    assert (post_page.status, post_page.headers["Allow"]) == (405, "GET")
    assert missing.status == 404


RUNS: list[str] = []


class RefundInput(BaseModel):
    order: str


@pytest.fixture
def recorded_high_risk_tool(sample_tools: Registry) -> list[str]:
    """A `high` tool that records each run: the kind of tool a stranger must never run."""
    RUNS.clear()

    def refund_order(args: RefundInput) -> dict[str, str]:
        """Refund an order in full."""
        RUNS.append(args.order)
        return {"refunded": args.order}

    tool(risk="high")(refund_order)
    return RUNS


API_REQUESTS = [("GET", "manifest"), ("GET", "revision"), ("POST", "call")]
WRONG_TOKENS = {
    "none": ({}, 401, "unauthorized"),
    "empty": ({"x-inspector-token": ""}, 401, "unauthorized"),
    "another server's": ({"x-inspector-token": "a-token-from-another-run"}, 403, "forbidden"),
    "a prefix of it": ({"x-inspector-token": TOKEN[:-1]}, 403, "forbidden"),
    "it and more": ({"x-inspector-token": f"{TOKEN}x"}, 403, "forbidden"),
    "in capitals": ({"x-inspector-token": TOKEN.upper()}, 403, "forbidden"),
    "in another header": ({"authorization": f"Bearer {TOKEN}"}, 401, "unauthorized"),
}


@pytest.mark.parametrize(("method", "name"), API_REQUESTS)
@pytest.mark.parametrize("wrong", list(WRONG_TOKENS))
def test_the_api_answers_nothing_and_runs_nothing_without_the_printed_token(
    recorded_high_risk_tool: list[str], method: str, name: str, wrong: str
) -> None:
    # GIVEN a process on the machine that reaches the port, but never saw the link make serve printed
    token_headers, status, code = WRONG_TOKENS[wrong]
    headers = {"host": f"127.0.0.1:{PORT}", "content-type": "application/json", **token_headers}
    body = json.dumps({"op": "call", "tool": "refundOrder", "input": {"order": "ORD-1"}}).encode()
    # WHEN it asks the inspector's API
    reply = route(method, f"/_inspector/api/{name}", headers, body if method == "POST" else b"", port=PORT, token=TOKEN)
    # THEN it is refused with a status and a line saying where the token comes from, and nothing ran
    answer = json.loads(reply.body)
    assert (reply.status, answer["error"]["code"]) == (status, code)
    assert "the link `make serve` printed" in answer["error"]["message"]
    assert TOKEN not in reply.body.decode()
    assert recorded_high_risk_tool == []


def test_with_the_printed_token_the_high_risk_tool_runs(recorded_high_risk_tool: list[str]) -> None:
    # GIVEN the page, holding the token from the printed link
    # WHEN it calls the high-risk tool
    status, reply = call({"op": "call", "tool": "refundOrder", "input": {"order": "ORD-1"}})
    # THEN it runs, once
    assert (status, reply["status"]) == (200, 200)
    assert recorded_high_risk_tool == ["ORD-1"]


def test_the_page_itself_holds_no_secret_and_is_served_to_anyone() -> None:
    # GIVEN a request for the page without a token (a bookmark, or a second tab)
    # WHEN it is answered
    reply = route("GET", "/_inspector", {"host": f"127.0.0.1:{PORT}"}, b"", port=PORT, token=TOKEN)
    # THEN it is the page, which holds neither the token nor the key, and will ask for the link
    assert reply.status == 200
    assert TOKEN.encode() not in reply.body and TEST_KEY.encode() not in reply.body


def test_a_lone_surrogate_in_the_call_id_comes_back_as_json_with_the_handlers_400() -> None:
    # GIVEN a call whose callId holds a lone surrogate (a "\ud800" escape alone)
    # WHEN the inspector makes it
    status, reply = call(
        {"op": "call", "tool": "ticketStatus", "input": {"ticketNumber": "TCK-1"}, "callId": "c\ud800"}
    )
    # THEN the answer is JSON in UTF-8, holding the handler's 400, and the callId with U+FFFD in its place
    assert status == 200
    assert (reply["status"], reply["errorCode"]) == (400, "bad_request")
    assert reply["callId"] == "c\ufffd"
