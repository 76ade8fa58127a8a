"""The relay's faults are real: botocore meets each as the error it would meet on AWS."""

from __future__ import annotations

import threading
import uuid
from typing import TYPE_CHECKING

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, ConnectionClosedError, EndpointConnectionError, ReadTimeoutError

from tests.fault_relay import Fault

if TYPE_CHECKING:
    from mypy_boto3_secretsmanager import SecretsManagerClient

    from tests.fault_relay import FaultRelay

# One attempt and short timeouts: each fault shows as exactly one error, quickly.
_ONE_SHORT_TRY = Config(connect_timeout=1, read_timeout=0.5, retries={"total_max_attempts": 1})


def _client(relay: FaultRelay) -> SecretsManagerClient:
    return boto3.client("secretsmanager", endpoint_url=relay.endpoint, config=_ONE_SHORT_TRY)


@pytest.fixture
def secret(secrets: SecretsManagerClient) -> str:
    name = f"relay/{uuid.uuid4().hex[:8]}"
    secrets.create_secret(Name=name, SecretString="the value")
    return name


def test_without_a_fault_the_relay_passes_requests_and_answers(fault_relay: FaultRelay, secret: str) -> None:
    # WHEN a read goes through the relay with no fault set
    value = _client(fault_relay).get_secret_value(SecretId=secret)["SecretString"]
    # THEN it reaches moto and its answer comes back
    assert value == "the value"
    assert fault_relay.requests == 1


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (Fault.STALL, ReadTimeoutError),
        (Fault.SWALLOW, ReadTimeoutError),
        (Fault.DROP, ConnectionClosedError),
        (Fault.RESET, ConnectionClosedError),
        (Fault.DROP_AFTER_REQUEST, ConnectionClosedError),
        (Fault.REFUSE, (EndpointConnectionError, ConnectionClosedError)),
    ],
)
def test_each_fault_reaches_botocore_as_a_network_error(
    fault_relay: FaultRelay, secret: str, fault: Fault, error: type[Exception]
) -> None:
    # GIVEN a client that already holds a connection through the relay
    client = _client(fault_relay)
    client.get_secret_value(SecretId=secret)
    # WHEN the fault is set and the client reads again
    fault_relay.fault = fault
    # THEN botocore raises the network error that fault causes on AWS
    with pytest.raises(error):
        client.get_secret_value(SecretId=secret)


def test_a_request_dropped_after_it_was_sent_still_reached_the_service(
    fault_relay: FaultRelay, secrets: SecretsManagerClient
) -> None:
    # GIVEN a relay that loses answers on the way back
    name = f"relay/{uuid.uuid4().hex[:8]}"
    fault_relay.fault = Fault.DROP_AFTER_REQUEST
    # WHEN a write is sent through it
    with pytest.raises(ConnectionClosedError):
        _client(fault_relay).create_secret(Name=name, SecretString="written")
    # THEN the client saw an error, yet the service made the write
    assert secrets.get_secret_value(SecretId=name)["SecretString"] == "written"


def test_the_fault_can_change_while_a_connection_is_open(fault_relay: FaultRelay, secret: str) -> None:
    # GIVEN a stalled relay, and a read waiting on it in another thread
    fault_relay.fault = Fault.STALL
    client = boto3.client(
        "secretsmanager",
        endpoint_url=fault_relay.endpoint,
        config=Config(read_timeout=5, retries={"total_max_attempts": 1}),
    )
    outcome: list[str] = []
    reader = threading.Thread(target=lambda: outcome.append(client.get_secret_value(SecretId=secret)["SecretString"]))
    reader.start()
    # WHEN the stall is lifted before the client gives up
    threading.Event().wait(0.3)
    fault_relay.fault = Fault.NONE
    reader.join(timeout=10)
    # THEN the held request goes on to the service and its answer arrives
    assert outcome == ["the value"]


@pytest.mark.parametrize(
    "code", ["ThrottlingException", "ProvisionedThroughputExceededException", "AccessDeniedException"]
)
def test_an_error_the_relay_answers_reaches_botocore_as_that_aws_error(
    fault_relay: FaultRelay, secret: str, code: str
) -> None:
    # GIVEN a relay that answers every request itself with an AWS error
    fault_relay.answer_with_error(code, "stand-in for the service's refusal")
    # WHEN a client calls through it
    with pytest.raises(ClientError) as raised:
        _client(fault_relay).get_secret_value(SecretId=secret)
    # THEN botocore parses the error code, as it would the service's own, and nothing reached moto
    assert raised.value.response["Error"]["Code"] == code
    assert fault_relay.requests == 0
    assert fault_relay.answered == 1


def test_a_fault_for_the_next_request_only_is_a_blip(fault_relay: FaultRelay, secret: str) -> None:
    # GIVEN a relay that resets the next request only
    client = _client(fault_relay)
    fault_relay.fail(Fault.RESET, times=1)
    # WHEN the client reads twice
    with pytest.raises(ConnectionClosedError):
        client.get_secret_value(SecretId=secret)
    value = client.get_secret_value(SecretId=secret)["SecretString"]
    # THEN the first read met the fault and the second passed
    assert value == "the value"
    assert fault_relay.fault is Fault.NONE


def test_a_trickled_answer_keeps_every_wait_under_the_read_timeout_and_arrives_whole(
    fault_relay: FaultRelay, secret: str
) -> None:
    # GIVEN a relay that sends each answer back a byte every 5 ms, and a client whose read timeout is 0.5 s
    fault_relay.trickle(every_seconds=0.005)
    # WHEN the client reads through it, an answer of a few hundred bytes taking several read timeouts in all
    value = _client(fault_relay).get_secret_value(SecretId=secret)["SecretString"]
    # THEN no wait for bytes met the read timeout: botocore took the whole answer, as it would from a slow server
    assert value == "the value"
    assert fault_relay.requests == 1
