"""What `make serve LOCAL_AWS=moto` seeds moto with, so the example tools run with no AWS account.

`seed()` runs with boto3 already pointed at moto (the configuration guide). The table is the one
tools/settings.toml's [default] RETURNS_TABLE names, keyed as template.yaml's ReturnsTable; the
secret is the pickup API's token under the name PICKUP_API_TOKEN_SECRET gives, a dummy value.
Delete this file with the examples, or make it seed your own tools' tables.
"""

from __future__ import annotations

import boto3
from median_lambda import Settings


class SeedSettings(Settings):
    """What tools/settings.toml names for this machine: the table, and the secret's name."""

    returns_table: str  # RETURNS_TABLE
    pickup_api_token_secret: str  # PICKUP_API_TOKEN_SECRET


def seed() -> None:
    settings = SeedSettings.current()
    boto3.client("dynamodb").create_table(
        TableName=settings.returns_table,
        KeySchema=[{"AttributeName": "orderNumber", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "orderNumber", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    boto3.client("secretsmanager").create_secret(Name=settings.pickup_api_token_secret, SecretString="local-dummy")
