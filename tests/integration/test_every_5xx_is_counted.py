"""Every answer of status 500 or more is counted once, in ServerErrors by the version that answered: the series the
rollback alarm on a version's 5XX rate divides by its invocations (template.yaml's Api5xxRateAlarm).

The family of what answers one: a tool that crashes or runs out of time, what it takes that cannot be read,
a tool's input model whose validator raises KeyError, an exception that escapes call handling, the
idempotency table failing before the tool runs, too little time left to start, diagnostics that crash, an
answer too large to send, and a container with no usable key. And nothing else is counted: an answer of 200,
whether the tool succeeded or declined, and every 4xx.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda import ToolError, app, diagnostics, tool
from median_lambda.key.source import MedianKeySource
from median_lambda.protocol import (
    DEV_KEY_ENV,
    FUNCTION_VERSION_ENV,
    IDEMPOTENCY_TABLE_ENV,
    KEY_SECRET_ENV,
    MAX_RESPONSE_BYTES,
)
from median_lambda.runtime.observability import Metric
from median_lambda.testing import FakeLambdaContext, answer_of, call_body, diagnostics_body, signed_event
from pydantic import BaseModel, field_validator

from tests.scratch_tools import NoteInput  # noqa: TC001 - @tool reads the annotation at run time
from tests.support.cold_start import fresh_python

if TYPE_CHECKING:
    from median_lambda.authoring.registry import Registry
    from median_lambda.testing import MedianTestClient

    from tests.conftest import LogCapture
    from tests.scratch_tools import ScratchTools


class ParcelInput(BaseModel):
    parcel: str

    @field_validator("parcel")
    @classmethod
    def known_carrier(cls, value: str) -> str:
        return {"DHL": value}[value[:3]]  # a KeyError for any other carrier, which pydantic does not catch


def server_errors(logs: LogCapture) -> list[dict[str, Any]]:
    """The ServerErrors lines printed so far: one per 5XX answer."""
    return [metric for metric in logs.metrics() if Metric.SERVER_ERRORS in metric]


def counted_once(logs: LogCapture, status: int) -> None:
    """The one answer was a 5XX, counted by exactly one ServerErrors of 1, by service and version alone."""
    assert status >= 500
    (line,) = server_errors(logs)
    (directive,) = line["_aws"]["CloudWatchMetrics"]
    assert [set(each) for each in directive["Dimensions"]] == [{"service", "function_version"}]
    assert (line[Metric.SERVER_ERRORS], line["function_version"]) == ([1.0], "$LATEST")


def test_a_crash_and_a_timeout_are_each_counted(
    client: MedianTestClient, scratch: ScratchTools, logs: LogCapture
) -> None:
    # GIVEN a tool that raises, and one that outlasts the time left
    # WHEN each is called
    crashed = client.call("crashQuotingInput", {"note": "x"})
    counted_once(logs, crashed.status)
    timed_out = client.send(
        signed_event("POST", call_body("waitForRelease", {})), FakeLambdaContext(timeout_seconds=0.8)
    )
    # THEN each 500 and 504 is one ServerErrors
    assert [crashed.status, timed_out.status] == [500, 504]
    assert len(server_errors(logs)) == 2


def test_an_input_model_whose_validator_crashes_is_counted_as_the_tools_crash(
    scratch_registry: Registry, client: MedianTestClient, logs: LogCapture
) -> None:
    # GIVEN a tool whose input model's validator raises KeyError, which is no validation error
    @tool(risk="low", name="parcelStatus")
    def parcel_status(args: ParcelInput) -> dict[str, str]:
        """Say where a parcel is."""
        return {"parcel": args.parcel}

    # WHEN it is called for a carrier the validator does not know
    answer = client.call("parcelStatus", {"parcel": "UPS-1"})
    # THEN its 500 is counted once in ServerErrors, and as that tool's crash
    assert answer.body["error"]["message"].startswith("The tool failed on the server before it ran, checking its input")
    counted_once(logs, answer.status)
    assert [metric["ToolCrashes"] for metric in logs.metrics() if "ToolCrashes" in metric] == [[1.0]]


class _ContextWhoseClockFails(FakeLambdaContext):
    def get_remaining_time_in_millis(self) -> int:
        raise RuntimeError("the clock is gone")


def test_an_exception_escaping_call_handling_is_counted(
    scratch_registry: Registry, client: MedianTestClient, logs: LogCapture
) -> None:
    # GIVEN a tool, and a Lambda context whose clock raises in the handler's own code, before any tool runs
    @tool(risk="low")
    def plain(args: NoteInput) -> str:
        """Answer."""
        return "here"

    # WHEN a call arrives
    answer = client.send(signed_event("POST", call_body("plain", {"note": "x"})), _ContextWhoseClockFails())
    # THEN the last resort's 500 is counted, which no tool metric counts
    assert answer.body["error"]["message"].startswith("The server failed; reference ")
    counted_once(logs, answer.status)
    assert not [metric for metric in logs.metrics() if "ToolCrashes" in metric]


def test_the_idempotency_table_failing_before_the_tool_runs_is_counted(
    moto_endpoint: str, clean_env: pytest.MonkeyPatch, client: MedianTestClient, scratch: ScratchTools, logs: LogCapture
) -> None:
    # GIVEN a function whose idempotency table does not exist (a stage deployed without it, say)
    clean_env.setenv(IDEMPOTENCY_TABLE_ENV, f"idempotency-missing-{uuid.uuid4().hex[:8]}")
    # WHEN a call with a callId arrives
    answer = client.call("countRuns", {"note": "x"}, callId=f"call_{uuid.uuid4().hex}")
    # THEN its 500, before the tool ran, is counted, though no tool ran to count it
    assert "so it did not run it; retry" in answer.body["error"]["message"]
    assert scratch.runs["countRuns"] == 0
    counted_once(logs, answer.status)


def test_too_little_time_to_start_is_counted(client: MedianTestClient, scratch: ScratchTools, logs: LogCapture) -> None:
    # GIVEN an invocation with less time left than the margin the handler keeps
    # WHEN a call arrives
    answer = client.send(signed_event("POST", call_body("countRunsFresh", {})), FakeLambdaContext(timeout_seconds=0.2))
    # THEN its 504, the tool not run, is counted
    assert answer.body["error"]["code"] == "timeout"
    counted_once(logs, answer.status)


def test_diagnostics_that_crash_are_counted(
    scratch_registry: Registry, client: MedianTestClient, logs: LogCapture
) -> None:
    # GIVEN diagnostics that raise
    @diagnostics
    def health() -> dict[str, str]:
        raise RuntimeError("the desk is down")

    # WHEN Median asks for them
    answer = client.send(signed_event("POST", diagnostics_body()))
    # THEN the 500 is counted
    counted_once(logs, answer.status)


def test_an_answer_too_large_to_send_is_counted(
    scratch_registry: Registry, client: MedianTestClient, logs: LogCapture
) -> None:
    # GIVEN a tool whose output is over what Lambda can return
    @tool(risk="low", name="exportEverything")
    def export_everything(args: NoteInput) -> dict[str, str]:
        """Export every record."""
        return {"records": "x" * MAX_RESPONSE_BYTES}

    # WHEN it is called
    answer = client.call("exportEverything", {"note": "x"})
    # THEN the 500 sent in its place is counted
    counted_once(logs, answer.status)


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_container_without_a_usable_key_counts_each_500(
    clean_env: pytest.MonkeyPatch, moto_endpoint: str, scratch: ScratchTools, logs: LogCapture, method: str
) -> None:
    # GIVEN a deployed function whose key's secret does not exist
    clean_env.setattr(app, "key_source", MedianKeySource())
    clean_env.delenv(DEV_KEY_ENV, raising=False)
    clean_env.setenv(KEY_SECRET_ENV, f"median/missing-{uuid.uuid4().hex[:8]}")
    body = call_body("countRunsFresh", {}) if method == "POST" else b""
    # WHEN Median's GET or a call arrives
    answer = answer_of(app.lambda_handler(signed_event(method, body), FakeLambdaContext()))  # type: ignore[arg-type]
    # THEN its 500 no_key is counted, a GET's too
    assert answer.body["error"]["code"] == "no_key"
    counted_once(logs, answer.status)


def test_no_other_answer_is_counted(
    scratch_registry: Registry, client: MedianTestClient, scratch: ScratchTools, logs: LogCapture
) -> None:
    # GIVEN a tool that declines
    @tool(risk="low", name="declineAlways")
    def decline_always(args: NoteInput) -> dict[str, str]:
        """Decline."""
        raise ToolError("No parcel has that number.")

    # WHEN Median GETs the manifest and sends a call that succeeds, one that declines, one to no tool, one
    # whose input breaks the schema, and one signed with another key
    statuses = [
        client.manifest().status,
        client.call("countRunsFresh", {}).status,
        client.call("declineAlways", {"note": "x"}).status,
        client.call("noSuchTool", {}).status,
        client.call("countRunsFresh", {"note": 3}).status,
        client.send(signed_event("POST", call_body("countRunsFresh", {}), key="mk_not_the_key")).status,
    ]
    # THEN none is a 5XX, and none is counted as one
    assert statuses == [200, 200, 200, 404, 422, 401]
    assert server_errors(logs) == []


PUBLISHED_CONTAINER = """
import sys
from median_lambda.testing import FakeLambdaContext, MedianTestClient, call_body, signed_event
from tests.scratch_tools import register_scratch_tools

register_scratch_tools()
client = MedianTestClient(call_ids=False)
client.call("countRunsFresh", {})
client.call("crashQuotingInput", {"note": "x"})
"""


def test_a_published_versions_metrics_carry_its_number(scratch_registry: Registry) -> None:
    # GIVEN a container Lambda runs for version 7 of the function
    # WHEN it serves a call that succeeds and one whose tool crashes
    printed = fresh_python(PUBLISHED_CONTAINER, {FUNCTION_VERSION_ENV: "7"})
    documents = [json.loads(line) for line in printed if line.startswith('{"_aws"')]
    tool_lines = [each for each in documents if "ToolCalls" in each]
    errors = [each for each in documents if Metric.SERVER_ERRORS in each]
    # THEN each tool's metrics carry the version's number, so a canary's crashes stand beside the old version's,
    # and so does the crash's 5XX, which the version's rollback alarm reads
    assert [(each["tool"], each["function_version"]) for each in tool_lines] == [
        ("countRunsFresh", "7"),
        ("crashQuotingInput", "7"),
    ]
    assert [each["function_version"] for each in errors] == ["7"]
