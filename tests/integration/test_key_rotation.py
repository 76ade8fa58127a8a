"""Rotating the Median key in Secrets Manager (moto's server, over HTTP) locks no one out and lets no one in."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import median_lambda.app
import pytest
from median_lambda.key.source import MedianKeySource
from median_lambda.protocol import KEY_MIN_REFRESH_SECONDS, KEY_SECRET_ENV
from median_lambda.testing import FakeLambdaContext, answer_of, signed_event

from tests.clock import SteppedClock

if TYPE_CHECKING:
    from median_lambda.testing import TestAnswer
    from mypy_boto3_secretsmanager import SecretsManagerClient

OLD_KEY = "mk_live_old_0123456789abcdef"
NEW_KEY = "mk_live_new_fedcba9876543210"
FORGED_KEY = "mk_forged_not_the_key_at_all"


@dataclass
class Rotation:
    secrets: SecretsManagerClient
    secret_id: str
    clock: SteppedClock
    fetches: list[str] = field(default_factory=list)

    def rotate_to(self, key: str) -> None:
        self.secrets.put_secret_value(SecretId=self.secret_id, SecretString=key)

    def get(self, key: str) -> TestAnswer:
        return answer_of(median_lambda.app.lambda_handler(signed_event("GET", key=key), FakeLambdaContext()))  # type: ignore[arg-type]


@pytest.fixture
def rotation(secrets: SecretsManagerClient, clean_env: pytest.MonkeyPatch) -> Rotation:
    # GIVEN a cold container whose key lives in Secrets Manager
    secret_id = f"median-key-{uuid.uuid4().hex[:8]}"
    secrets.create_secret(Name=secret_id, SecretString=OLD_KEY)
    clean_env.setenv(KEY_SECRET_ENV, secret_id)
    clock = SteppedClock()
    clean_env.setattr(median_lambda.app, "key_source", MedianKeySource(clock=clock))
    state = Rotation(secrets, secret_id, clock)

    def count_fetch(**_: Any) -> None:
        state.fetches.append(secret_id)

    # Every GetSecretValue the handler's own client sends, counted as it leaves for the server.
    client = median_lambda.app.key_source.client
    client.meta.events.register("before-send.secrets-manager.GetSecretValue", count_fetch)
    return state


def test_a_request_signed_with_the_new_key_is_accepted_on_the_first_try(rotation: Rotation) -> None:
    # GIVEN the old key cached by an earlier request, longer ago than the refresh floor
    assert rotation.get(OLD_KEY).status == 200
    rotation.clock.advance(KEY_MIN_REFRESH_SECONDS + 1)
    # WHEN the key is rotated and Median signs with the new one
    rotation.rotate_to(NEW_KEY)
    answer = rotation.get(NEW_KEY)
    # THEN that very request is accepted, at the cost of one more read of the secret
    assert answer.status == 200
    assert len(rotation.fetches) == 2


def test_after_rotation_a_request_signed_with_the_old_key_is_refused(rotation: Rotation) -> None:
    # GIVEN a rotation that a new-key request has brought to this container
    rotation.get(OLD_KEY)
    rotation.clock.advance(KEY_MIN_REFRESH_SECONDS + 1)
    rotation.rotate_to(NEW_KEY)
    assert rotation.get(NEW_KEY).status == 200
    # WHEN a request signed with the old key arrives
    answer = rotation.get(OLD_KEY)
    # THEN it is refused as a mismatch, without another read of the secret
    assert answer.status == 401
    assert answer.body["error"]["message"].startswith("mismatch")
    assert len(rotation.fetches) == 2


def test_a_hundred_forged_requests_cause_at_most_one_extra_fetch(rotation: Rotation) -> None:
    # GIVEN the key cached longer ago than the refresh floor, so the next mismatch may read it again
    rotation.get(OLD_KEY)
    rotation.clock.advance(KEY_MIN_REFRESH_SECONDS + 1)
    # WHEN 100 well-formed, fresh requests signed with a wrong key arrive
    answers = [rotation.get(FORGED_KEY) for _ in range(100)]
    # THEN every one is refused, and Secrets Manager was asked once more, not 100 times
    assert {answer.status for answer in answers} == {401}
    assert len(rotation.fetches) == 2


def test_within_the_floor_a_new_key_waits_for_the_floor_to_pass(rotation: Rotation) -> None:
    # GIVEN a key read moments ago, and then rotated
    rotation.get(OLD_KEY)
    rotation.rotate_to(NEW_KEY)
    # WHEN Median signs with the new key only, inside the floor and then after it
    inside = rotation.get(NEW_KEY)
    rotation.clock.advance(KEY_MIN_REFRESH_SECONDS)
    after = rotation.get(NEW_KEY)
    # THEN the first is refused (Median signs with both keys while it rotates), the second accepted
    assert (inside.status, after.status) == (401, 200)
    assert len(rotation.fetches) == 2
