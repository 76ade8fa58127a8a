"""What every AWS call the handler makes shares: calls bounded in time, and how long one may take.

The endpoint must answer before Lambda's deadline, and its own AWS calls are part of the
time it has. Each boto3 client is made from a `CallBounds`, and `longest_call_seconds(bounds)`
is the most one of its calls can take: the one number the time budget (handler/calls/dispatch.py
for the idempotency table, handler/key/source.py for the key) reserves for it. The key's read
through the Parameters and Secrets Lambda Extension's localhost API takes its limits from
here too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from botocore.config import Config


class CallBounds(NamedTuple):
    connect_seconds: float
    read_seconds: float
    attempts: int  # botocore's total_max_attempts: the first try and its retries


# The Median key, read from Secrets Manager at a cold start and when its cache expires. A
# read that fails is remembered, so a retry inside the call is worth its wait.
KEY_READ = CallBounds(connect_seconds=1.0, read_seconds=2.0, attempts=2)

# One request to the idempotency table. DynamoDB answers in milliseconds; a request that has
# not in half a second meets an outage, and waiting longer only takes time from the tool.
# One attempt: before the tool, Median's own retry is the retry (the answer is a 500 that
# says so); after it, dispatch has the time left to save once more (handler/calls/idempotency.py),
# where botocore's retry would wait a jittered backoff that no budget can bound tightly.
STORE_CALL = CallBounds(connect_seconds=0.5, read_seconds=0.5, attempts=1)

# botocore's standard retry mode waits before retry n: rand(0, 1) * min(1 s * 2**(n-1), 20 s)
# for a throttled attempt (less for others), raised up to 5 s more when the answer carries
# `x-amz-retry-after`. The budget counts the longest of those waits.
_THROTTLED_BACKOFF_BASE_SECONDS = 1.0
_MAX_BACKOFF_SECONDS = 20.0
_RETRY_AFTER_EXTRA_SECONDS = 5.0


def bounded_config(bounds: CallBounds = KEY_READ) -> Config:
    from botocore.config import Config

    return Config(
        connect_timeout=bounds.connect_seconds,
        read_timeout=bounds.read_seconds,
        retries={"total_max_attempts": bounds.attempts, "mode": "standard"},
    )


def longest_call_seconds(bounds: CallBounds = KEY_READ) -> float:
    """The longest one call of a client made with `bounded_config(bounds)` can take, retries included.

    Each attempt may wait its connect timeout, then its read timeout; each retry waits
    botocore's backoff first. Not counted, because botocore bounds none of them: the DNS
    lookup, a second connect where a name resolves to several addresses, and an answer that
    trickles in (the read timeout bounds each wait for bytes, and AWS's answers here arrive
    in one).
    """
    backoff = 0.0
    for retry in range(1, bounds.attempts):
        backoff += min(_THROTTLED_BACKOFF_BASE_SECONDS * 2.0 ** (retry - 1), _MAX_BACKOFF_SECONDS)
        backoff += _RETRY_AFTER_EXTRA_SECONDS
    return bounds.attempts * (bounds.connect_seconds + bounds.read_seconds) + backoff


def extension_timeouts() -> tuple[float, float]:
    """(connect, read) seconds for one request to the Secrets Extension's localhost API.

    One attempt, with boto3's per-attempt limits: a failure falls back to boto3, which is the
    retry. The read limit also bounds the extension's own call to Secrets Manager, which it
    makes while we wait when its cache has no copy. At worst a key read then costs one
    extension attempt and boto3's longest call: (1 + 2) + longest_call_seconds(KEY_READ).
    """
    return KEY_READ.connect_seconds, KEY_READ.read_seconds


# --- Tools' own AWS and HTTP calls (public through ToolContext.aws_client and .http_timeout) ---

# A tool's call when nothing bounds it (a test or a local run without a Lambda context), and the
# most any tool's call is given: with one retry it stays under the function's 29 s.
TOOL_CALL = CallBounds(connect_seconds=1.0, read_seconds=10.0, attempts=2)
# What a tool's client may be made with, most generous first: the first whose longest call fits
# the time the call has left is used. A short list, so each service has at most this many
# clients per container (making one costs ~10-50 ms; they are kept).
_TOOL_CALL_LADDER = (
    TOOL_CALL,
    CallBounds(connect_seconds=1.0, read_seconds=5.0, attempts=2),
    CallBounds(connect_seconds=1.0, read_seconds=3.0, attempts=2),
    CallBounds(connect_seconds=1.0, read_seconds=5.0, attempts=1),
    CallBounds(connect_seconds=1.0, read_seconds=2.0, attempts=1),
    CallBounds(connect_seconds=0.5, read_seconds=1.0, attempts=1),
    CallBounds(connect_seconds=0.25, read_seconds=0.5, attempts=1),
    CallBounds(connect_seconds=0.1, read_seconds=0.2, attempts=1),
)
# Kept from a tool's time for the tool itself, after its AWS or HTTP call gave up: enough to
# catch the error and raise a ToolError whose answer reaches Median before the 504 would.
TOOL_MARGIN_SECONDS = 0.5
DEFAULT_HTTP_TIMEOUT_SECONDS = 10.0
_MIN_HTTP_TIMEOUT_SECONDS = 0.1

_tool_clients: dict[tuple[str, CallBounds, tuple[tuple[str, str], ...]], object] = {}


def bounds_within(seconds_left: float | None) -> CallBounds:
    """The most generous of the tool call bounds whose longest call ends `TOOL_MARGIN_SECONDS` before time is up."""
    if seconds_left is None:
        return TOOL_CALL
    for bounds in _TOOL_CALL_LADDER:
        if longest_call_seconds(bounds) <= seconds_left - TOOL_MARGIN_SECONDS:
            return bounds
    return _TOOL_CALL_LADDER[-1]  # less is left than any bound: the 504 comes first, as it must


def client_within(service: str, seconds_left: float | None, **options: str) -> object:
    """A boto3 client for `service` whose every call ends within `seconds_left` (see bounds_within).

    Kept per container for each (service, bounds, options): the same client serves every call
    that has as much time left. `options` are boto3.client's own (region_name, endpoint_url).
    """
    bounds = bounds_within(seconds_left)
    key = (service, bounds, tuple(sorted(options.items())))
    client = _tool_clients.get(key)
    if client is None:
        import boto3

        client = _tool_clients[key] = boto3.client(  # type: ignore[call-overload]
            service, config=bounded_config(bounds), **options
        )
    return client


def http_timeout_within(seconds_left: float | None, at_most: float | None = None) -> float:
    """Seconds an outbound HTTP request may take: the time left less TOOL_MARGIN_SECONDS, at most `at_most`."""
    ceiling = DEFAULT_HTTP_TIMEOUT_SECONDS if at_most is None else at_most
    if seconds_left is None:
        return ceiling
    return max(_MIN_HTTP_TIMEOUT_SECONDS, min(ceiling, seconds_left - TOOL_MARGIN_SECONDS))


def forget_tool_clients() -> None:
    """Drop the tools' clients: tests that move AWS_ENDPOINT_URL, and SnapStart's restore."""
    _tool_clients.clear()
