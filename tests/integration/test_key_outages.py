"""The key survives Secrets Manager's outages and costs nothing under forgeries.

Faults are real: the handler's own boto3 client reaches moto's server through a TCP relay
(tests/fault_relay.py) that refuses, drops, resets, stalls or trickles on command. Reads are
counted where they reach the service, and the key source's clock is stepped past its floors.
"""

from __future__ import annotations

import re
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

    from tests.conftest import LogCapture
    from tests.fault_relay import FaultRelay

KEY = "mk_live_good_0123456789abcdef"
NEW_KEY = "mk_live_new_fedcba9876543210"
FORGED_KEY = "mk_forged_not_the_key_at_all"

# Every way the network can fail a read; a stall is left to its own test, as each costs boto3's timeouts.
QUICK_FAULTS = [Fault.REFUSE, Fault.DROP, Fault.RESET, Fault.DROP_AFTER_REQUEST]
# An answer trickled back a byte every 0.2 s meets no read timeout of boto3's, and takes over a minute
# whole: only the invocation's deadline ends the read, well inside a function with 3 s.
TRICKLE_SECONDS = 0.2
SHORT_FUNCTION_SECONDS = 3.0


@dataclass
class Container:
    """One warm container whose key source reads the secret through the relay."""

    secrets: SecretsManagerClient
    relay: FaultRelay
    secret_id: str
    clock: SteppedClock

    def get(self, key: str, context: FakeLambdaContext | None = None) -> TestAnswer:
        event = signed_event("GET", key=key)
        return answer_of(app.lambda_handler(event, context or FakeLambdaContext()))  # type: ignore[arg-type]

    def reads(self) -> int:
        """The Secrets Manager requests that reached the service so far."""
        return self.relay.requests


@pytest.fixture
def container(secrets: SecretsManagerClient, fault_relay: FaultRelay, clean_env: pytest.MonkeyPatch) -> Container:
    # GIVEN a new container whose key is in a secret that only this test uses
    secret_id = f"median/outage-{uuid.uuid4().hex[:8]}"
    clean_env.setenv(KEY_SECRET_ENV, secret_id)
    clean_env.setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", fault_relay.endpoint)
    clock = SteppedClock()
    clean_env.setattr(app, "key_source", MedianKeySource(clock=clock))
    return Container(secrets, fault_relay, secret_id, clock)


@pytest.fixture
def warm(container: Container) -> Container:
    """The container has read the key once, and the refresh floor has passed since."""
    container.secrets.create_secret(Name=container.secret_id, SecretString=KEY)
    assert container.get(KEY).status == 200
    container.clock.advance(KEY_MIN_REFRESH_SECONDS + 1)
    return container


@pytest.mark.parametrize("fault", QUICK_FAULTS, ids=lambda fault: fault.value)
def test_a_forged_request_during_an_outage_leaves_the_good_key_in_place(warm: Container, fault: Fault) -> None:
    # GIVEN Secrets Manager is unreachable
    warm.relay.fault = fault
    # WHEN a forged request makes the container try to read the key again
    forged = warm.get(FORGED_KEY)
    # THEN the forgery is refused, and Median's next requests are served with the key read before
    warm.relay.fault = Fault.NONE
    reads = warm.reads()
    assert forged.status == 401
    assert [warm.get(KEY).status for _ in range(5)] == [200] * 5
    # and none of them asked Secrets Manager: the failed read is remembered for the floor
    assert warm.reads() == reads


def test_a_stalled_secrets_manager_also_leaves_the_good_key_in_place(warm: Container) -> None:
    # GIVEN Secrets Manager takes requests in and never answers
    warm.relay.fault = Fault.STALL
    # WHEN a forged request makes the container read again, and boto3 times out
    forged = warm.get(FORGED_KEY)
    # THEN the forgery is refused and Median's request is served without waiting on another read
    assert forged.status == 401
    assert warm.get(KEY).status == 200


def test_a_forged_request_while_secrets_manager_trickles_is_refused_before_the_deadline(warm: Container) -> None:
    # GIVEN Secrets Manager sends its answers back a byte at a time, and a function with 3 s
    warm.relay.trickle(every_seconds=TRICKLE_SECONDS)
    context = FakeLambdaContext(timeout_seconds=SHORT_FUNCTION_SECONDS)
    # WHEN a forged request makes the container read the key again, past the extension
    forged = warm.get(FORGED_KEY, context)
    # THEN that read was given up in time: the function refuses the forgery itself, before Lambda's timeout
    assert forged.status == 401
    assert context.get_remaining_time_in_millis() > 0
    # and Median's next request is served with the key read before
    assert warm.get(KEY).status == 200


def test_past_its_cache_lifetime_the_key_verifies_before_the_deadline_while_secrets_manager_trickles(
    warm: Container, logs: LogCapture
) -> None:
    # GIVEN the key's cache lifetime has passed, Secrets Manager's answers trickle, and a function with 3 s
    warm.clock.advance(KEY_CACHE_SECONDS)
    warm.relay.trickle(every_seconds=TRICKLE_SECONDS)
    context = FakeLambdaContext(timeout_seconds=SHORT_FUNCTION_SECONDS)
    # WHEN Median's request arrives
    answer = warm.get(KEY, context)
    # THEN the read was given up in time and Median is served with the key read before, the failed read logged
    assert answer.status == 200
    assert context.get_remaining_time_in_millis() > 0
    assert [r["message"] for r in logs.records() if r["message"].startswith("Reading the Median key failed")] == [
        "Reading the Median key failed; still verifying with the key read before"
    ]
    # and its cause says how long the read was given, as an operator reads it: some of the 3 s, not none
    [cause] = [r["cause"] for r in logs.records() if r["message"].startswith("Reading the Median key failed")]
    given = re.search(r"AwsCallTimedOut: The call to \S+ did not end within the (\d+\.\d) s it had", cause)
    assert given is not None, cause
    assert 0.0 < float(given[1]) <= SHORT_FUNCTION_SECONDS


@pytest.mark.parametrize("fault", QUICK_FAULTS, ids=lambda fault: fault.value)
def test_the_key_outlives_its_cache_while_reads_fail_until_the_stale_limit(
    warm: Container, fault: Fault, logs: LogCapture
) -> None:
    # GIVEN Secrets Manager fails every read from now on
    warm.relay.fault = fault
    # WHEN requests come past the key's cache lifetime, up to the stale limit and beyond it
    warm.clock.advance(KEY_CACHE_SECONDS)
    past_expiry = warm.get(KEY)
    warm.clock.advance(KEY_STALE_IF_ERROR_SECONDS - KEY_MIN_REFRESH_SECONDS - 2)
    near_the_limit = warm.get(KEY)
    warm.clock.advance(KEY_MIN_REFRESH_SECONDS + 2)
    beyond = warm.get(KEY)
    # THEN the good key verifies until the limit, each failed read logged; beyond it, 500 no_key
    assert (past_expiry.status, near_the_limit.status) == (200, 200)
    assert beyond.status == 500
    assert beyond.body["error"]["code"] == ErrorCode.NO_KEY
    warnings = [r for r in logs.records() if r["message"].startswith("Reading the Median key failed")]
    assert len(warnings) >= 2
    assert KEY not in logs.text()


@pytest.mark.parametrize(
    "unusable",
    [{"SecretString": "  \n"}, {"SecretString": '{"value": "x"}'}, {"SecretBinary": b"\x00key"}],
    ids=["blank", "JSON without key", "binary"],
)
def test_a_secret_made_unusable_never_discards_the_good_key(warm: Container, unusable: dict[str, str | bytes]) -> None:
    # GIVEN the secret now holds nothing usable as a key
    warm.secrets.put_secret_value(SecretId=warm.secret_id, **unusable)  # type: ignore[arg-type]
    # WHEN its cache lifetime has passed and the container reads it again
    warm.clock.advance(KEY_CACHE_SECONDS)
    answer = warm.get(KEY)
    reads = warm.reads()
    # THEN the good key still verifies, and the unusable read is not repeated within the floor
    assert answer.status == 200
    assert [warm.get(KEY).status for _ in range(3)] == [200] * 3
    assert warm.reads() == reads


def test_a_deleted_secret_never_discards_the_good_key(warm: Container) -> None:
    # GIVEN the secret is deleted
    warm.secrets.delete_secret(SecretId=warm.secret_id, ForceDeleteWithoutRecovery=True)
    # WHEN its cache lifetime has passed and a forged request and Median's both arrive
    warm.clock.advance(KEY_CACHE_SECONDS)
    # THEN the forgery is refused and Median's requests are served with the key read before
    assert warm.get(FORGED_KEY).status == 401
    assert warm.get(KEY).status == 200


def test_once_secrets_manager_is_back_a_rotated_key_is_read_after_the_floor(warm: Container) -> None:
    # GIVEN a failed read during an outage, then the outage ends and the key is rotated
    warm.relay.fault = Fault.REFUSE
    assert warm.get(FORGED_KEY).status == 401
    warm.relay.fault = Fault.NONE
    warm.secrets.put_secret_value(SecretId=warm.secret_id, SecretString=NEW_KEY)
    # WHEN Median signs with the new key, inside the floor and after it
    inside = warm.get(NEW_KEY)
    warm.clock.advance(KEY_MIN_REFRESH_SECONDS)
    after = warm.get(NEW_KEY)
    # THEN the floor holds the read back once, then the new key is read and verifies
    assert (inside.status, after.status) == (401, 200)


def test_while_the_secret_is_missing_valid_and_forged_requests_read_it_once_per_floor(container: Container) -> None:
    # GIVEN a new container whose secret does not exist
    # WHEN a hundred requests arrive, Median's and forged ones mixed
    answers = [container.get(KEY if n % 2 else FORGED_KEY) for n in range(100)]
    # THEN each is 500 no_key, and Secrets Manager was asked once
    assert {answer.status for answer in answers} == {500}
    assert container.reads() == 1
    # and once more when the floor has passed
    container.clock.advance(KEY_MIN_REFRESH_SECONDS)
    assert [container.get(KEY).status for _ in range(10)] == [500] * 10
    assert container.reads() == 2


def test_a_secret_created_after_a_failed_read_is_served_once_the_floor_has_passed(container: Container) -> None:
    # GIVEN a container that found no secret
    assert container.get(KEY).status == 500
    # WHEN the operator creates it
    container.secrets.create_secret(Name=container.secret_id, SecretString=KEY)
    # THEN requests within the floor still get no_key, from memory; the first after it is served
    assert container.get(KEY).status == 500
    container.clock.advance(KEY_MIN_REFRESH_SECONDS)
    assert container.get(KEY).status == 200
    assert container.reads() == 2


@pytest.mark.parametrize("fault", QUICK_FAULTS, ids=lambda fault: fault.value)
def test_during_an_outage_forged_and_valid_requests_try_one_read_per_floor(warm: Container, fault: Fault) -> None:
    # GIVEN the key's cache lifetime has passed, and Secrets Manager fails
    warm.clock.advance(KEY_CACHE_SECONDS)
    warm.relay.fault = fault
    first = warm.get(KEY)
    # WHEN the outage ends, and forged and valid requests keep arriving within the floor
    warm.relay.fault = Fault.NONE
    reads = warm.reads()
    answers = [warm.get(KEY if n % 2 else FORGED_KEY) for n in range(50)]
    # THEN Median's are served with the good key, the forged refused, and none asked Secrets Manager
    assert first.status == 200
    assert [a.status for a in answers] == [401 if n % 2 == 0 else 200 for n in range(50)]
    assert warm.reads() == reads
    # and the first request after the floor reads the secret, once
    warm.clock.advance(KEY_MIN_REFRESH_SECONDS)
    assert warm.get(FORGED_KEY).status == 401
    assert warm.get(KEY).status == 200
    assert warm.reads() == reads + 1
