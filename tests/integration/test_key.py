"""The Median key, read from moto's Secrets Manager server over HTTP by the handler's own boto3 client."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from median_lambda.key.source import MedianKeySource
from median_lambda.protocol import DEV_KEY_ENV, KEY_SECRET_ENV
from median_lambda.testing import call_body

if TYPE_CHECKING:
    from collections.abc import Callable

    from median_lambda.testing import TestAnswer
    from mypy_boto3_secretsmanager import SecretsManagerClient

    from tests.conftest import EventBuilder, LogCapture

# The calls go to the sample tools (tests/sample_tools/).
pytestmark = pytest.mark.usefixtures("sample_tools")

NO_KEY_MESSAGE = "The server has no usable Median key to verify with."
KEY = "mk_live_5f4dcc3b5aa765d61d8327deb882cf99"


@pytest.fixture
def use_secret(monkeypatch: pytest.MonkeyPatch, secret_name: str, moto_endpoint: str) -> str:
    """Points the handler at this test's own secret (not created yet) on moto, with no dev key to fall back on."""
    monkeypatch.setenv(KEY_SECRET_ENV, secret_name)
    monkeypatch.delenv(DEV_KEY_ENV, raising=False)
    return secret_name


def _no_key_cause(answer: TestAnswer, logs: LogCapture, *, post: bool = False) -> str:
    """Asserts the fixed 500 no_key answer and returns the cause the log gave for it."""
    assert answer.status == 500
    error = {"code": "no_key", "message": NO_KEY_MESSAGE}
    assert answer.body == ({"version": 1, "ok": False, "error": error} if post else {"error": error})
    [record] = [record for record in logs.records() if record["message"].startswith("No usable Median key")]
    cause: str = record["cause"]
    return cause


@pytest.mark.parametrize(
    "stored",
    [KEY, f"  {KEY}\n", f'{{"key": "{KEY}"}}', f'  {{"key": " {KEY}\\n", "note": "rotated 2026-01"}}\n'],
    ids=["plain", "plain with whitespace", "JSON key", "JSON key with whitespace"],
)
def test_the_key_is_the_secret_string_or_its_json_key_trimmed(
    secrets: SecretsManagerClient,
    use_secret: str,
    make_event: EventBuilder,
    invoke: Callable[..., TestAnswer],
    stored: str,
) -> None:
    # GIVEN the secret holds the key in one of its accepted forms
    secrets.create_secret(Name=use_secret, SecretString=stored)
    # WHEN Median sends a GET signed with the key
    answer = invoke(make_event("http_api_v2", "GET", key=KEY))
    # THEN the signature verifies and the manifest is served
    assert answer.status == 200
    assert answer.body["version"] == 1


def test_the_key_is_read_once_and_kept_for_the_warm_container(
    secrets: SecretsManagerClient, use_secret: str, make_event: EventBuilder, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN a first request has read the key
    secrets.create_secret(Name=use_secret, SecretString=KEY)
    assert invoke(make_event("http_api_v2", "GET", key=KEY)).status == 200
    # WHEN the secret then disappears
    secrets.delete_secret(SecretId=use_secret, ForceDeleteWithoutRecovery=True)
    # THEN the next request still verifies, from the cached key
    assert (
        invoke(
            make_event("http_api_v2", "POST", call_body("ticketStatus", {"ticketNumber": "TCK-1042"}), key=KEY)
        ).status
        == 200
    )


def test_a_secret_that_does_not_exist_is_no_key(
    use_secret: str, make_event: EventBuilder, invoke: Callable[..., TestAnswer], logs: LogCapture
) -> None:
    # GIVEN MEDIAN_KEY_SECRET_ID names no secret
    # WHEN a signed request arrives
    answer = invoke(make_event("http_api_v2", "GET", key=KEY))
    # THEN 500 no_key, and only the log says the secret was not found
    assert "ResourceNotFoundException" in _no_key_cause(answer, logs)
    assert "ResourceNotFound" not in str(answer.body)


@pytest.mark.parametrize(
    ("stored", "cause"),
    [
        ({"SecretString": "   \n"}, "the secret is empty"),
        ({"SecretString": '{"key": "  "}'}, "the secret is empty"),
        ({"SecretString": '{"value": "mk_live_in_the_wrong_member"}'}, 'without a string "key" member'),
        ({"SecretString": '{"key": 42}'}, 'without a string "key" member'),
        ({"SecretString": '{"key": "mk_live_truncated'}, "not valid JSON"),
        ({"SecretBinary": b"mk_live_as_bytes"}, "binary"),
        ({}, "ResourceNotFoundException"),
    ],
    ids=["blank", "blank JSON key", "JSON without key", "JSON key not a string", "broken JSON", "binary", "no value"],
)
def test_a_secret_without_a_usable_key_is_no_key_with_the_cause_logged(
    secrets: SecretsManagerClient,
    use_secret: str,
    make_event: EventBuilder,
    invoke: Callable[..., TestAnswer],
    logs: LogCapture,
    stored: dict[str, str | bytes],
    cause: str,
) -> None:
    # GIVEN the secret exists but holds no usable key
    secrets.create_secret(Name=use_secret, **stored)  # type: ignore[arg-type]
    # WHEN a signed POST arrives
    answer = invoke(make_event("http_api_v2", "POST", call_body("ticketStatus", {"ticketNumber": "TCK-1042"}), key=KEY))
    # THEN 500 no_key with the fixed message; the log says why, without the secret's contents
    assert cause in _no_key_cause(answer, logs, post=True)
    assert "mk_live" not in logs.text()


def test_an_unreachable_secrets_manager_is_no_key_not_a_hang(
    use_secret: str,
    closed_port: int,
    monkeypatch: pytest.MonkeyPatch,
    make_event: EventBuilder,
    invoke: Callable[..., TestAnswer],
    logs: LogCapture,
) -> None:
    # GIVEN Secrets Manager's endpoint is a port nobody listens on, and a container that has not read the key yet
    from median_lambda import app

    monkeypatch.setattr(app, "key_source", MedianKeySource())
    # WHEN a signed request arrives
    # (put back before the fixture that pointed boto3 at moto puts back its own, so none of it outlives the test)
    with pytest.MonkeyPatch.context() as environment:
        environment.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{closed_port}")
        answer = invoke(make_event("http_api_v2", "GET", key=KEY))
    # THEN the handler gives up (bounded retries) with 500 no_key, and the log says it could not connect
    assert "Could not connect" in _no_key_cause(answer, logs)


@pytest.fixture
def dev_key_only(monkeypatch: pytest.MonkeyPatch) -> str:
    """No secret named; MEDIAN_DEV_KEY set, as `make serve` and `sam local invoke` do."""
    monkeypatch.delenv(KEY_SECRET_ENV, raising=False)
    monkeypatch.delenv("AWS_LAMBDA_FUNCTION_NAME", raising=False)
    monkeypatch.delenv("AWS_SAM_LOCAL", raising=False)
    monkeypatch.setenv(DEV_KEY_ENV, f"  {KEY}  ")
    return KEY


def test_the_dev_key_is_honoured_locally(
    dev_key_only: str, make_event: EventBuilder, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN no secret named, outside Lambda, and a dev key
    # WHEN a request signed with the dev key arrives
    answer = invoke(make_event("http_api_v2", "GET", key=dev_key_only))
    # THEN it verifies
    assert answer.status == 200


def test_the_dev_key_is_ignored_in_a_deployed_lambda(
    dev_key_only: str,
    monkeypatch: pytest.MonkeyPatch,
    make_event: EventBuilder,
    invoke: Callable[..., TestAnswer],
    logs: LogCapture,
) -> None:
    # GIVEN the same dev key, but running as a deployed Lambda function
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "median-tools")
    # WHEN a request signed with the dev key arrives
    answer = invoke(make_event("http_api_v2", "GET", key=dev_key_only))
    # THEN there is no usable key: a deployed function never reads MEDIAN_DEV_KEY
    assert "MEDIAN_KEY_SECRET_ID is not set" in _no_key_cause(answer, logs)


def test_the_dev_key_is_honoured_under_sam_local(
    dev_key_only: str, monkeypatch: pytest.MonkeyPatch, make_event: EventBuilder, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN a Lambda function name, but inside `sam local invoke` (AWS_SAM_LOCAL=true)
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "median-tools")
    monkeypatch.setenv("AWS_SAM_LOCAL", "true")
    # WHEN a request signed with the dev key arrives
    answer = invoke(make_event("http_api_v2", "GET", key=dev_key_only))
    # THEN it verifies
    assert answer.status == 200


def test_a_named_secret_wins_over_the_dev_key(
    secrets: SecretsManagerClient,
    use_secret: str,
    monkeypatch: pytest.MonkeyPatch,
    make_event: EventBuilder,
    invoke: Callable[..., TestAnswer],
) -> None:
    # GIVEN a secret holding KEY, and a different dev key set too
    secrets.create_secret(Name=use_secret, SecretString=KEY)
    monkeypatch.setenv(DEV_KEY_ENV, "mk_dev_other")
    # WHEN requests signed with each arrive
    # THEN only the secret's key verifies
    assert invoke(make_event("http_api_v2", "GET", key=KEY)).status == 200
    assert invoke(make_event("http_api_v2", "GET", key="mk_dev_other")).status == 401


def test_no_secret_and_no_dev_key_is_no_key(
    monkeypatch: pytest.MonkeyPatch, make_event: EventBuilder, invoke: Callable[..., TestAnswer], logs: LogCapture
) -> None:
    # GIVEN neither a secret nor a dev key
    monkeypatch.delenv(KEY_SECRET_ENV, raising=False)
    monkeypatch.delenv(DEV_KEY_ENV, raising=False)
    # WHEN a signed request arrives
    answer = invoke(make_event("http_api_v2", "GET", key=KEY))
    # THEN 500 no_key, and the log names both variables
    cause = _no_key_cause(answer, logs)
    assert KEY_SECRET_ENV in cause
    assert DEV_KEY_ENV in cause
