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
def output_lines(capsys: pytest.CaptureFixture[str]) -> Iterator[Callable[[], list[str]]]:
    """Every line the handler has written so far: its logs, its EMF metrics, any warning."""
    from handler.observability import logger

    # The Logger holds the stdout it found at import; point it at the one capsys captures.
    handler = logger.registered_handler
    assert isinstance(handler, logging.StreamHandler)
    previous = handler.setStream(sys.stdout)
    seen: list[str] = []

    def lines() -> list[str]:
        captured = capsys.readouterr()
        seen.extend(line for line in (captured.out + captured.err).splitlines() if line.strip())
        return list(seen)

    try:
        yield lines
    finally:
        if previous is not None:
            handler.setStream(previous)
