"""What every AWS client the handler makes shares: timeouts short enough to leave time to answer."""

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
