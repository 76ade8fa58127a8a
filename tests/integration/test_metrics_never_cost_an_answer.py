"""Whatever a tool does to Powertools' shared `Metrics`, its answer and every later call's are unchanged.

A tool writes metrics the way Powertools documents: `Metrics()` anywhere, whose instances share one
metric set. The handler's own metrics (ToolCalls and the rest, which the alarms and a gradual
deployment's rollback read) are kept apart from it, and what a tool recorded is published at the
end of its call, as Powertools' `log_metrics` publishes it; what cannot be published is said once,
at WARNING, and dropped, so that the next call starts clean.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from aws_lambda_powertools import Metrics
from aws_lambda_powertools.metrics import MetricUnit, MetricUnitError
from median_lambda import tool
from median_lambda.testing import FakeLambdaContext, call_body, signed_event

from tests.conftest import AS_DEPLOYED, BOTH
from tests.scratch_tools import NoteInput  # noqa: TC001 - @tool reads the annotation when it runs

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from median_lambda.authoring.registry import Registry
    from median_lambda.testing import MedianTestClient, TestAnswer

    from tests.conftest import LogCapture

pytestmark = pytest.mark.parametrize("configuration", BOTH, indirect=True)

NOT_PUBLISHED = "The metrics a tool recorded through Powertools' Metrics were not published"


def twenty_nine_dimensions(metrics: Metrics) -> None:
    # Powertools accepts 29 dimensions; the flush adds `service`, a 30th, and refuses the set.
    for index in range(29):
        metrics.add_dimension(name=f"d{index}", value="x")
    metrics.add_metric(name="OrdersLookedUp", unit=MetricUnit.Count, value=1)


def twenty_nine_default_dimensions(metrics: Metrics) -> None:
    # Default dimensions persist across invocations, as Powertools documents: the set is refused every time.
    metrics.set_default_dimensions(**{f"d{index}": "x" for index in range(29)})
    metrics.add_metric(name="OrdersLookedUp", unit=MetricUnit.Count, value=1)


def twenty_nine_dimensions_and_no_metric(metrics: Metrics) -> None:
    # Nothing to publish, and dimensions left behind: the next tool to add one would be refused.
    for index in range(29):
        metrics.add_dimension(name=f"d{index}", value="x")


def a_unit_cloudwatch_does_not_know(metrics: Metrics) -> None:
    try:
        metrics.add_metric(name="OrdersLookedUp", unit="Bananas", value=1)
    except MetricUnitError:
        metrics.add_metric(name="OrdersLookedUp", unit=MetricUnit.Count, value=1)


def a_hundred_and_fifty_metrics(metrics: Metrics) -> None:
    # Powertools publishes a set of 100 on the spot, and keeps the rest for the flush.
    for index in range(150):
        metrics.add_metric(name=f"Lookup{index}", unit=MetricUnit.Count, value=1)


def dimension_values_that_are_not_strings(metrics: Metrics) -> None:
    metrics.add_dimension(name="attempt", value=3)  # type: ignore[arg-type]
    metrics.add_dimension(name="region", value=None)  # type: ignore[arg-type]
    metrics.add_metric(name="OrdersLookedUp", unit=MetricUnit.Count, value=1)


def cleared(metrics: Metrics) -> None:
    metrics.clear_metrics()
    metrics.clear_default_dimensions()


def a_default_dimension_of_its_own(metrics: Metrics) -> None:
    # Were the handler's metrics in this set, they would be published under {service, tool, team}, which
    # the alarms' SCHEMA(namespace, service, tool) queries never read.
    metrics.set_default_dimensions(team="orders")
    metrics.add_metric(name="OrdersLookedUp", unit=MetricUnit.Count, value=1)


def a_metric_named_as_the_handlers(metrics: Metrics) -> None:
    metrics.add_metric(name="ToolCalls", unit=MetricUnit.Count, value=5)


MISUSES: dict[str, tuple[Callable[[Metrics], None], bool]] = {
    # what the tool does: (the function, whether its metrics cannot be published)
    "29 dimensions": (twenty_nine_dimensions, True),
    "29 default dimensions": (twenty_nine_default_dimensions, True),
    "29 dimensions and no metric": (twenty_nine_dimensions_and_no_metric, False),
    "a unit CloudWatch does not know": (a_unit_cloudwatch_does_not_know, False),
    "150 metrics": (a_hundred_and_fifty_metrics, False),
    "dimension values that are not strings": (dimension_values_that_are_not_strings, False),
    "the set cleared": (cleared, False),
    "a default dimension of its own": (a_default_dimension_of_its_own, False),
    "a metric named as the handler's": (a_metric_named_as_the_handlers, False),
}


@pytest.fixture
def metric_tools(scratch_registry: Registry, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """`misusedMetrics` (which does what the test names to the shared Metrics) and `countedLookup` (which
    records one metric with one dimension, as a Powertools user writes it), in a stack's namespace, which a
    tool's `Metrics()` reads as the handler does (template.yaml sets it)."""
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "median-tools-production")

    @tool(risk="low", name="countedLookup")
    def counted_lookup(args: NoteInput) -> dict[str, object]:
        """Look an order up, counting the lookup by region."""
        metrics = Metrics()
        metrics.add_dimension(name="region", value="eu-west-1")
        metrics.add_metric(name="OrdersLookedUp", unit=MetricUnit.Count, value=1)
        return {"found": args.note}

    yield
    # Default dimensions are Powertools' own, kept for the process: none is left to the next test.
    Metrics().clear_default_dimensions()
    Metrics().clear_metrics()


def misused_tool(misuse: Callable[[Metrics], None]) -> None:
    @tool(risk="low", name="misusedMetrics")
    def misused_metrics(args: NoteInput) -> dict[str, object]:
        """Look an order up, doing to Powertools' shared Metrics what the test names."""
        misuse(Metrics())
        return {"looked_up": args.note}


def handlers_lines(logs: LogCapture) -> list[dict[str, Any]]:
    """The handler's own EMF lines: those that count a tool's call."""
    return [line for line in logs.metrics() if "ToolCalls" in line and "tool" in line]


def warnings_of(logs: LogCapture) -> list[dict[str, Any]]:
    return [record for record in logs.records() if record.get("level") == "WARNING"]


@pytest.mark.usefixtures("metric_tools")
@pytest.mark.parametrize("misuse", list(MISUSES))
def test_a_tools_misuse_of_the_shared_metrics_costs_no_answer(
    client: MedianTestClient, logs: LogCapture, configuration: str, misuse: str
) -> None:
    misuse_function, unpublishable = MISUSES[misuse]
    misused_tool(misuse_function)
    # GIVEN a tool that does this to Powertools' shared Metrics, and another that records a metric as documented
    # WHEN it is called, then the other tool, then it again, each call with a callId of its own, as Median sends
    answers: list[TestAnswer] = [
        client.call("misusedMetrics", {"note": "ORD-1042"}, callId="call_misused_1"),
        client.call("countedLookup", {"note": "ORD-1043"}, callId="call_counted"),
        client.call("misusedMetrics", {"note": "ORD-1044"}, callId="call_misused_2"),
    ]
    # THEN every call is answered with its tool's own output
    assert [(answer.status, answer.body.get("output")) for answer in answers] == [
        (200, {"looked_up": "ORD-1042"}),
        (200, {"found": "ORD-1043"}),
        (200, {"looked_up": "ORD-1044"}),
    ]
    # AND each call's own metrics are published, under the version, the tool and the service alone, counted once
    lines = handlers_lines(logs)
    assert [(line["tool"], line["ToolCalls"]) for line in lines] == [
        ("misusedMetrics", [1.0]),
        ("countedLookup", [1.0]),
        ("misusedMetrics", [1.0]),
    ]
    for line in lines:
        assert line["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["function_version", "tool", "service"]]
    # AND the other tool's metric is published with its own dimension, as Powertools publishes it
    (counted,) = [line for line in logs.metrics() if line.get("region") == "eu-west-1"]
    assert counted["OrdersLookedUp"] == [1.0]
    assert not {f"d{index}" for index in range(29)} & set(counted)
    # AND what could not be published is said once for each call that recorded it, at WARNING, naming the tool
    said = warnings_of(logs)
    if unpublishable:
        assert [(record["message"], record["tool"]) for record in said] == [
            (NOT_PUBLISHED, "misusedMetrics"),
            (NOT_PUBLISHED, "misusedMetrics"),
        ]
        assert {record["error_type"] for record in said} == {"SchemaValidationError"}
    else:
        assert said == []
    # AND through the table, each call was recorded as run: its retry gets the same answer, the tool not run again
    if configuration == AS_DEPLOYED:
        retry = client.call("misusedMetrics", {"note": "ORD-1042"}, callId="call_misused_1")
        assert (retry.status, retry.body) == (answers[0].status, answers[0].body)
        assert [line["tool"] for line in logs.metrics() if "ReplayedCalls" in line] == ["misusedMetrics"]


def test_a_publish_that_fails_is_said_without_the_metrics_values(
    client: MedianTestClient, logs: LogCapture, scratch_registry: Registry, configuration: str
) -> None:
    # GIVEN a tool whose metrics cannot be published, and whose metric names and dimensions quote its input
    @tool(risk="low", name="quotingMetrics")
    def quoting_metrics(args: NoteInput) -> dict[str, object]:
        """Record a metric per customer, under 29 dimensions."""
        metrics = Metrics()
        for index in range(29):
            metrics.add_dimension(name=f"customer{index}", value=args.note)
        metrics.add_metric(name=f"Orders{args.note}", unit=MetricUnit.Count, value=1)
        return {}

    # WHEN it is called
    answer = client.call("quotingMetrics", {"note": "JaneDoe"}, callId="call_quoting")
    # THEN it is answered, and the warning says what failed without a word of what the tool recorded
    assert answer.status == 200
    (said,) = warnings_of(logs)
    assert said["message"] == NOT_PUBLISHED
    assert "JaneDoe" not in json.dumps(said)
    # AND off Lambda, where its author reads it, Powertools' own reason is printed beside it
    assert f"{NOT_PUBLISHED} (SchemaValidationError: Maximum number of dimensions exceeded (29)" in logs.text()
    Metrics().clear_metrics()


def test_a_cold_start_metric_is_published_once_whatever_the_tool_recorded(
    client: MedianTestClient, logs: LogCapture, scratch_registry: Registry, configuration: str
) -> None:
    # GIVEN a fresh container and a tool whose metrics cannot be published
    from median_lambda.testing import forget_what_a_container_keeps

    misused_tool(twenty_nine_dimensions)
    forget_what_a_container_keeps()
    context = FakeLambdaContext(function_name="acme-tools-production")
    # WHEN it is called twice
    for note in ("first", "second"):
        client.send(signed_event("POST", call_body("misusedMetrics", {"note": note})), context)
    # THEN Powertools' ColdStart metric was published once, with the first call's own metrics
    cold = [line for line in logs.lines() if line.startswith('{"_aws"') and '"ColdStart"' in line]
    assert [json.loads(line)["function_name"] for line in cold] == ["acme-tools-production"]
    assert [line["tool"] for line in handlers_lines(logs)] == ["misusedMetrics", "misusedMetrics"]
    Metrics().clear_metrics()


def test_a_deployed_function_says_a_refused_set_by_its_type_alone(
    key_in_secrets_manager: str,
    invoke: Callable[..., TestAnswer],
    logs: LogCapture,
    metric_tools: None,
    monkeypatch: pytest.MonkeyPatch,
    configuration: str,
) -> None:
    # GIVEN a function as Lambda runs it (its name set, not sam local, the key from Secrets Manager), and a
    # tool whose metrics Powertools refuses
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "median-tools-production-MedianToolsFunction")
    monkeypatch.delenv("AWS_SAM_LOCAL", raising=False)
    misused_tool(twenty_nine_dimensions)
    # WHEN it is called
    answer = invoke(signed_event("POST", call_body("misusedMetrics", {"note": "ORD-1042"}, callId="call_deployed")))
    # THEN it is answered, and the one line about the metrics names the error's type, and nothing of its text
    assert answer.status == 200
    assert [(record["message"], record["error_type"]) for record in warnings_of(logs)] == [
        (NOT_PUBLISHED, "SchemaValidationError")
    ]
    assert "Maximum number of dimensions" not in logs.text()
