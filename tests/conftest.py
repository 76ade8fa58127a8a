from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

from handler.testing import TEST_KEY, MedianTestClient

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from tests.scratch_tools import ScratchTools

# No test may reach AWS: fake credentials and a region, before any boto3 client exists.
os.environ.update(
    {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "POWERTOOLS_SERVICE_NAME": "median-tools-test",
    }
)
for name in ("AWS_PROFILE", "MEDIAN_KEY_SECRET_ID", "MEDIAN_DEV_KEY", "AWS_LAMBDA_FUNCTION_NAME", "AWS_SAM_LOCAL"):
    os.environ.pop(name, None)
# Idempotency, metrics namespace and tracing as a fresh clone has them: off, default, off.
for name in (
    "IDEMPOTENCY_TABLE",
    "IDEMPOTENCY_EXPIRY_SECONDS",
    "POWERTOOLS_METRICS_NAMESPACE",
    "POWERTOOLS_TRACE_DISABLED",
):
    os.environ.pop(name, None)

# The fuzz suite's budget: bounded so `make test` stays fast. HYPOTHESIS_PROFILE=deep searches longer.
_FUZZ_SETTINGS = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}
settings.register_profile("ci", max_examples=200, **_FUZZ_SETTINGS)
settings.register_profile("deep", max_examples=5_000, **_FUZZ_SETTINGS)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


class _CurrentStdout:
    """Writes to sys.stdout as it is at each write, as print() does (and Powertools' EMF metrics)."""

    def write(self, text: str) -> int:
        return sys.stdout.write(text)

    def flush(self) -> None:
        sys.stdout.flush()


def _log_to_current_stdout() -> None:
    # Powertools' Logger keeps the stdout it finds when it is created; pytest swaps sys.stdout for
    # every phase of every test that captures it. Pointed at the current one, the handler's log
    # lines reach whichever capture is active, and never a closed one.
    from handler.observability import logger  # after the environment above is set

    handler = logger.registered_handler
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(_CurrentStdout())  # type: ignore[arg-type]


_log_to_current_stdout()


@pytest.fixture
def client() -> MedianTestClient:
    """Signs requests with the protocol's test key and serves it to the handler as the dev key."""
    return MedianTestClient(TEST_KEY)


@pytest.fixture
def clean_env() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@pytest.fixture
def scratch() -> Iterator[ScratchTools]:
    """Test-only tools (counting, waiting, crashing), registered for this test alone."""
    from tests.scratch_tools import scratch_tools

    with scratch_tools() as tools:
        yield tools


@pytest.fixture
def output_lines(capsys: pytest.CaptureFixture[str]) -> Callable[[], list[str]]:
    """Every line the handler has written so far: its logs, its EMF metrics, any warning."""
    seen: list[str] = []

    def lines() -> list[str]:
        captured = capsys.readouterr()
        seen.extend(line for line in (captured.out + captured.err).splitlines() if line.strip())
        return list(seen)

    return lines
