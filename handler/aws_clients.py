"""What every AWS call the handler makes shares: timeouts short enough to leave time to answer.

Both ways of reaching AWS take their limits from here: boto3's clients, and the key's read
through the Parameters and Secrets Lambda Extension's localhost API (handler/key.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from botocore.config import Config

# An unreachable service must cost a request a few seconds, not the Lambda's whole
# timeout: two attempts of at most ~1 s to connect and 2 s to read.
_CONNECT_TIMEOUT_SECONDS = 1
_READ_TIMEOUT_SECONDS = 2
_MAX_ATTEMPTS = 2


def bounded_config() -> Config:
    from botocore.config import Config

    return Config(
        connect_timeout=_CONNECT_TIMEOUT_SECONDS,
        read_timeout=_READ_TIMEOUT_SECONDS,
        retries={"total_max_attempts": _MAX_ATTEMPTS, "mode": "standard"},
    )


def extension_timeouts() -> tuple[float, float]:
    """(connect, read) seconds for one request to the Secrets Extension's localhost API.

    One attempt, with boto3's per-attempt limits: a failure falls back to boto3, which is the
    retry. The read limit also bounds the extension's own call to Secrets Manager, which it
    makes while we wait when its cache has no copy. At worst a key read then costs one
    extension attempt and boto3's attempts: (1 + 2) + 2 x (1 + 2) = 9 s.
    """
    return float(_CONNECT_TIMEOUT_SECONDS), float(_READ_TIMEOUT_SECONDS)
