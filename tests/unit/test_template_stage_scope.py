"""Two stages in one account never trip each other: each stack's signals are its own.

The function names its service after its stack (POWERTOOLS_SERVICE_NAME), and its metrics
namespace too unless a user writes one in its place; every alarm, dashboard graph and saved query
reads only its own stack's data: a metric of one of its own resources, the handler's metrics
WHERE service is its own, or its own log group. A crash in staging never fires production's
crash alarm, the one a canary rolls back on.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda.project.sam_config import load_template
from median_lambda.protocol import METRICS_NAMESPACE_ENV, SERVICE_NAME_ENV
from median_lambda.runtime.observability import Metric
from median_lambda.testing import translated

from tests.support.stage_signals import emf_documents, function_signals_environment, stage_output
from tests.template_edits import with_namespace
from tests.unit.test_template_alarms import alarm_summing, alarms, insights_query

if TYPE_CHECKING:
    from median_lambda.testing import Stack

# The template as it ships (each stack's namespace its own name), or with a namespace the stacks share.
SHARED = "AcmeSupportTools"

STAGING, PRODUCTION = "median-tools-staging", "median-tools-production"
HANDLER_METRICS = (Metric.TOOL_CRASHES, Metric.TOOL_TIMEOUTS, Metric.REJECTED_SIGNATURES)
# A dashboard graph's CloudWatch search: {"namespace",dimension,...} service="..." MetricName="...".
SEARCH = re.compile(r"\{(?P<schema>[^}]+)\} service=\"(?P<service>[^\"]+)\" MetricName=\"(?P<metric>\w+)\"")
# ... or one of AWS's metrics, by a dimension naming the stack's resource: {AWS/Lambda,...} FunctionName="${...}".
AWS_SEARCH = re.compile(r"\{AWS/[^}]+\} \w+=\"\$\{(?P<resource>\w+)\}\"")


def signals_environment(stack: Stack) -> dict[str, str]:
    return function_signals_environment(stack.properties("MedianToolsFunction")["Environment"]["Variables"])


def own_resource(stack: Stack, value: Any, resource_type: str | None = None) -> bool:
    """Whether a dimension value or log group names one of the stack's own resources (of that type)."""
    if isinstance(value, dict) and len(value) == 1:
        ((function, argument),) = value.items()
        if function == "Fn::GetAtt":
            name = argument[0] if isinstance(argument, list) else str(argument).split(".")[0]
        else:
            name = argument if function == "Ref" else ""
    elif isinstance(value, str) and (found := re.search(r"\$\{(\w+)[.}]", value)):
        name = found[1]
    else:
        return False
    resource = stack.resources.get(name)
    return resource is not None and resource_type in (None, resource["Type"])


def owned_dimensions(stack: Stack, dimensions: list[tuple[str, Any]]) -> bool:
    return any(own_resource(stack, value) for _, value in dimensions)


def selects(query: re.Match[str], document: dict[str, Any]) -> bool:
    """Whether an alarm's Metrics Insights query (or a graph's search) sums a series this EMF document adds to."""
    namespace, dimensions = query["namespace"], {name.strip() for name in query["dimensions"].split(",")}
    return document.get("service") == query["service"] and any(
        query["metric"] in {metric["Name"] for metric in directive["Metrics"]}
        and directive["Namespace"] == namespace
        and [set(each) for each in directive["Dimensions"]] == [dimensions]
        for directive in document["_aws"]["CloudWatchMetrics"]
    )


def deployed(stack_name: str, namespace: str) -> Stack:
    """The stack of that name, from the template as it ships ("") or with a namespace written in it."""
    return translated(with_namespace(namespace) if namespace else None, stack_name=stack_name)


@pytest.mark.parametrize(("namespace", "expected"), [("", "{stack}"), (SHARED, SHARED)])
def test_a_stack_names_its_service_and_as_written_its_namespace_after_itself(namespace: str, expected: str) -> None:
    # GIVEN a stack deployed by its name, with or without a namespace written in the template
    for name in (STAGING, PRODUCTION):
        stack = deployed(name, namespace)
        # THEN its function's Powertools service is the stack's name, and its namespace the stack's unless named
        assert signals_environment(stack)[SERVICE_NAME_ENV] == name
        assert signals_environment(stack)[METRICS_NAMESPACE_ENV] == expected.format(stack=name)


@pytest.mark.parametrize("namespace", ["", SHARED], ids=["each its own namespace", "a shared namespace"])
def test_a_crash_in_staging_fires_stagings_alarms_and_never_productions(namespace: str) -> None:
    # GIVEN staging and production in one account, and staging's function serving a crash, a
    # timeout and a forged signature with the environment its stack gives it
    staging, production = deployed(STAGING, namespace), deployed(PRODUCTION, namespace)
    documents = emf_documents(stage_output(signals_environment(staging)))
    for metric in HANDLER_METRICS:
        # WHEN each stage's alarm on that metric reads the series staging's function wrote
        ours, theirs = (insights_query(alarm_summing(stack, metric)) for stack in (staging, production))
        assert ours is not None and theirs is not None
        # THEN staging's alarm counts them, and production's (which rolls its canary back) counts none
        assert any(selects(ours, document) for document in documents), metric
        assert not any(selects(theirs, document) for document in documents), metric


def alarm_problems(stack: Stack) -> list[str]:
    """Each alarm that reads a metric neither of the stack's own resources nor the handler's own for its service."""
    environment = signals_environment(stack)
    problems = []
    for name, alarm in alarms(stack).items():
        if "MetricName" in alarm:
            if not owned_dimensions(stack, [(each["Name"], each["Value"]) for each in alarm["Dimensions"]]):
                problems.append(f"{name}: {alarm['MetricName']} of no resource of the stack")
            continue
        for query in alarm["Metrics"]:
            if "MetricStat" in query:
                metric = query["MetricStat"]["Metric"]
                dimensions = {each["Name"]: each["Value"] for each in metric["Dimensions"]}
                if metric["Namespace"] == environment[METRICS_NAMESPACE_ENV]:
                    # the handler's own metric, read by name: only the series WHERE service is this stack's
                    if dimensions.get("service") != environment[SERVICE_NAME_ENV]:
                        problems.append(f"{name}: {metric['MetricName']} of another service")
                elif not owned_dimensions(stack, list(dimensions.items())):
                    problems.append(f"{name}: {metric['MetricName']} of no resource of the stack")
            elif query["Expression"].startswith("SELECT"):
                parsed = insights_query(alarm)
                if parsed is None or (parsed["namespace"], parsed["service"]) != (
                    environment[METRICS_NAMESPACE_ENV],
                    environment[SERVICE_NAME_ENV],
                ):
                    problems.append(f"{name}: {query['Expression']} reads another service or namespace")
            elif not set(re.findall(r"\b[a-z]\w*\b", query["Expression"])) <= {each["Id"] for each in alarm["Metrics"]}:
                problems.append(f"{name}: {query['Expression']} reads more than its own queries")
    return problems


def dashboard_rows(widget: dict[str, Any]) -> list[list[Any]]:
    """A metric widget's rows, with CloudWatch's "." (the row above's value) and "..." (all of it) spelled out."""
    rows: list[list[Any]] = []
    previous: list[Any] = []
    for row in widget["properties"].get("metrics", []):
        if row and isinstance(row[0], dict):  # an expression: a search, read on its own
            rows.append(row)
            continue
        items = [item for item in row if not isinstance(item, dict)]
        if items == ["..."]:
            items = list(previous)
        else:
            items = [previous[at] if item == "." else item for at, item in enumerate(items)]
        previous = items
        rows.append(items)
    return rows


def dashboard_and_query_problems(stack: Stack) -> list[str]:
    """Each graph series, log source and saved query that reads data not the stack's own."""
    environment = signals_environment(stack)
    own_namespace, own_service = f'"{environment[METRICS_NAMESPACE_ENV]}"', environment[SERVICE_NAME_ENV]
    name, _ = stack.one_of_type("AWS::CloudWatch::Dashboard")
    widgets = json.loads(stack.properties(name)["DashboardBody"])["widgets"]
    problems = []
    for graph in (widget for widget in widgets if widget["type"] == "metric"):
        for row in dashboard_rows(graph):
            if isinstance(row[0], dict):
                found = SEARCH.search(row[0]["expression"])
                aws_own = AWS_SEARCH.search(row[0]["expression"])
                if aws_own is not None and own_resource(stack, f"${{{aws_own['resource']}}}"):
                    continue  # one of AWS's metrics, of one of the stack's own resources
                if found is None or (found["schema"].split(",")[0], found["service"]) != (own_namespace, own_service):
                    problems.append(f"{graph['properties']['title']}: {row[0]['expression']}")
            elif not owned_dimensions(stack, list(zip(row[2::2], row[3::2], strict=True))):
                problems.append(f"{graph['properties']['title']}: {row}")
    sources = [
        source
        for widget in widgets
        if widget["type"] == "log"
        for source in re.findall(r"SOURCE '([^']+)'", widget["properties"]["query"])
    ]
    queries = [stack.properties(each) for each in stack.of_type("AWS::Logs::QueryDefinition")]
    for group in sources + [group for query in queries for group in query["LogGroupNames"]]:
        if not own_resource(stack, group, "AWS::Logs::LogGroup"):
            problems.append(f"log group {group}")
    stack_name = stack.parameters["AWS::StackName"]
    problems += [f"query {query['Name']}" for query in queries if not query["Name"].startswith(f"{stack_name}/")]
    return problems


@pytest.mark.parametrize("stack_name", [STAGING, PRODUCTION])
@pytest.mark.parametrize("namespace", ["", SHARED], ids=["its own namespace", "a shared namespace"])
def test_every_alarm_graph_and_saved_query_reads_only_its_own_stacks_data(stack_name: str, namespace: str) -> None:
    # GIVEN a stage's stack, with its own metrics namespace or one it shares
    stack = deployed(stack_name, namespace)
    # THEN each alarm reads a metric of one of its own resources, or the handler's metrics in its
    # namespace WHERE service is its own; each graph likewise; each log graph and saved query its
    # own log groups
    assert len(alarms(stack)) >= 8
    assert stack.of_type("AWS::Logs::QueryDefinition")
    assert alarm_problems(stack) == []
    assert dashboard_and_query_problems(stack) == []


def test_an_alarm_or_graph_on_a_fixed_service_is_found() -> None:
    # GIVEN the template as it was: its crash alarm and crash graph read the service `median-tools`,
    # whatever the stack (the service every stage's function then wrote)
    template = load_template()
    resources = template["Resources"]
    expression = resources["ToolCrashesAlarm"]["Properties"]["Metrics"][0]["Expression"]["Fn::Sub"]
    expression[0] = expression[0].replace("${AWS::StackName}", "median-tools")
    body = resources["MedianToolsDashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    body[0] = body[0].replace(
        'service=\\"${AWS::StackName}\\" MetricName=\\"ToolCrashes',
        'service=\\"median-tools\\" MetricName=\\"ToolCrashes',
    )
    # WHEN staging's stack is checked
    stack = translated(template, stack_name=STAGING)
    # THEN both are named, and nothing else
    (alarm,) = alarm_problems(stack)
    assert alarm.startswith("ToolCrashesAlarm: ")
    (graph,) = dashboard_and_query_problems(stack)
    assert graph.startswith("Tool crashes, timeouts and declines, by tool and version: ") and "ToolCrashes" in graph
