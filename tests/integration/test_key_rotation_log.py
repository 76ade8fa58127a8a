"""The log line an operator reads when a container takes up a rotated key, and only then."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import pytest
from median_lambda import app
from median_lambda.key.source import MedianKeySource
from median_lambda.protocol import KEY_MIN_REFRESH_SECONDS, KEY_SECRET_ENV
from median_lambda.testing import FakeLambdaContext, answer_of, signed_event

from tests.clock import SteppedClock

if TYPE_CHECKING:
    from median_lambda.testing import TestAnswer
    from mypy_boto3_secretsmanager import SecretsManagerClient

    from tests.conftest import LogCapture

OLD_KEY = "mk_live_old_0123456789"
NEW_KEY = "mk_live_new_9876543210"
CHANGED = "The Median key in Secrets Manager has changed; verifying with the new one"


def get(key: str) -> TestAnswer:
    return answer_of(app.lambda_handler(signed_event("GET", key=key), FakeLambdaContext()))  # type: ignore[arg-type]


@pytest.fixture
def warm(secrets: SecretsManagerClient, clean_env: pytest.MonkeyPatch) -> tuple[str, SteppedClock]:
    """A container that has read OLD_KEY, the refresh floor since passed."""
    secret_id = f"median/rotation-log-{uuid.uuid4().hex[:8]}"
    secrets.create_secret(Name=secret_id, SecretString=OLD_KEY)
    clean_env.setenv(KEY_SECRET_ENV, secret_id)
    clock = SteppedClock()
    clean_env.setattr(app, "key_source", MedianKeySource(clock=clock))
    assert get(OLD_KEY).status == 200
    clock.advance(KEY_MIN_REFRESH_SECONDS)
    return secret_id, clock


def test_a_rotated_key_is_taken_up_with_one_info_line(
    warm: tuple[str, SteppedClock], secrets: SecretsManagerClient, logs: LogCapture
) -> None:
    # GIVEN the key rotated in Secrets Manager
    secrets.put_secret_value(SecretId=warm[0], SecretString=NEW_KEY)
    # WHEN Median signs with the new key
    answer = get(NEW_KEY)
    # THEN it verifies, and one info line says the container now verifies with the new key
    assert answer.status == 200
    changed = [r for r in logs.records() if r["message"] == CHANGED]
    assert [r["level"] for r in changed] == ["INFO"]


def test_a_forgery_with_the_key_unchanged_logs_no_change(warm: tuple[str, SteppedClock], logs: LogCapture) -> None:
    # GIVEN the key unchanged in Secrets Manager
    # WHEN a forged request makes the container read it again
    answer = get("mk_forged_not_the_key")
    # THEN it is refused, and no line claims the key changed
    assert answer.status == 401
    assert not [r for r in logs.records() if r["message"] == CHANGED]
