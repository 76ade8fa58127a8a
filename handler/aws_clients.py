"""What every AWS call the handler makes shares: calls bounded in time, and how long one may take.

The endpoint must answer before Lambda's deadline, and its own AWS calls are part of the
time it has. Each boto3 client is made from a `CallBounds`, and `longest_call_seconds(bounds)`
is the most one of its calls can take: the one number the time budget (handler/dispatch.py
for the idempotency table, handler/key.py for the key) reserves for it. The key's read
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
# says so); after it, dispatch has the time left to save once more (handler/idempotency.py),
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
