from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from handler.testing import TEST_KEY, MedianTestClient

if TYPE_CHECKING:
    from collections.abc import Iterator

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


@pytest.fixture
def client() -> MedianTestClient:
    """Signs requests with the protocol's test key and serves it to the handler as the dev key."""
    return MedianTestClient(TEST_KEY)


@pytest.fixture
def clean_env() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as patch:
        yield patch
