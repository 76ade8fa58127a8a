"""What a cold GET with the key from the extension imports beyond its floor (bench/README.md).

The floor starts Python, GETs the key from the extension's localhost API with http.client,
checks the HMAC and answers the prebuilt manifest. The standard library modules the handler
would add at the top of its modules (dataclasses with inspect, ast and tokenize; pathlib;
uuid; contextlib) cost that cold GET about a fifth of the floor, which is its whole margin: this
holds them off the path, as a fact rather than a timing.
"""

from __future__ import annotations

import os
import uuid
from typing import TYPE_CHECKING

import pytest
from median_lambda.protocol import (
    IDEMPOTENCY_TABLE_ENV,
    KEY_SECRET_ENV,
    SECRETS_EXTENSION_PORT_ENV,
    SECRETS_EXTENSION_TOKEN_ENV,
)
from median_lambda.testing import TEST_KEY, signed_event

from tests.support.cold_start import cold_start, lay_out_artifact
from tests.support.secrets_extension import SecretsExtensionStandIn

if TYPE_CHECKING:
    from pathlib import Path

    from mypy_boto3_secretsmanager import SecretsManagerClient

SESSION_TOKEN = "cold-get-session-token"
# Each of these the floor does not import, and each a module the handler once imported at the top
# (contextlib, ~2 ms here, for a `suppress` and a `nullcontext`: issue 34).
HEAVY_FOR_THE_FLOOR = ("dataclasses", "inspect", "ast", "tokenize", "pathlib", "uuid", "contextlib")


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return lay_out_artifact(tmp_path_factory.mktemp("artifact"), prebuilt_manifest=True)


def test_a_cold_get_through_the_extension_imports_none_of_the_heavy_standard_modules(
    artifact: Path, secrets: SecretsManagerClient, moto_endpoint: str
) -> None:
    # GIVEN a new container on Lambda: the key in Secrets Manager, served by the extension
    secret_id = f"median/cold-get-extension-{uuid.uuid4().hex[:8]}"
    secrets.create_secret(Name=secret_id, SecretString=TEST_KEY)
    env = {name: value for name, value in os.environ.items() if not name.startswith("MEDIAN_")}
    with SecretsExtensionStandIn(moto_endpoint, SESSION_TOKEN) as extension:
        env.update(
            {
                KEY_SECRET_ENV: secret_id,
                SECRETS_EXTENSION_PORT_ENV: str(extension.port),
                SECRETS_EXTENSION_TOKEN_ENV: SESSION_TOKEN,
                IDEMPOTENCY_TABLE_ENV: "median-idempotency",
                "AWS_LAMBDA_FUNCTION_NAME": "median-tools",
            }
        )
        # WHEN it answers its first request, a signed GET
        started = cold_start(signed_event("GET"), artifact, env)
    # THEN it serves the manifest, the key read through the extension, without those modules
    assert started.answer.status == 200
    assert extension.requests == 1
    imported = [name for name in HEAVY_FOR_THE_FLOOR if name in started.modules]
    assert imported == [], f"a cold GET imported {imported}: see bench/README.md, cold GET through the extension"
