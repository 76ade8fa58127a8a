"""The HTTP API's stage: throttled before the function, and logged per request without a header."""

from __future__ import annotations

import json
import re
from typing import Any

from median_lambda.testing import Stack, translated

from tests.template_edits import edited

STAGE = "AWS::ApiGatewayV2::Stage"
# Variables that carry what a client sent in a header, or an authorizer's view of one.
HEADER_VARIABLES = re.compile(r"header|useragent|authorizer|identity\.(caller|user|apikey)", re.IGNORECASE)


def stage(stack: Stack) -> dict[str, Any]:
    name, _ = stack.one_of_type(STAGE)
    return stack.properties(name)


def test_the_stage_throttles_at_the_limits_its_lines_say() -> None:
    # GIVEN the API's rate and burst written as a user changes them, on their lines of the template
    stack = translated(
        edited(
            ("ThrottlingRateLimit: 50\n", "ThrottlingRateLimit: 7\n"),
            ("ThrottlingBurstLimit: 100\n", "ThrottlingBurstLimit: 9\n"),
        )
    )
    # THEN every route of the stage is throttled there, by API Gateway, before any invocation
    assert stage(stack)["DefaultRouteSettings"] == {"ThrottlingRateLimit": 7, "ThrottlingBurstLimit": 9}


def test_the_limits_as_written_pass_a_small_company_and_stop_a_flood(stack: Stack) -> None:
    # GIVEN the limits as the template ships them: a small company's Median sends a few requests a second at its busiest
    limits = stage(stack)["DefaultRouteSettings"]
    rate, burst = limits["ThrottlingRateLimit"], limits["ThrottlingBurstLimit"]
    # THEN they leave it room many times over, and stop far short of API Gateway's account default (10,000/s)
    assert 20 <= rate <= 500
    assert rate <= burst <= 1000


def test_the_access_log_goes_to_its_own_log_group_kept_as_long_as_the_functions(stack: Stack) -> None:
    # GIVEN the stage's access log
    destination = stage(stack)["AccessLogSettings"]["DestinationArn"]
    # THEN the stage logs to a log group of the stack's that is not the function's, kept as long, and not forever
    (group, attribute) = destination["Fn::GetAtt"].split(".")
    assert attribute == "Arn"
    assert stack.resources[group]["Type"] == "AWS::Logs::LogGroup"
    functions_group = stack.properties("MedianToolsFunction")["LoggingConfig"]["LogGroup"]["Ref"]
    assert group != functions_group
    assert stack.properties(group)["RetentionInDays"] == stack.properties(functions_group)["RetentionInDays"] == 30


def test_the_access_log_is_one_json_object_per_request_without_any_header(stack: Stack) -> None:
    # GIVEN the access log's format
    log_format = stage(stack)["AccessLogSettings"]["Format"]
    variables = re.findall(r"\$context\.[A-Za-z0-9_.]+", log_format)
    # THEN each request logs one JSON object (each variable quoted, so any value keeps it JSON)
    fields = json.loads(log_format)
    assert all(isinstance(value, str) for value in fields.values())
    assert variables
    # AND no field is a header or comes from one: the signature rides in a header
    assert not [variable for variable in variables if HEADER_VARIABLES.search(variable)]
    # AND a line can be matched to the function's logs: its request id is the `reference` errors name
    assert fields["integrationRequestId"] == "$context.integration.requestId"
    assert {"status", "integrationError", "error"} <= set(fields)
