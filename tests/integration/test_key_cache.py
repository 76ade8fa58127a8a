"""The key, read from Secrets Manager (moto's server, over HTTP) once per container and cached.

The cache is what keeps a warm request off the network; its age bounds how long a container
keeps a key that was rotated without Median's signature telling it so.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING

import pytest
from median_lambda import app
from median_lambda.key.source import MedianKeySource
from median_lambda.protocol import KEY_CACHE_SECONDS, KEY_SECRET_ENV
from median_lambda.testing import FakeLambdaContext, answer_of, signed_event

from tests.clock import SteppedClock

if TYPE_CHECKING:
    from median_lambda.testing import TestAnswer
    from mypy_boto3_secretsmanager import SecretsManagerClient

OLD_KEY = "mk_test_old_0123456789"
NEW_KEY = "mk_test_new_9876543210"


@pytest.fixture
def clock() -> SteppedClock:
    return SteppedClock()


@pytest.fixture
def secret(secrets: SecretsManagerClient, clean_env: pytest.MonkeyPatch, clock: SteppedClock) -> str:
    """A secret holding OLD_KEY, named to a fresh container (a new key source, nothing cached)."""
    name = f"median/key-{uuid.uuid4().hex}"  # moto's server lives for the whole session
    secrets.create_secret(Name=name, SecretString=OLD_KEY)
    clean_env.setenv(KEY_SECRET_ENV, name)
    # No refetch after a mismatch in these tests, which are about the cache's age alone: their
    # clock stands still, inside the refresh floor, until a test moves it.
    clean_env.setattr(app, "key_source", MedianKeySource(clock=clock))
    return name


def get(key: str) -> TestAnswer:
    return answer_of(app.lambda_handler(signed_event("GET", key=key), FakeLambdaContext()))  # type: ignore[arg-type]


def test_a_container_keeps_the_key_it_read_while_the_cache_is_fresh(secret: str, secrets: SecretsManagerClient) -> None:
    # GIVEN a container that has served a GET, so it holds the key
    assert get(OLD_KEY).status == 200
    # WHEN the secret changes behind its back
    secrets.put_secret_value(SecretId=secret, SecretString=NEW_KEY)
    # THEN it still verifies with the key it read: no Secrets Manager call per request
    assert get(OLD_KEY).status == 200
    assert get(NEW_KEY).status == 401


def test_a_container_reads_the_secret_again_once_the_cache_has_expired(
    secret: str, secrets: SecretsManagerClient, clock: SteppedClock
) -> None:
    # GIVEN a container that has served a GET, so it holds the key
    assert get(OLD_KEY).status == 200
    # WHEN the secret changes, and the cached key's lifetime passes
    secrets.put_secret_value(SecretId=secret, SecretString=NEW_KEY)
    clock.advance(KEY_CACHE_SECONDS)
    # THEN the next request is verified with the new key
    assert get(NEW_KEY).status == 200
    assert get(OLD_KEY).status == 401


def test_a_json_secret_gives_its_key_member(secret: str, secrets: SecretsManagerClient) -> None:
    # GIVEN a secret holding a JSON object whose "key" is the key, with whitespace around it
    secrets.put_secret_value(SecretId=secret, SecretString=json.dumps({"key": f"  {NEW_KEY}\n"}))
    # WHEN a GET signed with that key arrives
    # THEN it is served
    assert get(NEW_KEY).status == 200


def test_a_secret_that_cannot_be_read_answers_no_key_and_logs_why(
    clean_env: pytest.MonkeyPatch, moto_endpoint: str, caplog: pytest.LogCaptureFixture
) -> None:
    # GIVEN a function pointed at a secret that does not exist
    clean_env.setenv(KEY_SECRET_ENV, f"median/missing-{uuid.uuid4().hex}")
    clean_env.setattr(app, "key_source", MedianKeySource())
    # WHEN a signed GET arrives
    answer = get(OLD_KEY)
    # THEN Median gets 500 no_key and no cause; the log names the cause, for the operator
    assert answer.status == 500
    assert answer.body == {
        "error": {"code": "no_key", "message": "The server has no usable Median key to verify with."}
    }
    causes = [str(getattr(record, "cause", "")) for record in caplog.records]
    assert any("ResourceNotFoundException" in cause for cause in causes), causes
