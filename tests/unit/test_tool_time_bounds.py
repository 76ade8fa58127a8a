"""A tool's AWS client and HTTP timeout end before the call's time does, however much is left."""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st
from median_lambda import ToolContext
from median_lambda.runtime.aws_clients import (
    DEFAULT_HTTP_TIMEOUT_SECONDS,
    TOOL_CALL,
    TOOL_MARGIN_SECONDS,
    bounds_within,
    forget_tool_clients,
    longest_call_seconds,
)

# The least time for which a bound can still leave the margin: the shortest rung and the margin.
SHORTEST = longest_call_seconds(bounds_within(0.0)) + TOOL_MARGIN_SECONDS


@given(st.floats(min_value=SHORTEST, max_value=900.0))
def test_an_aws_call_with_its_retries_ends_before_the_time_left_less_the_margin(seconds_left: float) -> None:
    # GIVEN any time a call has left
    # WHEN a tool's client is bounded by it
    bounds = bounds_within(seconds_left)
    # THEN its longest call, retries and backoff included, leaves the tool its margin for a ToolError
    assert longest_call_seconds(bounds) <= seconds_left - TOOL_MARGIN_SECONDS
    # AND never more than the 29 s function has at all
    assert longest_call_seconds(bounds) <= longest_call_seconds(TOOL_CALL) < 29


def test_a_client_made_through_the_context_carries_its_bounds() -> None:
    # GIVEN a call with 4 seconds left
    forget_tool_clients()
    ctx = ToolContext(deadline=time.monotonic() + 4.0)
    # WHEN the tool asks for a DynamoDB client
    client = ctx.aws_client("dynamodb", region_name="eu-west-1")
    # THEN its timeouts and attempts are a rung that fits, not boto3's 60 s defaults
    config = client.meta.config
    bounds = bounds_within(4.0)
    assert (config.connect_timeout, config.read_timeout) == (bounds.connect_seconds, bounds.read_seconds)
    assert config.retries["total_max_attempts"] == bounds.attempts
    assert config.read_timeout < 4.0
    # AND the next call with as much time left gets the same client, made once per container
    assert ToolContext(deadline=time.monotonic() + 4.0).aws_client("dynamodb", region_name="eu-west-1") is client
    forget_tool_clients()


def test_an_http_timeout_is_the_time_left_less_the_margin_and_at_most_the_ceiling() -> None:
    # GIVEN calls with a little, a lot, and no deadline at all
    soon = ToolContext(deadline=time.monotonic() + 3.0)
    later = ToolContext(deadline=time.monotonic() + 25.0)
    unbounded = ToolContext()
    # THEN each timeout ends before the 504 would, and none waits forever
    assert soon.http_timeout() <= 3.0 - TOOL_MARGIN_SECONDS
    assert later.http_timeout() == DEFAULT_HTTP_TIMEOUT_SECONDS
    assert later.http_timeout(at_most=20.0) <= 25.0 - TOOL_MARGIN_SECONDS
    assert unbounded.http_timeout() == DEFAULT_HTTP_TIMEOUT_SECONDS
    assert ToolContext(deadline=time.monotonic() - 1).http_timeout() > 0
