"""The cause the log gives for a 500 no_key, word for word: what an operator reads to fix the key.

The answer says only `no_key`; the log line beside it names the cause, and each cause says which
thing to change (the secret's value, its form, a variable). tests/integration/test_key.py checks
that the right cause is picked; this pins the words of each.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import pytest
from median_lambda import app
from median_lambda.key.source import MedianKeySource
from median_lambda.protocol import DEV_KEY_ENV, KEY_SECRET_ENV
from median_lambda.testing import FakeLambdaContext, answer_of, signed_event

from tests.clock import SteppedClock

if TYPE_CHECKING:
    from mypy_boto3_secretsmanager import SecretsManagerClient

    from tests.conftest import LogCapture

KEY = "mk_live_5f4dcc3b5aa765d61d8327deb882cf99"


def no_key_cause(logs: LogCapture) -> str:
    """The one `no_key` log line's cause, after asserting the answer was 500 no_key."""
    answer = answer_of(app.lambda_handler(signed_event("GET", key=KEY), FakeLambdaContext()))  # type: ignore[arg-type]
    assert (answer.status, answer.body["error"]["code"]) == (500, "no_key")
    [record] = [r for r in logs.records() if r["message"] == "No usable Median key; answering 500 no_key"]
    assert record["level"] == "ERROR"
    cause: str = record["cause"]
    return cause


@pytest.fixture
def container(clean_env: pytest.MonkeyPatch) -> SteppedClock:
    clock = SteppedClock()
    clean_env.setattr(app, "key_source", MedianKeySource(clock=clock))
    clean_env.delenv(DEV_KEY_ENV, raising=False)
    return clock


@pytest.mark.parametrize(
    ("stored", "cause"),
    [
        pytest.param({"SecretString": "  \n"}, "the secret is empty", id="blank"),
        pytest.param({"SecretString": '{"key": " "}'}, "the secret is empty", id="blank JSON key"),
        pytest.param(
            {"SecretString": '{"value": "x"}'},
            'the secret is a JSON object without a string "key" member',
            id="JSON without key",
        ),
        pytest.param(
            {"SecretString": '{"key": 42}'},
            'the secret is a JSON object without a string "key" member',
            id="JSON key not a string",
        ),
        pytest.param(
            {"SecretString": '{"key": "mk_live_cut'},
            "the secret starts like a JSON object but is not valid JSON",
            id="broken JSON",
        ),
        pytest.param(
            {"SecretBinary": b"mk_live"},
            "the secret holds binary data (SecretBinary), not a SecretString",
            id="binary",
        ),
    ],
)
def test_a_secret_holding_no_usable_key_names_what_is_wrong_with_it(
    secrets: SecretsManagerClient,
    clean_env: pytest.MonkeyPatch,
    container: SteppedClock,
    logs: LogCapture,
    stored: dict[str, str | bytes],
    cause: str,
) -> None:
    # GIVEN a secret whose value is no usable key
    name = f"median/causes-{uuid.uuid4().hex[:8]}"
    secrets.create_secret(Name=name, **stored)  # type: ignore[arg-type]
    clean_env.setenv(KEY_SECRET_ENV, name)
    # WHEN a signed request arrives
    # THEN the log's cause says exactly what is wrong with the value, never the value
    assert no_key_cause(logs) == cause
    assert "mk_live" not in logs.text()


def test_a_missing_secret_names_aws_s_error(
    clean_env: pytest.MonkeyPatch, container: SteppedClock, logs: LogCapture, moto_endpoint: str
) -> None:
    # GIVEN a secret name that names no secret on moto's Secrets Manager
    clean_env.setenv(KEY_SECRET_ENV, f"median/missing-{uuid.uuid4().hex[:8]}")
    # WHEN a signed request arrives
    cause = no_key_cause(logs)
    # THEN the cause is botocore's own error, by type and text: it names the operation and what is missing
    # (the text after the operation is the service's, moto's here)
    assert cause.startswith(
        "reading the secret failed: ResourceNotFoundException: An error occurred (ResourceNotFoundException) when "
        "calling the GetSecretValue operation: "
    )


def test_an_error_from_outside_botocore_is_named_by_its_type_alone(
    clean_env: pytest.MonkeyPatch, container: SteppedClock, logs: LogCapture
) -> None:
    # GIVEN an endpoint for Secrets Manager that is no URL: boto3 refuses it with a ValueError of Python's own
    clean_env.setenv(KEY_SECRET_ENV, "median/key")
    clean_env.setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", "not a url")
    # WHEN a signed request arrives
    # THEN the cause names the error's type, and not its text, which only botocore's own errors are vetted to hold
    assert no_key_cause(logs) == "reading the secret failed: ValueError"


def test_a_deployed_function_without_a_secret_says_the_dev_key_is_never_read_there(
    clean_env: pytest.MonkeyPatch, container: SteppedClock, logs: LogCapture
) -> None:
    # GIVEN a deployed function, no secret named, and a dev key set
    clean_env.delenv(KEY_SECRET_ENV, raising=False)
    clean_env.setenv(DEV_KEY_ENV, KEY)
    clean_env.setenv("AWS_LAMBDA_FUNCTION_NAME", "median-tools")
    clean_env.delenv("AWS_SAM_LOCAL", raising=False)
    # WHEN a signed request arrives
    # THEN the cause names the variable to set, and why the dev key does not stand in
    assert no_key_cause(logs) == "MEDIAN_KEY_SECRET_ID is not set; a deployed function never reads MEDIAN_DEV_KEY"


@pytest.mark.parametrize("sam_local", [None, "false"], ids=["not under sam local", "AWS_SAM_LOCAL=false"])
def test_only_sam_local_true_makes_a_named_function_local(
    clean_env: pytest.MonkeyPatch, container: SteppedClock, logs: LogCapture, sam_local: str | None
) -> None:
    # GIVEN a function name, and AWS_SAM_LOCAL unset or other than "true"
    clean_env.delenv(KEY_SECRET_ENV, raising=False)
    clean_env.setenv(DEV_KEY_ENV, KEY)
    clean_env.setenv("AWS_LAMBDA_FUNCTION_NAME", "median-tools")
    if sam_local is None:
        clean_env.delenv("AWS_SAM_LOCAL", raising=False)
    else:
        clean_env.setenv("AWS_SAM_LOCAL", sam_local)
    # WHEN a signed request arrives
    # THEN it is a deployed function: the dev key is not read
    assert no_key_cause(logs).startswith("MEDIAN_KEY_SECRET_ID is not set")


@pytest.mark.parametrize("dev_key", [None, "", "   "], ids=["unset", "empty", "blank"])
def test_nothing_set_locally_names_both_variables(
    clean_env: pytest.MonkeyPatch, container: SteppedClock, logs: LogCapture, dev_key: str | None
) -> None:
    # GIVEN no secret named and no usable dev key, away from Lambda
    clean_env.delenv(KEY_SECRET_ENV, raising=False)
    clean_env.delenv("AWS_LAMBDA_FUNCTION_NAME", raising=False)
    if dev_key is not None:
        clean_env.setenv(DEV_KEY_ENV, dev_key)
    # WHEN a signed request arrives
    # THEN the cause names both variables, and which is for local work
    assert no_key_cause(logs) == "neither MEDIAN_KEY_SECRET_ID nor, for local work, MEDIAN_DEV_KEY is set"
