"""A real Secrets Manager over HTTP: moto's server on a free loopback port, shared by the session."""

from __future__ import annotations

import socket
import uuid
from typing import TYPE_CHECKING

import boto3
import pytest
from moto.server import ThreadedMotoServer

if TYPE_CHECKING:
    from collections.abc import Iterator

    from mypy_boto3_secretsmanager import SecretsManagerClient


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    with pytest.MonkeyPatch.context() as patch:
        # boto3 reads this itself: the handler's own client goes to moto, unpatched.
        patch.setenv("AWS_ENDPOINT_URL", endpoint)
        yield endpoint
    server.stop()


@pytest.fixture
def secrets(moto_endpoint: str) -> SecretsManagerClient:
    return boto3.client("secretsmanager", endpoint_url=moto_endpoint)


@pytest.fixture
def idempotency_table(moto_endpoint: str, clean_env: pytest.MonkeyPatch) -> str:
    """A fresh table shaped as template.yaml makes it (key `id`, TTL `expiration`), named in IDEMPOTENCY_TABLE."""
    dynamodb = boto3.client("dynamodb", endpoint_url=moto_endpoint)
    name = f"idempotency-{uuid.uuid4().hex[:12]}"
    dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    dynamodb.update_time_to_live(
        TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "expiration"}
    )
    clean_env.setenv("IDEMPOTENCY_TABLE", name)
    return name
