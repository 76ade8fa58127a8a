"""Every field a saved Logs Insights query reads is one the handler writes, on the lines the query selects.

The lines are Powertools' JSON, captured from real invocations of `lambda_handler` that fail in each way
the runbook's queries look for: a crash, a timeout, ToolErrors raised from a cause (a bug, and an AWS
error from moto's DynamoDB over HTTP, which adds its code), from diagnostics too, and the calls no query
should select. tests/logs_insights.py applies each query's commands to them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from botocore.exceptions import ClientError
from median_lambda import ToolContext, ToolError, diagnostics, tool
from median_lambda.protocol import TOOL_TIME_MARGIN_SECONDS
from median_lambda.testing import FakeLambdaContext, call_body, signed_event, translated

from tests.logs_insights import fields_read, selected
from tests.scratch_tools import NoteInput  # noqa: TC001 - @tool reads the annotation at run time

if TYPE_CHECKING:
    from median_lambda.testing import MedianAWS, MedianTestClient, Stack

    from tests.conftest import LogCapture
    from tests.scratch_tools import ScratchTools

QUERY = "AWS::Logs::QueryDefinition"
# The tool-errors query as it was: it read the reference from `request_id`, which no line carried.
QUERY_THAT_READ_NO_FIELD = """filter level = "ERROR"
| parse message /^Tool (?<tool>\\S+) .*(?<outcome>crashed|timed out)$/
| filter ispresent(outcome)
| fields coalesce(reference, request_id) as ref
| stats count(*) as errors, latest(error_type) as lastErrorType, latest(ref) as lastReference
  by tool, outcome
"""


@pytest.fixture
def failing_lines(
    median_aws: MedianAWS, scratch: ScratchTools, client: MedianTestClient, logs: LogCapture
) -> list[dict[str, Any]]:
    """The records of every kind of failing call, and of calls no query should select."""

    @tool(risk="low", name="orderLookup")
    def order_lookup(args: NoteInput, ctx: ToolContext) -> dict[str, Any]:
        """Look an order up in a table this stage does not have."""
        try:
            ctx.aws_client("dynamodb").get_item(TableName="acme-orders", Key={"id": {"S": args.note}})
        except ClientError as error:
            raise ToolError("The order store is not answering; try again later.") from error
        return {}

    @diagnostics
    def health() -> dict[str, Any]:
        try:
            return {"orders": int("many")}
        except ValueError as error:
            raise ToolError("The order count is unknown.") from error

    client.call("crashQuotingInput", {"note": "x"})
    client.send(
        signed_event("POST", call_body("waitForRelease", {})),
        FakeLambdaContext(timeout_seconds=TOOL_TIME_MARGIN_SECONDS + 0.2),
    )
    scratch.release.set()
    client.call("declineFromACause", {"note": "x"})
    client.call("orderLookup", {"note": "ORD-1042"})
    client.diagnostics()
    client.call("declineWithRunCount", {})
    client.call("countRunsFresh", {})
    client.send(signed_event("POST", call_body("crashQuotingInput", {}), key="mk_not_the_key"))
    return logs.records()


def handlers_queries(stack: Stack) -> dict[str, str]:
    """The saved queries on the handler's own lines (not Lambda's REPORT lines), by name."""
    return {
        properties["Name"]: properties["QueryString"]
        for name in stack.of_type(QUERY)
        if "@type" not in (properties := stack.properties(name))["QueryString"]
    }


def missing_fields(query_string: str, records: list[dict[str, Any]]) -> list[str]:
    """Each field the query reads that is not where it must be, on the lines it selects."""
    rows = selected(query_string, records)
    read = fields_read(query_string)
    missing = [f"{field} (on every line)" for field in read.on_every_line if not all(field in row for row in rows)]
    missing += [f"{field} (on any line)" for field in read.on_some_line if not any(field in row for row in rows)]
    return sorted(missing)


def test_every_field_the_saved_queries_read_is_on_the_lines_they_select(failing_lines: list[dict[str, Any]]) -> None:
    # GIVEN the stack's saved queries on the handler's lines
    queries = handlers_queries(translated())
    assert sorted(name.rsplit("/", 1)[1] for name in queries) == ["tool-error-causes", "tool-errors-by-tool"]
    for name, text in queries.items():
        # WHEN each is applied to the real lines
        rows = selected(text, failing_lines)
        # THEN it selects lines, and every field it filters or groups on is on each of them, and every
        # field it aggregates on one at least
        assert rows, name
        assert missing_fields(text, failing_lines) == [], name


def test_the_tool_errors_query_selects_the_crash_and_the_timeout_and_their_references(
    failing_lines: list[dict[str, Any]],
) -> None:
    # GIVEN the tool-errors query
    (text,) = [text for name, text in handlers_queries(translated()).items() if name.endswith("/tool-errors-by-tool")]
    # WHEN it is applied to the real lines
    rows = selected(text, failing_lines)
    # THEN it keeps the crash and the timeout, each with its type (the crash's) and its request id
    assert sorted((row["tool"], row["outcome"]) for row in rows) == [
        ("crashQuotingInput", "crashed"),
        ("waitForRelease", "timed out"),
    ]
    assert all(row["function_request_id"] == row["reference"] for row in rows)
    assert [row["error_type"] for row in rows if row["outcome"] == "crashed"] == ["ValueError"]


def test_the_causes_query_selects_each_tool_error_raised_from_a_cause(failing_lines: list[dict[str, Any]]) -> None:
    # GIVEN the tool-error-causes query
    (text,) = [text for name, text in handlers_queries(translated()).items() if name.endswith("/tool-error-causes")]
    # WHEN it is applied to the real lines
    rows = selected(text, failing_lines)
    # THEN it keeps the declines with a cause, the tool's and diagnostics', each by type, with AWS's code
    assert sorted((row["declined"], row["cause_type"], row.get("aws_error_code")) for row in rows) == [
        ("Diagnostics", "ValueError", None),
        ("Tool declineFromACause", "ValueError", None),
        ("Tool orderLookup", "ResourceNotFoundException", "ResourceNotFoundException"),
    ]
    assert all(row["cause_origin"].startswith("tests/") for row in rows)


def test_a_query_reading_a_field_no_line_carries_is_caught(failing_lines: list[dict[str, Any]]) -> None:
    # GIVEN the tool-errors query as it once was, reading the reference from `request_id`
    # WHEN its fields are checked against the real lines
    # THEN the field no line carries is named
    assert missing_fields(QUERY_THAT_READ_NO_FIELD, failing_lines) == ["request_id (on any line)"]
