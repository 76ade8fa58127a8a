"""What the log says while the key source keeps a key through a failed read, or refuses one as too old.

Each line is what an operator goes by during an outage: which key is in use, and why a read
failed. A key source with no extension configured says nothing of the extension.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import pytest
from median_lambda import app
from median_lambda.key.source import MedianKeySource
from median_lambda.protocol import (
    KEY_CACHE_SECONDS,
    KEY_CACHE_SECONDS_ENV,
    KEY_MIN_REFRESH_SECONDS,
    KEY_MIN_REFRESH_SECONDS_ENV,
    KEY_SECRET_ENV,
    KEY_STALE_IF_ERROR_SECONDS_ENV,
    SECRETS_EXTENSION_PORT_ENV,
)
from median_lambda.testing import FakeLambdaContext, answer_of, signed_event

from tests.clock import SteppedClock

if TYPE_CHECKING:
    from median_lambda.testing import TestAnswer
    from mypy_boto3_secretsmanager import SecretsManagerClient

    from tests.conftest import LogCapture

KEY = "mk_live_good_0123456789abcdef"


def get() -> TestAnswer:
    return answer_of(app.lambda_handler(signed_event("GET", key=KEY), FakeLambdaContext()))  # type: ignore[arg-type]


@pytest.fixture
def secret(secrets: SecretsManagerClient, clean_env: pytest.MonkeyPatch) -> tuple[str, SteppedClock]:
    """A secret holding KEY, named to a new container with no extension configured."""
    secret_id = f"median/kept-{uuid.uuid4().hex[:8]}"
    secrets.create_secret(Name=secret_id, SecretString=KEY)
    clean_env.setenv(KEY_SECRET_ENV, secret_id)
    clean_env.delenv(SECRETS_EXTENSION_PORT_ENV, raising=False)
    clock = SteppedClock()
    clean_env.setattr(app, "key_source", MedianKeySource(clock=clock))
    return secret_id, clock


def test_a_read_without_the_extension_configured_says_nothing_of_it(
    secret: tuple[str, SteppedClock], logs: LogCapture
) -> None:
    # GIVEN no extension port in the environment
    # WHEN the key is read
    answer = get()
    # THEN it verifies, and no line speaks of the extension: it was never asked
    assert answer.status == 200
    assert not [r for r in logs.records() if "Extension" in r["message"]]


def test_a_failed_read_that_keeps_the_key_names_its_cause(
    secret: tuple[str, SteppedClock], secrets: SecretsManagerClient, logs: LogCapture
) -> None:
    # GIVEN a container holding the key past its cache lifetime, and the secret since emptied
    secret_id, clock = secret
    assert get().status == 200
    secrets.put_secret_value(SecretId=secret_id, SecretString="   ")
    clock.advance(KEY_CACHE_SECONDS + KEY_MIN_REFRESH_SECONDS)
    # WHEN a request makes it read the secret again
    answer = get()
    # THEN the key read before still verifies, and the warning names the read's cause
    assert answer.status == 200
    [kept] = [r for r in logs.records() if r["message"].startswith("Reading the Median key failed")]
    assert kept["message"] == "Reading the Median key failed; still verifying with the key read before"
    assert kept["level"] == "WARNING"
    assert kept["cause"] == "the secret is empty"


def test_a_key_past_its_lifetime_with_no_read_allowed_is_refused_as_too_old(
    secret: tuple[str, SteppedClock], clean_env: pytest.MonkeyPatch, logs: LogCapture
) -> None:
    # GIVEN a refresh floor longer than the key's lifetime, and no stale window: settings under
    # which an expired key can be neither read again nor kept
    clean_env.setenv(KEY_CACHE_SECONDS_ENV, "60")
    clean_env.setenv(KEY_MIN_REFRESH_SECONDS_ENV, "600")
    clean_env.setenv(KEY_STALE_IF_ERROR_SECONDS_ENV, "0")
    _, clock = secret
    assert get().status == 200
    # WHEN a request comes once the key has expired, within the floor
    clock.advance(60)
    answer = get()
    # THEN it is 500 no_key, and the log says the key is too old and why no newer one was read
    assert (answer.status, answer.body["error"]["code"]) == (500, "no_key")
    [refused] = [r for r in logs.records() if r["message"] == "No usable Median key; answering 500 no_key"]
    assert refused["cause"] == "the key read before is too old, and the secret could not be read again since"
