"""The saved Logs Insights queries and the dashboard read what the handler and Lambda write."""

from __future__ import annotations

import inspect
import json
import re
from typing import TYPE_CHECKING, Any

from median_lambda.protocol import TOOL_TIME_MARGIN_SECONDS
from median_lambda.runtime.observability import Metric
from median_lambda.testing import FakeLambdaContext, call_body, signed_event

from tests import scratch_tools
from tests.logs_insights import parse_patterns, selected
from tests.support.stage_signals import emf_documents, function_signals_environment, stage_output

if TYPE_CHECKING:
    from median_lambda.testing import MedianTestClient, Stack

    from tests.conftest import LogCapture
    from tests.scratch_tools import ScratchTools

QUERY = "AWS::Logs::QueryDefinition"


def query(stack: Stack, name_suffix: str) -> dict[str, Any]:
    (found,) = [
        properties
        for name in stack.of_type(QUERY)
        if (properties := stack.properties(name))["Name"].endswith(name_suffix)
    ]
    return found


def test_the_saved_queries_read_the_functions_log_group(stack: Stack) -> None:
    # GIVEN the stack's saved queries
    queries = [stack.properties(name) for name in stack.of_type(QUERY)]
    # THEN there are the three of the runbook, named under the stack, on the function's log group
    assert sorted(each["Name"] for each in queries) == [
        f"{stack.parameters['AWS::StackName']}/cold-starts-by-day",
        f"{stack.parameters['AWS::StackName']}/tool-error-causes",
        f"{stack.parameters['AWS::StackName']}/tool-errors-by-tool",
    ]
    for each in queries:
        assert each["LogGroupNames"] == [{"Ref": "MedianToolsLogGroup"}]


def test_the_cold_start_query_counts_init_and_restore_durations_by_day(stack: Stack) -> None:
    # GIVEN the cold-start query and a REPORT line of a SnapStart restore, as Lambda writes it
    text = query(stack, "/cold-starts-by-day")["QueryString"]
    report = (
        "REPORT RequestId: 3f1c Duration: 12.30 ms Billed Duration: 13 ms Memory Size: 512 MB "
        "Max Memory Used: 88 MB Restore Duration: 231.55 ms Billed Restore Duration: 120 ms"
    )
    # THEN it reads Lambda's REPORT lines, Init duration (Logs Insights' @initDuration) and the restore's, per day
    assert 'filter @type = "REPORT"' in text
    assert "@initDuration" in text
    assert text.rstrip().endswith("by bin(1d)")
    (restore,) = parse_patterns(text)
    match = restore.search(report)
    assert match is not None and match["restoreDuration"] == "231.55"


def test_the_tool_errors_query_names_the_tool_and_reference_of_each_crash_and_timeout(
    stack: Stack, client: MedianTestClient, scratch: ScratchTools, logs: LogCapture
) -> None:
    # GIVEN a tool that crashes and one that runs out of time, served by the handler
    context = FakeLambdaContext()
    crashed = client.send(signed_event("POST", call_body("crashQuotingInput", {"note": "x"})), context)
    timed_out = client.send(
        signed_event("POST", call_body("waitForRelease", {})),
        FakeLambdaContext(timeout_seconds=TOOL_TIME_MARGIN_SECONDS + 0.2),
    )
    assert (crashed.status, timed_out.status) == (500, 504)
    text = query(stack, "/tool-errors-by-tool")["QueryString"]
    (pattern,) = parse_patterns(text)
    # WHEN the query's filter and pattern are applied to the handler's log records
    matched = [
        (record, found)
        for record in logs.records()
        if record.get("level") == "ERROR" and (found := pattern.search(record["message"])) is not None
    ]
    # THEN it finds both, and names the tool and the outcome of each
    assert sorted((found["tool"], found["outcome"]) for _, found in matched) == [
        ("crashQuotingInput", "crashed"),
        ("waitForRelease", "timed out"),
    ]
    # AND the reference it reports (each line's request id) is the one the answer named
    assert "latest(function_request_id) as lastReference" in text
    references = {found["tool"]: record["function_request_id"] for record, found in matched}
    for tool, answer in (("crashQuotingInput", crashed), ("waitForRelease", timed_out)):
        assert references[tool] in answer.body["error"]["message"], tool


def test_the_causes_query_names_what_lay_behind_each_tool_error_and_where(
    stack: Stack, client: MedianTestClient, scratch: ScratchTools, logs: LogCapture
) -> None:
    # GIVEN a tool that declines with a ToolError raised from a ValueError, and one that declines without a cause
    declined = client.call("declineFromACause", {"note": "not a number"})
    client.call("declineWithRunCount", {})
    assert declined.body["error"] == {"code": "tool_error", "message": "That note is no number."}
    text = query(stack, "/tool-error-causes")["QueryString"]
    # WHEN the query's filter and pattern are applied to the handler's log records
    rows = selected(text, logs.records())
    # THEN it finds the one with a cause, and names it, its type and the author's line it came through
    ((row,),) = [rows]
    assert row["declined"] == "Tool declineFromACause"
    assert row["cause_type"] == "ValueError"
    line = inspect.getsourcelines(scratch_tools.register_scratch_tools)[1]
    source = inspect.getsource(scratch_tools.register_scratch_tools).splitlines()
    raised_at = line + next(number for number, each in enumerate(source) if "int(args.note)" in each)
    assert row["cause_origin"] == f"tests/scratch_tools.py:{raised_at}"
    assert row["function_request_id"] in {record.get("function_request_id") for record in logs.records()}


def dashboard(stack: Stack) -> dict[str, Any]:
    name, _ = stack.one_of_type("AWS::CloudWatch::Dashboard")
    body: dict[str, Any] = json.loads(stack.properties(name)["DashboardBody"])
    return body


def test_the_dashboard_shows_every_alarm_and_cold_starts(stack: Stack) -> None:
    # GIVEN the dashboard
    widgets = dashboard(stack)["widgets"]
    (alarm_widget,) = [widget for widget in widgets if widget["type"] == "alarm"]
    (log_widget,) = [widget for widget in widgets if widget["type"] == "log"]
    # THEN it shows the state of each of the stack's alarms
    assert sorted(alarm_widget["properties"]["alarms"]) == sorted(
        f"${{{name}.Arn}}" for name in stack.of_type("AWS::CloudWatch::Alarm")
    )
    # AND Init duration, from the function's REPORT lines
    assert log_widget["properties"]["query"].startswith("SOURCE '${MedianToolsLogGroup}'")
    assert "@initDuration" in log_widget["properties"]["query"]


def test_the_dashboards_tool_and_signature_graphs_search_the_handlers_schemas(stack: Stack) -> None:
    # GIVEN the handler's metrics for a tool that crashes, one that times out, and a forged request,
    # served by a function with the environment the stack gives it
    variables = stack.properties("MedianToolsFunction")["Environment"]["Variables"]
    schemas = {
        metric["Name"]: (directive["Namespace"], frozenset(directive["Dimensions"][0]), document["service"])
        for document in emf_documents(stage_output(function_signals_environment(variables)))
        for directive in document["_aws"]["CloudWatchMetrics"]
        for metric in directive["Metrics"]
    }
    # THEN each graph of a project metric searches exactly the schema the handler files it under
    graphed = set()
    for search in searches(stack):
        if search.startswith("SEARCH('{AWS/"):
            continue  # one of AWS's own metrics, of the stack's own resources (test_template_stage_scope)
        found = SEARCH.search(search)
        assert found is not None, search
        namespace, *dimensions = found["schema"].split(",")
        assert schemas[found["metric"]] == (namespace.strip('"'), frozenset(dimensions), found["service"]), search
        graphed.add(found["metric"])
    assert {
        Metric.TOOL_CRASHES,
        Metric.TOOL_TIMEOUTS,
        Metric.TOOL_DURATION,
        Metric.REJECTED_SIGNATURES,
        Metric.SERVER_ERRORS,
    } <= graphed
    # AND the crashes, timeouts, declines and 5XX answers are graphed by version, so a canary is seen beside the
    # old version
    by_version = (Metric.TOOL_CRASHES, Metric.TOOL_TIMEOUTS, Metric.TOOL_ERRORS, Metric.SERVER_ERRORS)
    for metric in by_version:
        (search,) = [search for search in searches(stack) if f'MetricName="{metric}"' in search]
        assert "function_version" in search, search
    (invocations,) = [search for search in searches(stack) if "Invocations" in search]
    assert invocations.startswith("SEARCH('{AWS/Lambda,ExecutedVersion,FunctionName,Resource}")


# A dashboard graph's CloudWatch search: the schema {"namespace",dimension,...}, then its service and metric.
SEARCH = re.compile(r"\{(?P<schema>[^}]+)\} service=\"(?P<service>[^\"]+)\" MetricName=\"(?P<metric>\w+)\"")


def searches(stack: Stack) -> list[str]:
    """The search expressions of the dashboard's graphs."""
    return [
        metric["expression"]
        for widget in dashboard(stack)["widgets"]
        for metric in widget["properties"].get("metrics", [])
        for metric in metric
        if isinstance(metric, dict) and "expression" in metric
    ]
