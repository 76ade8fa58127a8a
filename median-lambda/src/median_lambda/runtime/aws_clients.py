"""What every AWS call the handler makes shares: calls bounded in time, and how long one may take.

The endpoint must answer before Lambda's deadline, and its own AWS calls are part of the
time it has. Each boto3 client is made from a `CallBounds`, and `longest_call_seconds(bounds)`
is the most one of its calls can take: the one number the time budget (median_lambda/calls/dispatch.py
for the idempotency table, median_lambda/key/source.py for the key) reserves for it. The key's read
through the Parameters and Secrets Lambda Extension's localhost API takes its limits from
here too.

botocore's own limits bound each step (a connect, each wait for bytes), not a call: an answer
that trickles in a byte at a time never meets its read timeout. So every client made here
(`bounded_client`) also bounds each call as a whole, through botocore's public event hooks: when
the call starts (`before-call`) a limit is armed (median_lambda/runtime/time_limits.py) at the sooner of
`longest_call_seconds` from now and the time the outbound calls of what runs must end by
(time_limits.OUTBOUND_DEADLINE: a tool's, the key read's); past it, the call is interrupted
where it waits on the network (a connect, an answer that has not come, a retry's backoff) with
`AwsCallTimedOut`, one of botocore's own errors, and a failed attempt is not retried
(`needs-retry`). An answer that has come is never lost to it: while botocore parses it, or runs
the client's event handlers, the limit waits, and the call's end lifts it. botocore has no such
limit of its own (its Config bounds connect and read only), and a client proxy would miss
paginators and waiters, which call the client's own methods; the events reach every call.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, NamedTuple

from median_lambda.runtime import time_limits

if TYPE_CHECKING:
    from collections.abc import Callable

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
# says so); after it, dispatch has the time left to save once more (median_lambda/calls/idempotency.py),
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
    botocore's backoff first. botocore bounds none of the rest (the DNS lookup, a second
    connect where a name resolves to several addresses, an answer that trickles in): a client
    made by `bounded_client` ends every call by this much time all the same.
    """
    backoff = 0.0
    for retry in range(1, bounds.attempts):
        backoff += min(_THROTTLED_BACKOFF_BASE_SECONDS * 2.0 ** (retry - 1), _MAX_BACKOFF_SECONDS)
        backoff += _RETRY_AFTER_EXTRA_SECONDS
    return bounds.attempts * (bounds.connect_seconds + bounds.read_seconds) + backoff


_ENDS_BY = "median_ends_by"  # in botocore's request context: when this call must have ended
_LIMIT = "median_limit"  # ... and the limit armed for it, lifted when it ends
_HAD_SECONDS = "median_had_seconds"  # ... and how long it was given, which a timeout says
_timed_out_class: list[Callable[..., Exception]] = []
# The limit of the AWS call now under way on the main thread: calls of these clients never nest,
# so one still armed when the next starts was left by a call that ended before botocore's
# `after-call` events (an error between `before-call` and the request), and is lifted then.
_armed_call: list[time_limits.Limit] = []


def aws_call_timed_out() -> Callable[..., Exception]:
    """`AwsCallTimedOut`: botocore's ReadTimeoutError for a call that did not end in the time it had.

    Made at the first client (botocore is imported then, never at a cold GET). A
    ReadTimeoutError, so code that catches botocore's errors (BotoCoreError, HTTPClientError)
    or its read timeout catches it, as it would a step's timeout.
    """
    if not _timed_out_class:
        from botocore.exceptions import ReadTimeoutError

        class AwsCallTimedOut(ReadTimeoutError):
            fmt = 'The call to "{endpoint_url}" did not end within the {seconds:.1f} s it had'

        _timed_out_class.append(AwsCallTimedOut)
    return _timed_out_class[0]


def is_aws_call_timed_out(error: BaseException) -> bool:
    """Whether `error` is an AwsCallTimedOut (none is, before a client was made)."""
    return bool(_timed_out_class) and isinstance(error, _timed_out_class[0])  # type: ignore[arg-type]


def bounded_client(service: str, bounds: CallBounds = KEY_READ, **options: Any) -> Any:
    """A boto3 client whose every call ends within `longest_call_seconds(bounds)` and the outbound deadline.

    Made with `bounded_config(bounds)`; `options` are boto3.client's own (region_name, endpoint_url).
    """
    import boto3

    client = boto3.client(service, config=bounded_config(bounds), **options)  # type: ignore[call-overload]
    _bound_each_call(client, longest_call_seconds(bounds))
    return client


def _bound_each_call(client: Any, longest: float) -> None:
    timed_out = aws_call_timed_out()
    endpoint = client.meta.endpoint_url

    def arm(context: dict[str, Any], **_: Any) -> None:
        now = time.monotonic()
        ends_by = now + longest
        outer = time_limits.OUTBOUND_DEADLINE.get()
        if outer is not None and outer < ends_by:
            ends_by = outer
        seconds = max(0.0, ends_by - now)
        context[_ENDS_BY] = ends_by
        context[_HAD_SECONDS] = seconds
        if _armed_call:
            time_limits.drop(_armed_call.pop())
        limit = time_limits.arm(ends_by, lambda: timed_out(endpoint_url=endpoint, seconds=seconds))
        if limit is not None:
            context[_LIMIT] = limit
            _armed_call.append(limit)

    def lift(context: dict[str, Any], **_: Any) -> None:
        limit = context.pop(_LIMIT, None)
        if limit is not None:
            time_limits.pop(limit)
            if _armed_call and _armed_call[0] is limit:
                _armed_call.clear()

    def no_retry_past_the_end(request_dict: dict[str, Any], caught_exception: Exception | None, **_: Any) -> None:
        # Raised out of botocore's retry loop: the attempt failed, and no time is left for another.
        # An answer that came, an error status included, is botocore's to give.
        context = request_dict.get("context", {})
        ends_by = context.get(_ENDS_BY)
        if caught_exception is not None and ends_by is not None and time.monotonic() >= ends_by:
            # The time the whole call had, as the log says it: not the none left when it ended.
            raise timed_out(endpoint_url=endpoint, seconds=context.get(_HAD_SECONDS, 0.0)) from caught_exception

    events = client.meta.events
    events.register("before-call", arm)
    events.register("after-call", lift)
    events.register("after-call-error", lift)
    events.register_first("needs-retry", no_retry_past_the_end)


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
        client = _tool_clients[key] = bounded_client(service, bounds, **options)
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
