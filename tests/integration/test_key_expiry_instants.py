"""The key's three clocks at their instants: the cache's lifetime, the refresh floor, the stale limit.

Each is tested on both sides of its edge, by reads counted where they reach the service (the
fault relay in front of moto's server) and by the answer a request gets: a key kept one step too
long, or dropped one step too soon, shows as a read too many, a read missing, or a wrong status.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest
from median_lambda import app
from median_lambda.key.source import MedianKeySource
from median_lambda.protocol import (
    KEY_CACHE_SECONDS,
    KEY_MIN_REFRESH_SECONDS,
    KEY_SECRET_ENV,
    KEY_STALE_IF_ERROR_SECONDS,
    ErrorCode,
)
from median_lambda.testing import FakeLambdaContext, answer_of, signed_event

from tests.clock import SteppedClock
from tests.fault_relay import Fault

if TYPE_CHECKING:
    from median_lambda.testing import TestAnswer
    from mypy_boto3_secretsmanager import SecretsManagerClient

    from tests.fault_relay import FaultRelay

KEY = "mk_live_good_0123456789abcdef"
FORGED_KEY = "mk_forged_not_the_key_at_all"
# Half a second: exact in binary floating point, so the clock lands on each instant exactly.
JUST = 0.5


@dataclass
class Container:
    relay: FaultRelay
    clock: SteppedClock

    def get(self, key: str = KEY) -> TestAnswer:
        return answer_of(app.lambda_handler(signed_event("GET", key=key), FakeLambdaContext()))  # type: ignore[arg-type]

    def reads(self) -> int:
        return self.relay.requests


@pytest.fixture
def warm(secrets: SecretsManagerClient, fault_relay: FaultRelay, clean_env: pytest.MonkeyPatch) -> Container:
    """A container that has just read the key (one read, at the clock's start)."""
    secret_id = f"median/instants-{uuid.uuid4().hex[:8]}"
    secrets.create_secret(Name=secret_id, SecretString=KEY)
    clean_env.setenv(KEY_SECRET_ENV, secret_id)
    clean_env.setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", fault_relay.endpoint)
    clock = SteppedClock()
    clean_env.setattr(app, "key_source", MedianKeySource(clock=clock))
    container = Container(fault_relay, clock)
    assert container.get().status == 200
    assert container.reads() == 1
    return container


def test_the_cached_key_serves_until_its_lifetime_ends_and_is_read_again_at_that_instant(warm: Container) -> None:
    # GIVEN a key read KEY_CACHE_SECONDS ago, less half a second
    warm.clock.advance(KEY_CACHE_SECONDS - JUST)
    # WHEN a request comes then, and another at the instant its lifetime ends
    before = warm.get()
    reads_before = warm.reads()
    warm.clock.advance(JUST)
    at_expiry = warm.get()
    # THEN the first is served from the cache, and the second reads the secret again
    assert (before.status, reads_before) == (200, 1)
    assert (at_expiry.status, warm.reads()) == (200, 2)


def test_a_forged_request_reads_again_only_once_the_floor_has_passed_to_the_instant(warm: Container) -> None:
    # GIVEN a key read KEY_MIN_REFRESH_SECONDS ago, less half a second
    warm.clock.advance(KEY_MIN_REFRESH_SECONDS - JUST)
    # WHEN a forged request comes then, and another at the instant the floor ends
    first = warm.get(FORGED_KEY)
    reads_within_the_floor = warm.reads()
    warm.clock.advance(JUST)
    second = warm.get(FORGED_KEY)
    # THEN both are refused; only the second reads the secret (to see whether the key was rotated)
    assert (first.status, second.status) == (401, 401)
    assert reads_within_the_floor == 1
    assert warm.reads() == 2


def test_during_an_outage_the_key_serves_until_the_stale_limit_and_not_at_it(warm: Container) -> None:
    # GIVEN Secrets Manager refuses every read from now on
    warm.relay.fault = Fault.REFUSE
    # WHEN a request comes half a second before the key's cache lifetime plus the stale limit,
    # and another at that instant (within the floor of the read the first tried)
    warm.clock.advance(KEY_CACHE_SECONDS + KEY_STALE_IF_ERROR_SECONDS - JUST)
    last_served = warm.get()
    warm.clock.advance(JUST)
    refused = warm.get()
    # THEN the first is still verified with the good key; the second gets 500 no_key
    assert last_served.status == 200
    assert refused.status == 500
    assert refused.body["error"]["code"] == ErrorCode.NO_KEY
