"""POST's own failures, as Median and an operator meet them.

Each failure the handler answers for a tool (a crash, an answer too large to send, an overrun, a
secret that cannot be read, or not in time) is answered in POST's shape with the cause and what to do, and
logged once, on a line an operator finds by the answer's reference and by the call's id. A call
whose tool may not have finished, or did not run, runs again on a retry; a refusal is the error alone.
"""

from __future__ import annotations

import datetime
import decimal
import json
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda import Secret, tool
from median_lambda.calls.dispatch import STORE_CALL_SECONDS, handle_post
from median_lambda.calls.idempotency import table_name
from median_lambda.protocol import MAX_RESPONSE_BYTES, TOOL_TIME_MARGIN_SECONDS
from median_lambda.testing import TEST_KEY, FakeLambdaContext, call_body, dev_key, signed_event
from pydantic import BaseModel, Field, model_validator

from tests.conftest import BOTH
from tests.fault_relay import Fault

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from median_lambda.authoring.registry import Registry
    from median_lambda.testing import MedianAWS, MedianTestClient, TestAnswer

    from tests.conftest import LogCapture
    from tests.fault_relay import FaultRelay

SECRET_NAME = "median-tools/courier-token"
TOKEN = "courier-token-value-51c2"  # a secret's value: no answer or log line may carry it
CALL_ID = "call_failure_1"
_REFERENCE = re.compile(r"[Rr]eference (?P<reference>[^ ]+)\.$")


class Note(BaseModel):
    note: str = ""


def _descend(levels: int) -> dict[str, Any]:
    if levels == 0:
        raise LookupError("no such parcel")
    return _descend(levels - 1)


def _register_failing_tools(runs: list[str]) -> None:
    @tool(risk="low", name="crashNow")
    def crash_now(args: Note) -> dict[str, Any]:
        """Crash, as a tool with a bug does."""
        runs.append("crashNow")
        return _descend(12)

    @tool(risk="low", name="returnTooMuch")
    def return_too_much(args: Note) -> dict[str, Any]:
        """Return more than Lambda can send."""
        runs.append("returnTooMuch")
        return {"blob": "x" * MAX_RESPONSE_BYTES}

    @tool(risk="low", name="readsSecret")
    def reads_secret(args: Note, token: str = Secret(SECRET_NAME)) -> dict[str, Any]:
        """Tell the length of the courier's token."""
        runs.append("readsSecret")
        return {"tokenLength": len(token)}

    @tool(risk="high", name="returnNoJson")
    def return_no_json(args: Note) -> dict[str, Any]:
        """Book a pickup, and return what JSON cannot hold, as a bug would."""
        runs.append("returnNoJson")
        return {"booked": {"slot-1", "slot-2"}}

    @tool(risk="high", name="overrunOnce")
    def overrun_once(args: Note) -> dict[str, Any]:
        """Refund, but the first time the payment service hangs."""
        runs.append("overrunOnce")
        if runs.count("overrunOnce") == 1:
            # In its own code: a wait in threading's (`_hung.wait()`) would say another thread's work runs on.
            ends = time.monotonic() + 30
            while not _hung.is_set() and time.monotonic() < ends:
                time.sleep(0.01)
        return {"refunded": True}


# What the first run of overrunOnce waits on: set when the test ends, so no thread outlives it.
_hung = threading.Event()


@pytest.fixture
def runs(scratch_registry: Registry) -> Iterator[list[str]]:
    found: list[str] = []
    _hung.clear()
    _register_failing_tools(found)
    yield found
    _hung.set()


def _secret_missing(median_aws: MedianAWS, fault_relay: FaultRelay, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nobody has created the secret."""


def _secrets_manager_stalled(median_aws: MedianAWS, fault_relay: FaultRelay, monkeypatch: pytest.MonkeyPatch) -> None:
    median_aws.create_secret(SECRET_NAME, TOKEN)
    monkeypatch.setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", fault_relay.endpoint)
    fault_relay.fail(Fault.STALL)


def _nothing_broken(median_aws: MedianAWS, fault_relay: FaultRelay, monkeypatch: pytest.MonkeyPatch) -> None:
    median_aws.create_secret(SECRET_NAME, TOKEN)


@dataclass(frozen=True)
class Failure:
    """A way a call fails that the handler answers for, and what Median and the log then read."""

    tool: str
    status: int
    code: str
    message: str  # the answer's message, {reference} filled in
    log_message: str
    breaks: Callable[[MedianAWS, FaultRelay, pytest.MonkeyPatch], None] = _nothing_broken
    output_on_retry: dict[str, Any] = field(default_factory=lambda: {"tokenLength": len(TOKEN)})
    ran_before_failing: bool = False  # the tool itself started, and its first run counts


FAILURES = [
    pytest.param(
        Failure(
            "crashNow",
            500,
            "internal_error",
            "The tool failed on the server; reference {reference}.",
            "Tool crashNow crashed",
        ),
        id="a crash",
    ),
    pytest.param(
        Failure(
            "returnTooMuch",
            500,
            "internal_error",
            f"The tool's answer is too large to send: Lambda returns at most {MAX_RESPONSE_BYTES:,} bytes. "
            "Reference {reference}.",
            "Tool returnTooMuch returned an answer too large for Lambda to send",
        ),
        id="an answer too large",
    ),
    pytest.param(
        Failure(
            "returnNoJson",
            500,
            "internal_error",
            "The tool failed on the server; reference {reference}.",
            "Tool returnNoJson (its return value is not JSON) crashed",
        ),
        id="a return value that is not JSON",
    ),
]
# Those whose tool may not have finished, or did not run: a retry runs them again.
NOT_FINISHED = [
    pytest.param(
        Failure(
            "overrunOnce",
            504,
            "timeout",
            "The tool did not finish in the time this function had left, so it is unknown whether it did its "
            "work; check before retrying. Reference {reference}.",
            "Tool overrunOnce timed out",
            output_on_retry={"refunded": True},
            ran_before_failing=True,
        ),
        id="a tool that overruns",
    ),
    pytest.param(
        Failure(
            "readsSecret",
            500,
            "internal_error",
            "The tool could not read its configuration or secrets, so it did not run; retry later. "
            "Reference {reference}.",
            "Tool readsSecret did not run: what it takes could not be read",
            breaks=_secret_missing,
        ),
        id="a secret that cannot be read",
    ),
    pytest.param(
        Failure(
            "readsSecret",
            504,
            "timeout",
            "Reading the tool's secrets took longer than the time this function had left, so the tool did not "
            "run; retry. Reference {reference}.",
            "Tool readsSecret did not run: reading its secrets took the time it had",
            breaks=_secrets_manager_stalled,
        ),
        id="a secret read that outlasts the call",
    ),
]


@pytest.fixture
def failure(
    request: pytest.FixtureRequest, median_aws: MedianAWS, fault_relay: FaultRelay, monkeypatch: pytest.MonkeyPatch
) -> Failure:
    """The failure the test is given, its cause in place (on an empty moto, before the idempotency table)."""
    given: Failure = request.param
    given.breaks(median_aws, fault_relay, monkeypatch)
    return given


def _call(client: MedianTestClient, tool_name: str, call_id: str = CALL_ID) -> TestAnswer:
    """A call with a callId, as Median sends it, with two seconds for the tool: a stalled read ends in its time.

    Through the idempotency table, the function keeps time for the table's requests beside them.
    """
    body = call_body(tool_name, {}, callId=call_id)
    seconds = 2 + (3 * STORE_CALL_SECONDS if table_name() else 0)
    return client.send(signed_event("POST", body, key=client.key), FakeLambdaContext(timeout_seconds=seconds))


def _reference_in(message: str) -> str:
    found = _REFERENCE.search(message)
    assert found, message
    return found["reference"]


@pytest.mark.parametrize("configuration", BOTH, indirect=True)
@pytest.mark.parametrize("failure", FAILURES + NOT_FINISHED, indirect=True)
def test_a_failure_is_answered_in_posts_shape_with_its_cause_and_logged_once_under_its_reference(
    failure: Failure,
    configuration: str,  # after `failure`'s median_aws, which empties moto
    runs: list[str],
    client: MedianTestClient,
    logs: LogCapture,
) -> None:
    # GIVEN a tool that will fail in one of the ways the handler answers for it
    # WHEN Median calls it
    answer = _call(client, failure.tool)
    # THEN the answer is POST's error, exactly: the cause, what to do, and a reference
    reference = _reference_in(answer.body["error"]["message"])
    assert answer.status == failure.status
    assert answer.body == {
        "version": 1,
        "ok": False,
        "error": {"code": failure.code, "message": failure.message.format(reference=reference)},
    }
    # AND one error line is logged, which the reference and the call's id both find
    [record] = [record for record in logs.records() if record["level"] == "ERROR"]
    assert record["message"] == failure.log_message
    assert record["reference"] == reference
    assert record["call_id"] == CALL_ID
    assert TOKEN not in logs.text()


def test_a_crash_logs_its_type_and_its_last_eight_frames_ending_where_it_was_raised(
    runs: list[str], client: MedianTestClient, logs: LogCapture
) -> None:
    # GIVEN a tool that crashes twelve calls deep in its own code
    # WHEN it is called
    _call(client, "crashNow")
    # THEN the log line names the exception's type and the eight frames nearest the raise, the last one the raise
    [record] = [record for record in logs.records() if record["level"] == "ERROR"]
    assert record["error_type"] == "LookupError"
    assert len(record["frames"]) == 8
    assert all(frame.endswith(" in _descend") for frame in record["frames"])
    raise_line = next(number for number, line in enumerate(_source_lines(), 1) if 'raise LookupError("no such' in line)
    assert record["frames"][-1] == f"{__file__}:{raise_line} in _descend"
    # AND never the exception's text, which may quote the customer
    assert all("no such parcel" not in json.dumps(record) for record in logs.records())


def _source_lines() -> list[str]:
    return Path(__file__).read_text(encoding="utf-8").splitlines()


def test_an_answer_too_large_logs_how_large_it_was(runs: list[str], client: MedianTestClient, logs: LogCapture) -> None:
    # GIVEN a tool whose output is over Lambda's limit
    # WHEN it is called
    _call(client, "returnTooMuch")
    # THEN the log line says how many characters the answer had, over the limit
    [record] = [record for record in logs.records() if record["level"] == "ERROR"]
    answer = {"version": 1, "ok": True, "output": {"blob": "x" * MAX_RESPONSE_BYTES}}
    assert record["answer_characters"] == len(json.dumps(answer, separators=(",", ":")))


def test_a_crash_off_lambda_is_explained_on_stderr_under_the_tool_and_the_answers_reference(
    runs: list[str], client: MedianTestClient, logs: LogCapture
) -> None:
    # GIVEN a crashing tool, run on the author's machine (not deployed)
    # WHEN it is called
    answer = _call(client, "crashNow")
    # THEN stderr names the tool and the reference the answer carries, so the author can match them
    reference = _reference_in(answer.body["error"]["message"])
    assert f"Tool crashNow crashed; its answer is 500 internal_error, reference {reference}." in logs.text()


@pytest.mark.parametrize("failure", NOT_FINISHED, indirect=True)
def test_a_call_that_did_not_finish_runs_again_on_the_retry(
    failure: Failure,
    idempotency_table: str,  # after `failure`'s median_aws, which empties moto
    median_aws: MedianAWS,
    fault_relay: FaultRelay,
    monkeypatch: pytest.MonkeyPatch,
    runs: list[str],
    client: MedianTestClient,
) -> None:
    # GIVEN a call, through the idempotency table, whose tool overran, or did not run for want of its secret
    assert _call(client, failure.tool).status == failure.status
    # WHEN what it lacked is back (the secret readable, the network well) and Median retries the same callId
    fault_relay.fail(Fault.NONE)
    monkeypatch.delenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", raising=False)
    if failure.breaks is _secret_missing:
        median_aws.create_secret(SECRET_NAME, TOKEN)
    _forget_the_failed_read()
    answer = _call(client, failure.tool)
    # THEN the tool runs and answers, rather than the retry getting the failure back
    assert answer.status == 200, answer.body
    assert answer.body["output"] == failure.output_on_retry
    assert runs == [failure.tool] * (1 + failure.ran_before_failing)


def test_a_tool_that_did_its_work_but_returned_no_json_is_not_run_again_on_a_retry(
    idempotency_table: str, runs: list[str], client: MedianTestClient
) -> None:
    # GIVEN a call through the idempotency table whose tool did its work, then returned what JSON cannot hold
    first = _call(client, "returnNoJson")
    assert first.status == 500
    # WHEN Median retries the same callId
    retry = _call(client, "returnNoJson")
    # THEN the retry gets the same answer, and the tool, which did its work, did not run again
    assert (retry.status, retry.body) == (first.status, first.body)
    assert runs == ["returnNoJson"]


def _forget_the_failed_read() -> None:
    """A new container: the failed read is remembered for a floor of seconds in the one that met it."""
    from median_lambda.testing import forget_what_a_container_keeps

    forget_what_a_container_keeps()


def test_a_tools_secret_is_read_for_a_call_with_no_deadline(median_aws: MedianAWS, runs: list[str]) -> None:
    # GIVEN a tool taking a secret, and a caller that passes no Lambda context (no deadline to keep)
    median_aws.create_secret(SECRET_NAME, TOKEN)
    # WHEN it is called
    with dev_key(TEST_KEY):
        answer = handle_post(call_body("readsSecret", {}), "request-1", None)
    # THEN the secret reaches the tool, read without a bound
    assert answer.status == 200
    assert answer.body["output"] == {"tokenLength": len(TOKEN)}


class Refund(BaseModel):
    amount: float


class Window(BaseModel):
    start: int
    end: int

    @model_validator(mode="after")
    def _ends_after_it_starts(self) -> Window:
        if self.end < self.start:
            raise ValueError("end must not be before start")
        return self


def test_a_check_across_fields_is_a_422_that_names_the_input_as_its_field(
    scratch_registry: Registry, client: MedianTestClient
) -> None:
    # GIVEN a tool whose input model checks two fields together
    @tool(risk="low", name="bookWindow")
    def book_window(args: Window) -> dict[str, Any]:
        """Book a delivery window."""
        return {"booked": True}

    # WHEN the fields disagree
    answer = client.call("bookWindow", {"start": 9, "end": 8})
    # THEN 422 names the whole input as the field, with the author's words
    assert answer.status == 422
    assert answer.body["error"]["message"] == "The input does not fit the tool's schema: input."
    assert answer.body["error"]["details"] == [
        {"field": "input", "message": "Value error, end must not be before start"}
    ]


def test_a_retry_that_spells_a_number_otherwise_gets_the_first_answer(
    idempotency_table: str, scratch_registry: Registry, client: MedianTestClient
) -> None:
    # GIVEN a tool taking a fraction, called once with 2.5
    amounts: list[float] = []

    @tool(risk="high", name="refundAmount")
    def refund_amount(args: Refund) -> dict[str, Any]:
        """Refund an amount."""
        amounts.append(args.amount)
        return {"refunded": args.amount}

    first = _send_raw(
        client,
        b'{"version": 1, "op": "call", "callId": "call_refund_1", "tool": "refundAmount", "input": {"amount": 2.5}}',
    )
    # WHEN Median retries it with the same number spelt 2.50, as another serialiser writes it
    retry = _send_raw(
        client,
        b'{"version": 1, "op": "call", "callId": "call_refund_1", "tool": "refundAmount", "input": {"amount": 2.50}}',
    )
    # THEN the retry gets the first answer, and the refund ran once
    assert first.status == 200
    assert (retry.status, retry.body) == (first.status, first.body)
    assert amounts == [2.5]


def _send_raw(client: MedianTestClient, body: bytes) -> TestAnswer:
    return client.send(signed_event("POST", body, key=client.key))


REFUSALS = [
    pytest.param(b"{not json", 400, "bad_request", "The body is not valid JSON (line 1, column 2).", id="not JSON"),
    pytest.param(
        b'{"version": 2, "op": "call", "tool": "crashNow"}',
        400,
        "unsupported_version",
        'This endpoint speaks protocol version 1; send "version": 1.',
        id="another version",
    ),
    pytest.param(
        b'{"version": 1, "op": "call", "tool": "noSuchTool"}',
        404,
        "unknown_tool",
        "This endpoint serves no tool by that name; GET the manifest for its tools.",
        id="an unknown tool",
    ),
    pytest.param(
        b'{"version": 1, "op": "call", "callId": 7, "tool": "crashNow"}',
        400,
        "bad_request",
        "callId must be a string.",
        id="a callId that is no string",
    ),
]


@pytest.mark.parametrize(("body", "status", "code", "message"), REFUSALS)
def test_a_refusal_is_posts_error_and_nothing_else(
    runs: list[str], client: MedianTestClient, body: bytes, status: int, code: str, message: str
) -> None:
    # GIVEN a request the endpoint refuses before any tool runs
    # WHEN it arrives
    answer = _send_raw(client, body)
    # THEN the answer is the error alone: no details, no count of omitted ones, and no tool ran
    assert answer.status == status
    assert answer.body == {"version": 1, "ok": False, "error": {"code": code, "message": message}}
    assert runs == []


class Pickup(BaseModel):
    pickup_at: datetime.datetime = Field(alias="pickupAt")
    fee: decimal.Decimal


def test_a_model_a_tool_returns_is_sent_as_json_by_its_aliases(
    scratch_registry: Registry, client: MedianTestClient
) -> None:
    # GIVEN a tool that returns a pydantic model with a datetime, a Decimal and an alias
    @tool(risk="low", name="nextPickup")
    def next_pickup(args: Note) -> Pickup:
        """When the next pickup is, and what it costs."""
        return Pickup(pickupAt=datetime.datetime(2026, 12, 3, 9, 30, tzinfo=datetime.UTC), fee=decimal.Decimal("4.50"))

    # WHEN it is called
    answer = client.call("nextPickup", {})
    # THEN the output is the model as JSON: the alias Median reads, the datetime and the Decimal as text
    assert answer.status == 200, answer.body
    assert answer.body["output"] == {"pickupAt": "2026-12-03T09:30:00Z", "fee": "4.50"}


def test_a_tools_duration_is_recorded_in_milliseconds(
    scratch_registry: Registry, client: MedianTestClient, logs: LogCapture
) -> None:
    # GIVEN a tool that takes at least a twentieth of a second
    @tool(risk="low", name="takeItsTime")
    def take_its_time(args: Note) -> dict[str, Any]:
        """Answer after a pause."""
        time.sleep(0.05)
        return {"done": True}

    # WHEN it is called
    client.call("takeItsTime", {})
    # THEN its ToolDuration metric, in milliseconds as the unit says, is at least 50
    [emf] = logs.metrics()
    [duration] = [
        metric for metric in emf["_aws"]["CloudWatchMetrics"][0]["Metrics"] if metric["Name"] == "ToolDuration"
    ]
    assert duration["Unit"] == "Milliseconds"
    assert 50 <= emf["ToolDuration"][0] < 60_000  # and well under the minute the call did not take


def test_a_call_with_too_little_time_left_for_the_table_is_a_504_before_the_tool_and_says_how_short(
    idempotency_table: str, runs: list[str], client: MedianTestClient, logs: LogCapture
) -> None:
    # GIVEN a call through the idempotency table, in a Lambda whose time left is half a request short of what
    # the table's two requests need
    body = call_body("crashNow", {}, callId="call_short")
    context = FakeLambdaContext(timeout_seconds=TOOL_TIME_MARGIN_SECONDS + 1.5 * STORE_CALL_SECONDS)
    # WHEN it arrives
    answer = client.send(signed_event("POST", body, key=client.key), context)
    # THEN 504 says the tool did not run, to retry, and what to raise if it persists; the tool never ran
    reference = _reference_in(answer.body["error"]["message"])
    assert answer.status == 504
    assert answer.body["error"] == {
        "code": "timeout",
        "message": "This function had too little time left to run the tool safely, so the tool did not run; retry. "
        f"If this persists, raise the function's timeout. Reference {reference}.",
    }
    assert runs == []
    # AND the log line names the call, the tool, and by how much time it was short: the half request, and the
    # moments the call has taken since it began
    [record] = [record for record in logs.records() if record["level"] == "ERROR"]
    assert record["message"] == "Too little time left to run a call safely; answering 504, the tool did not run"
    assert (record["call_id"], record["tool"]) == ("call_short", "crashNow")
    assert STORE_CALL_SECONDS / 2 < record["seconds_short"] < STORE_CALL_SECONDS
    # to the millisecond, as logged: not rounded to whole seconds, nor finer
    assert isinstance(record["seconds_short"], float)
    assert record["seconds_short"] == round(record["seconds_short"], 3)
