"""Metrics (CloudWatch EMF on stdout), tracing (X-Ray, off unless switched on) and the idempotency notice at start."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda.protocol import SIGNATURE_HEADER, TOOL_TIME_MARGIN_SECONDS
from median_lambda.runtime import observability
from median_lambda.runtime.observability import Metric
from median_lambda.testing import FakeLambdaContext, call_body, forget_what_a_container_keeps, http_event, signed_event

from tests.scratch_tools import NoteInput  # noqa: TC001 - @tool reads the annotation at run time
from tests.support.cold_start import fresh_python

if TYPE_CHECKING:
    from collections.abc import Callable

    from median_lambda.authoring.registry import Registry
    from median_lambda.testing import MedianTestClient

    from tests.conftest import LogCapture
    from tests.scratch_tools import ScratchTools

# The calls go to the sample tools (tests/sample_tools/).
pytestmark = pytest.mark.usefixtures("sample_tools")

# A traced invocation's id, as Lambda hands it to the function when tracing is active.
TRACE_HEADER = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
# What a cold container does in these subprocess tests: one GET and one call, as Median would.
COLD_CONTAINER = """
import sys
from median_lambda.testing import MedianTestClient
client = MedianTestClient()
client.manifest()
client.call("ticketStatus", {"ticketNumber": "TCK-1042"}, callId="call_cold")
print("XRAY-SDK-LOADED" if "aws_xray_sdk" in sys.modules else "XRAY-SDK-NOT-LOADED")
"""


def emf_lines(lines: list[str]) -> list[dict[str, Any]]:
    """The invocations' EMF lines, without Powertools' ColdStart line, which a container's first flush adds, and
    without the line of its own each 5XX answer adds (server_error_lines)."""
    return [
        document
        for document in every_emf_line(lines)
        if "ColdStart" not in document and Metric.SERVER_ERRORS not in document
    ]


def server_error_lines(lines: list[str]) -> list[dict[str, Any]]:
    return [document for document in every_emf_line(lines) if Metric.SERVER_ERRORS in document]


def every_emf_line(lines: list[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines if line.startswith('{"_aws"')]


def cold_start_lines(lines: list[str]) -> list[dict[str, Any]]:
    return [document for document in every_emf_line(lines) if "ColdStart" in document]


def dimensions_and_metrics(emf: dict[str, Any]) -> tuple[set[str], set[str]]:
    (directive,) = emf["_aws"]["CloudWatchMetrics"]
    (dimension_set,) = directive["Dimensions"]
    return set(dimension_set), {metric["Name"] for metric in directive["Metrics"]}


def cold_container(env: dict[str, str], code: str = COLD_CONTAINER) -> list[str]:
    return fresh_python(code, env)


@pytest.mark.parametrize(
    ("tool", "outcome_metric"),
    [
        ("countRunsFresh", None),
        ("declineWithRunCount", "ToolErrors"),
        ("crashQuotingInput", "ToolCrashes"),
        ("waitForRelease", "ToolTimeouts"),
    ],
)
def test_a_tool_call_emits_one_emf_line_with_the_tool_as_dimension(
    client: MedianTestClient,
    scratch: ScratchTools,
    logs: LogCapture,
    tool: str,
    outcome_metric: str | None,
) -> None:
    # GIVEN a tool that succeeds, declines, crashes or overruns
    context = FakeLambdaContext(timeout_seconds=TOOL_TIME_MARGIN_SECONDS + 0.3)
    # WHEN it is called once
    client.send(signed_event("POST", call_body(tool, {})), context)
    # THEN one EMF line is flushed for the invocation, in the default namespace, per tool and version (`$LATEST`
    # where Lambda runs no published version)
    lines = logs.lines()
    (emf,) = emf_lines(lines)
    dimensions, metrics = dimensions_and_metrics(emf)
    assert emf["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "MedianTools"
    assert dimensions == {"service", "function_version", "tool"}
    assert (emf["tool"], emf["function_version"]) == (tool, "$LATEST")
    # AND it counts the call, times it, and counts the kind of failure, if any
    assert metrics == {"ToolCalls", "ToolDuration"} | ({outcome_metric} if outcome_metric else set())
    assert emf["ToolCalls"] == [1.0]
    assert emf["ToolDuration"][0] >= 0
    # AND a crash's 500 and a timeout's 504 are each counted once more, as a 5XX answer of the version
    assert len(server_error_lines(lines)) == (outcome_metric in ("ToolCrashes", "ToolTimeouts"))


@pytest.mark.parametrize(
    ("headers", "cause"),
    [
        ({}, "missing"),
        ({SIGNATURE_HEADER: "t=1764500000"}, "malformed"),
        ({SIGNATURE_HEADER: f"t=1,v1={'0' * 64}"}, "stale"),
        ("forged", "mismatch"),
    ],
)
def test_a_refused_signature_is_counted_by_its_cause(
    client: MedianTestClient, logs: LogCapture, headers: dict[str, str] | str, cause: str
) -> None:
    # GIVEN a request without a valid signature
    body = call_body("ticketStatus", {"ticketNumber": "TCK-1042"})
    event = signed_event("POST", body, key="mk_forged") if headers == "forged" else http_event("POST", body)
    if isinstance(headers, dict):
        event["headers"].update(headers)
    # WHEN it is refused
    assert client.send(event).status == 401
    # THEN the invocation's EMF line counts one rejected signature, with its cause as dimension
    (emf,) = emf_lines(logs.lines())
    assert dimensions_and_metrics(emf) == ({"service", "cause", "function_version"}, {"RejectedSignatures"})
    assert (emf["cause"], emf["RejectedSignatures"]) == (cause, [1.0])


def test_a_served_get_emits_no_metrics(client: MedianTestClient, logs: LogCapture) -> None:
    # GIVEN a correctly signed GET
    # WHEN the manifest is served
    assert client.manifest().status == 200
    # THEN nothing is flushed: the hot read path pays for no metrics
    assert emf_lines(logs.lines()) == []


def test_metrics_go_to_the_namespace_the_template_sets() -> None:
    # GIVEN a container whose environment names a metrics namespace, as the template's parameter does
    # WHEN a call is served
    lines = cold_container({"POWERTOOLS_METRICS_NAMESPACE": "AcmeSupportTools"})
    # THEN its metrics are in that namespace
    (emf,) = emf_lines(lines)
    assert emf["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "AcmeSupportTools"


# Each of the handler's line shapes: what it records, and the same recorded through Powertools' own Metrics.
LINE_SHAPES: dict[str, tuple[Callable[[], object], str | None, str | None, list[tuple[str, str, float]]]] = {
    "a tool that ran": (
        lambda: observability.record_tool_run("ticketStatus", None, 12.5),
        "tool",
        "ticketStatus",
        [("ToolCalls", "Count", 1.0), ("ToolDuration", "Milliseconds", 12.5)],
    ),
    "a tool that declined": (
        lambda: observability.record_tool_run("ticketStatus", "ToolErrors", 0.25),
        "tool",
        "ticketStatus",
        [("ToolCalls", "Count", 1.0), ("ToolDuration", "Milliseconds", 0.25), ("ToolErrors", "Count", 1.0)],
    ),
    "a tool that ran twice in one invocation": (
        lambda: [observability.record_tool_run("ticketStatus", None, amount) for amount in (12.5, 3.25)],
        "tool",
        "ticketStatus",
        [
            ("ToolCalls", "Count", 1.0),
            ("ToolDuration", "Milliseconds", 12.5),
            ("ToolCalls", "Count", 1.0),
            ("ToolDuration", "Milliseconds", 3.25),
        ],
    ),
    "no tool can run": (observability.record_no_tool_can_run, "tool", "(every tool)", [("ToolCrashes", "Count", 1.0)]),
    "a replay": (
        lambda: observability.record_replay("ticketStatus"),
        "tool",
        "ticketStatus",
        [("ReplayedCalls", "Count", 1.0)],
    ),
    "a refused signature": (
        lambda: observability.record_rejected_signature("stale"),
        "cause",
        "stale",
        [("RejectedSignatures", "Count", 1.0)],
    ),
    "work left running": (
        lambda: observability.record_work_left_running("ticketStatus"),
        "tool",
        "ticketStatus",
        [("ToolWorkLeftRunning", "Count", 1.0)],
    ),
    "a 5XX answer": (observability.record_server_error, None, None, [("ServerErrors", "Count", 1.0)]),
    "the time limits degraded": (
        observability.record_time_limits_degraded,
        None,
        None,
        [("TimeLimitsDegraded", "Count", 1.0)],
    ),
}


@pytest.mark.parametrize("shape", list(LINE_SHAPES))
def test_each_emf_line_is_the_one_powertools_own_flush_prints(
    logs: LogCapture, monkeypatch: pytest.MonkeyPatch, shape: str
) -> None:
    from aws_lambda_powertools.metrics import EphemeralMetrics

    record, dimension, value, metrics = LINE_SHAPES[shape]
    # GIVEN a stack's namespace and service, as template.yaml sets them, in a container of a published version
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "acme-tools-production")
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "acme-tools-production")
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_VERSION", "17")
    forget_what_a_container_keeps()
    # WHEN the handler records and publishes a line of this shape, and Powertools' own flush_metrics prints the
    # same metrics, recorded through its public API in a set of their own
    record()
    observability.flush_metrics()
    reference = EphemeralMetrics(namespace="acme-tools-production", service="acme-tools-production")
    reference.set_default_dimensions(function_version="17")
    if dimension is not None:
        reference.add_dimension(name=dimension, value=value)  # type: ignore[arg-type]
    for name, unit, amount in metrics:
        reference.add_metric(name=name, unit=unit, value=amount)
    reference.flush_metrics()
    # THEN the two lines are the same text but for the timestamp: the handler prints what Powertools would
    handler_line, powertools_line = [line for line in logs.lines() if line.startswith('{"_aws"')][-2:]
    timestamp = re.compile(r'"Timestamp":\d+')
    assert timestamp.sub("", handler_line) == timestamp.sub("", powertools_line)
    # AND the handler's timestamp is now's, in milliseconds, as Powertools stamps it
    assert abs(json.loads(handler_line)["_aws"]["Timestamp"] - json.loads(powertools_line)["_aws"]["Timestamp"]) < 5000


def test_calls_whose_tools_record_no_metric_of_their_own_say_nothing_of_powertools_empty_set() -> None:
    # GIVEN a fresh container, outside any test runner's warning filters
    # WHEN it serves a GET and a call whose tool records nothing through Powertools' Metrics
    finished = subprocess.run(  # noqa: S603 - our own interpreter, our own code
        [sys.executable, "-c", COLD_CONTAINER],
        env=os.environ.copy(),
        cwd=Path(__file__).parents[2],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    # THEN its metrics are published, and Powertools' warning that its own set was empty is not written
    assert len(emf_lines(finished.stdout.splitlines())) == 1
    assert "No application metrics to publish" not in finished.stderr + finished.stdout


def test_a_fresh_test_container_flushes_only_its_own_metrics(
    client: MedianTestClient, scratch: ScratchTools, logs: LogCapture
) -> None:
    # GIVEN a run recorded below the entry point, as a test calling dispatch directly leaves it: never flushed
    observability.record_tool_run("ticketStatus", "ToolErrors", 12.5)
    # WHEN the container is forgotten, as median_lambda.testing does between tests, and a tool is then called
    forget_what_a_container_keeps()
    client.call("countRunsFresh", {})
    # THEN the invocation's EMF line counts its own call alone
    (emf,) = emf_lines(logs.lines())
    assert emf["tool"] == "countRunsFresh"
    assert emf["ToolCalls"] == [1.0]
    assert "ToolErrors" not in emf


@pytest.mark.parametrize("switch", [{"POWERTOOLS_METRICS_DISABLED": "true"}, {"POWERTOOLS_DEV": "true"}])
def test_metrics_switched_off_the_powertools_way_print_no_emf_line(switch: dict[str, str]) -> None:
    # GIVEN a container whose environment switches metrics off as Powertools documents it
    # WHEN it serves a GET and a call
    lines = cold_container(switch)
    # THEN no EMF line is printed, not even its ColdStart metric
    assert every_emf_line(lines) == []


def test_tracing_is_off_by_default_and_costs_no_import() -> None:
    # GIVEN a container in Lambda with tracing not switched on
    # WHEN it serves a GET and a call
    lines = cold_container({"LAMBDA_TASK_ROOT": "/var/task", "_X_AMZN_TRACE_ID": TRACE_HEADER})
    # THEN the X-Ray SDK was never even imported
    assert "XRAY-SDK-NOT-LOADED" in lines


def test_tracing_switched_on_sends_segments_with_the_tool_and_without_customer_data() -> None:
    # GIVEN a container in Lambda with tracing switched on, and an X-Ray daemon listening
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as daemon:
        daemon.bind(("127.0.0.1", 0))
        daemon.settimeout(5)
        # WHEN it serves a GET and a call
        cold_container(
            {
                "POWERTOOLS_TRACE_DISABLED": "false",
                "LAMBDA_TASK_ROOT": "/var/task",
                "_X_AMZN_TRACE_ID": TRACE_HEADER,
                "AWS_XRAY_DAEMON_ADDRESS": f"127.0.0.1:{daemon.getsockname()[1]}",
            }
        )
        segments = []
        try:
            while True:
                _, document = daemon.recv(65_535).decode().split("\n", 1)
                segments.append(json.loads(document))
        except TimeoutError:
            pass
    # THEN the daemon received the handler's segments and the tool's, annotated with its name
    names = {segment["name"] for segment in segments}
    assert "## lambda_handler" in names
    # AND the handler's segment names the service POWERTOOLS_SERVICE_NAME says, as Powertools' Tracer does
    handler_segments = [segment for segment in segments if segment["name"] == "## lambda_handler"]
    assert {segment["annotations"]["Service"] for segment in handler_segments} == {
        os.environ["POWERTOOLS_SERVICE_NAME"]
    }
    tool_segments = [segment for segment in segments if segment["name"] == "## tool ticketStatus"]
    assert [segment["annotations"]["tool"] for segment in tool_segments] == ["ticketStatus"]
    # AND no segment carries the call's input or output
    assert all("TCK-1042" not in json.dumps(segment) for segment in segments)


def test_idempotency_off_is_said_once_at_start() -> None:
    # GIVEN a container without IDEMPOTENCY_TABLE
    # WHEN it starts and serves a GET and a call
    lines = cold_container({})
    # THEN the log says once, not per request, that idempotency is off
    notices = [line for line in lines if "Idempotency is off" in line]
    assert len(notices) == 1
    assert json.loads(notices[0])["level"] == "INFO"


def test_idempotency_on_says_nothing_at_start() -> None:
    # GIVEN a container with IDEMPOTENCY_TABLE set
    # WHEN it starts and serves a GET (which needs no table)
    get_only = "from median_lambda.testing import MedianTestClient; MedianTestClient().manifest()"
    lines = cold_container({"IDEMPOTENCY_TABLE": "median-idempotency"}, get_only)
    # THEN no notice that it is off
    assert not [line for line in lines if "Idempotency is off" in line]


# --- Every line of an invocation carries its request id and cold-start flag -------------------------
# The keys Powertools' inject_lambda_context puts on every line of an invocation.
INVOCATION_KEYS = {"cold_start", "function_name", "function_memory_size", "function_arn", "function_request_id"}


def test_every_line_of_an_invocation_carries_its_request_id_and_whether_it_was_a_cold_start(
    client: MedianTestClient, scratch: ScratchTools, logs: LogCapture
) -> None:
    # GIVEN a fresh container, which logs a line as it starts
    forget_what_a_container_keeps()
    observability.logger.info("Before any invocation")
    # WHEN two invocations log: a crash, then a forged signature
    first, second = FakeLambdaContext(), FakeLambdaContext(function_name="acme-tools-staging", memory_limit_in_mb=1024)
    client.send(signed_event("POST", call_body("crashQuotingInput", {"note": "x"})), first)
    client.send(signed_event("POST", call_body("crashQuotingInput", {}), key="mk_forged"), second)
    records = logs.records()
    between, crash, refused = (
        next(record for record in records if record["message"] == message)
        for message in ("Before any invocation", "Tool crashQuotingInput crashed", "Signature refused")
    )
    # THEN each invocation's line carries its own request id and Lambda context, the first as a cold start
    assert (crash["function_request_id"], crash["cold_start"]) == (first.aws_request_id, True)
    assert (refused["function_request_id"], refused["cold_start"]) == (second.aws_request_id, False)
    assert (refused["function_name"], refused["function_memory_size"]) == ("acme-tools-staging", 1024)
    assert refused["function_arn"] == second.invoked_function_arn
    # AND the crash's reference, which its answer names, is that request id
    assert crash["reference"] == crash["function_request_id"]
    # AND a line logged before the container's first invocation carries none of them
    assert not INVOCATION_KEYS & set(between)


def test_the_invocation_keys_are_those_powertools_inject_lambda_context_writes(
    client: MedianTestClient, scratch: ScratchTools, logs: LogCapture
) -> None:
    # GIVEN a handler decorated with Powertools' own inject_lambda_context, logging through a Logger of its own
    from aws_lambda_powertools import Logger

    reference = Logger(service="inject-lambda-context-reference")
    reference.registered_handler.stream = sys.stdout  # type: ignore[attr-defined]

    @reference.inject_lambda_context(clear_state=True)
    def handler(event: dict[str, Any], context: FakeLambdaContext) -> None:
        reference.info("Reference line")

    context = FakeLambdaContext()
    # WHEN it and this endpoint each log a line under one Lambda context
    handler({}, context)
    client.send(signed_event("POST", call_body("crashQuotingInput", {"note": "x"})), context)
    records = logs.records()
    theirs = next(record for record in records if record["message"] == "Reference line")
    ours = next(record for record in records if record["message"] == "Tool crashQuotingInput crashed")
    # THEN both carry the same keys, with the same values from the context (whether cold aside: Powertools
    # keeps its own count of invocations, and this one ran before)
    assert {key: theirs[key] for key in INVOCATION_KEYS - {"cold_start"}} == {
        key: ours[key] for key in INVOCATION_KEYS - {"cold_start"}
    }
    assert isinstance(ours["cold_start"], bool)


def test_a_tools_own_powertools_logger_lines_carry_the_request_id(
    client: MedianTestClient, scratch_registry: Registry, logs: LogCapture
) -> None:
    # GIVEN a tool that logs through Powertools Loggers of its own, as Powertools users write them:
    # one named by POWERTOOLS_SERVICE_NAME, and a child of it
    from aws_lambda_powertools import Logger
    from median_lambda import tool

    own, child = Logger(), Logger(child=True)

    @tool(risk="low", name="logsItsOwn")
    def logs_its_own(args: NoteInput) -> dict[str, object]:
        """Log a line, then another through a child Logger."""
        own.info("Looked the order up")
        child.info("Asked the carrier")
        return {}

    # WHEN it is called
    context = FakeLambdaContext()
    client.send(signed_event("POST", call_body("logsItsOwn", {})), context)
    lines = {record["message"]: record for record in logs.records()}
    # THEN both lines carry the service the handler logs under, and the invocation's request id
    for message in ("Looked the order up", "Asked the carrier"):
        assert lines[message]["service"] == observability.service_name() == os.environ["POWERTOOLS_SERVICE_NAME"]
        assert lines[message]["function_request_id"] == context.aws_request_id


SERVICE_CONTAINER = """
from median_lambda.runtime import observability
from median_lambda.testing import MedianTestClient
MedianTestClient().call("ticketStatus", {"ticketNumber": "TCK-1042"})
MedianTestClient().call("ticketStatus", {"ticketNumber": "TCK-1042"})
observability.logger.warning("A line of each")
"""


@pytest.mark.parametrize(
    ("environment", "service"),
    [({"POWERTOOLS_SERVICE_NAME": "acme-tools-staging"}, "acme-tools-staging"), ({}, "median-tools")],
)
def test_powertools_service_name_names_the_logs_metrics_service(environment: dict[str, str], service: str) -> None:
    # GIVEN a container whose environment names a service, as the template does (the stack's name), or none
    inherited = {name: value for name, value in os.environ.items() if name != "POWERTOOLS_SERVICE_NAME"}
    # WHEN it serves calls and logs a line
    lines = subprocess.run(  # noqa: S603 - our own interpreter, our own code
        [sys.executable, "-c", SERVICE_CONTAINER],
        env={**inherited, **environment},
        cwd=Path(__file__).parents[2],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.splitlines()
    # THEN every EMF line's service dimension (one a call, and the container's ColdStart), and every log
    # line's service, is that one
    documents = [json.loads(line) for line in lines if line.startswith("{")]
    emf = [document for document in documents if "_aws" in document]
    assert len(emf_lines(lines)) == 2
    assert len(cold_start_lines(lines)) == 1
    assert {document["service"] for document in documents} == {service}
    assert all(
        "service" in dimensions
        for document in emf
        for dimensions in document["_aws"]["CloudWatchMetrics"][0]["Dimensions"]
    )


# Two invocations of a tool that logs a warning, then a debug line. random's first draw (the Logger's
# sampling when it is made, at start) is 0.97 and its second 0.01 under seed 15: over 0.5, then under.
SAMPLED_CONTAINER = """
import random
random.seed(15)
from median_lambda import tool
from median_lambda.runtime import observability
from median_lambda.testing import FakeLambdaContext, MedianTestClient, call_body, signed_event
from tests.scratch_tools import NoteInput

@tool(risk="low", name="logsTwice")
def logs_twice(args: NoteInput) -> dict:
    \"\"\"Log a warning, then a debug line.\"\"\"
    observability.logger.warning("Looked " + args.note)
    observability.logger.debug("Debug " + args.note)
    return {}

client = MedianTestClient()
for note in ("cold", "warm"):
    client.send(signed_event("POST", call_body("logsTwice", {"note": note})), FakeLambdaContext())
"""


def test_log_sampling_is_decided_anew_for_each_warm_invocation_as_inject_lambda_context_does() -> None:
    # GIVEN a container whose logs are sampled at debug level half the time (POWERTOOLS_LOGGER_SAMPLE_RATE),
    # its cold start not sampled
    # WHEN two invocations each log a warning and a debug line
    lines = cold_container({"POWERTOOLS_LOGGER_SAMPLE_RATE": "0.5", "IDEMPOTENCY_TABLE": ""}, SAMPLED_CONTAINER)
    messages = [json.loads(line)["message"] for line in lines if line.startswith('{"level"')]
    # THEN the warm invocation was sampled anew at its first line, and its debug line written
    assert [message for message in messages if message.endswith(("cold", "warm"))] == [
        "Looked cold",
        "Looked warm",
        "Debug warm",
    ]


COLD_START_CONTAINER = """
from median_lambda.testing import FakeLambdaContext, MedianTestClient, call_body, signed_event
client = MedianTestClient()
context = FakeLambdaContext(function_name="acme-tools-staging")
{first}
client.send(signed_event("POST", call_body("ticketStatus", {{"ticketNumber": "TCK-1042"}})), context)
client.send(signed_event("POST", call_body("ticketStatus", {{"ticketNumber": "TCK-1042"}})), context)
"""


@pytest.mark.parametrize(
    "first",
    [
        pytest.param("", id="its first request a call"),
        pytest.param("client.send(signed_event('GET'), context)", id="its first request a GET, which publishes none"),
    ],
)
def test_a_cold_container_publishes_powertools_cold_start_metric_once(first: str) -> None:
    # GIVEN a new container (not provisioned), which serves two calls, after a GET or not
    lines = cold_container({}, COLD_START_CONTAINER.format(first=first))
    # THEN it publishes Powertools' own ColdStart metric once, with its first metrics, on a line of its own
    # with the dimensions log_metrics(capture_cold_start_metric=True) gives it
    [cold_start] = cold_start_lines(lines)
    assert dimensions_and_metrics(cold_start) == ({"function_name", "service"}, {"ColdStart"})
    assert (cold_start["function_name"], cold_start["ColdStart"]) == ("acme-tools-staging", [1.0])
    assert [emf["tool"] for emf in emf_lines(lines)] == ["ticketStatus", "ticketStatus"]
    assert lines.index(json.dumps(cold_start, separators=(",", ":"))) < lines.index(
        next(line for line in lines if '"ToolCalls"' in line)
    )


def test_a_provisioned_environments_first_invocation_is_no_cold_start() -> None:
    # GIVEN a container Lambda initialised for provisioned concurrency, ahead of any request
    code = """
from median_lambda.runtime import observability
from median_lambda.testing import FakeLambdaContext, MedianTestClient, call_body, signed_event
MedianTestClient().send(signed_event("POST", call_body("ticketStatus", {"ticketNumber": "TCK-0000"}), key="mk_forged"))
"""
    # WHEN its first invocation logs
    lines = cold_container({"AWS_LAMBDA_INITIALIZATION_TYPE": "provisioned-concurrency"}, code)
    # THEN the line says it was no cold start, as Powertools counts one, and no ColdStart metric is published
    (refused,) = [json.loads(line) for line in lines if "Signature refused" in line]
    assert refused["cold_start"] is False
    assert cold_start_lines(lines) == []
    assert len(emf_lines(lines)) == 1
