"""`make deploy`'s preflight against Secrets Manager and CloudFormation (moto's server, over HTTP).

A refusal is `median deploy` itself, stopped before it builds or runs sam; a pass is `median deploy
--preflight`, which prints the flags sam deploy would get and stops there.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import boto3
import pytest
from median_lambda.cli.commands import main

if TYPE_CHECKING:
    from pathlib import Path

    from mypy_boto3_secretsmanager import SecretsManagerClient

STACK = "median-tools-preflight"
EMPTY_TEMPLATE = json.dumps(
    {"Resources": {"Topic": {"Type": "AWS::SNS::Topic"}}}  # any resource: moto needs one to create a stack
)


@pytest.fixture
def samconfig(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    secret = f"median-tools/{request.node.name[:40]}"
    path = tmp_path / "samconfig.toml"
    path.write_text(
        "version = 0.1\n"
        "[default.global.parameters]\n"
        f'stack_name = "{STACK}-{abs(hash(request.node.name)) % 10_000}"\n'
        "[default.deploy.parameters]\n"
        'region = "us-east-1"\n'
        f'parameter_overrides = "MedianKeySecretName=\\"{secret}\\" LogLevel=INFO"\n'
    )
    return path


def names(samconfig: Path) -> tuple[str, str]:
    from median_lambda.project.sam_config import deploy_config, parameter_overrides

    config = deploy_config(samconfig)
    return config["stack_name"], parameter_overrides(config)["MedianKeySecretName"]


def run(samconfig: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, str, str]:
    status = main(["deploy", *flags, "--config-file", str(samconfig)])
    out, err = capsys.readouterr()
    return status, out.strip(), err


def test_a_missing_secret_stops_the_deploy_with_the_command_that_creates_it(
    secrets: SecretsManagerClient, samconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN samconfig.toml naming a secret that does not exist
    _, secret = names(samconfig)
    # WHEN the preflight runs
    status, out, err = run(samconfig, capsys)
    # THEN it refuses, printing the create-secret command for that name and region
    assert status == 1 and out == ""
    assert f"aws secretsmanager create-secret --region us-east-1 --name {secret}" in err


def test_the_first_deploy_is_guided(
    secrets: SecretsManagerClient, samconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the secret exists and the stack does not, yet
    _, secret = names(samconfig)
    secrets.create_secret(Name=secret, SecretString="mk_test_key")
    # WHEN the preflight runs
    status, out, err = run(samconfig, capsys, "--preflight")
    # THEN sam deploy is to run guided, and the user is told why it asks
    assert "First deploy of this stack: sam deploy --guided asks for its settings." in err
    assert status == 0 and out == "--guided"


def test_later_deploys_use_samconfig_as_it_is(
    secrets: SecretsManagerClient, moto_endpoint: str, samconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the secret and the deployed stack
    stack, secret = names(samconfig)
    secrets.create_secret(Name=secret, SecretString="mk_test_key")
    boto3.client("cloudformation", endpoint_url=moto_endpoint).create_stack(
        StackName=stack, TemplateBody=EMPTY_TEMPLATE
    )
    # WHEN the preflight runs
    status, out, _ = run(samconfig, capsys, "--preflight")
    # THEN sam deploy runs without --guided
    assert status == 0 and out == ""


def test_a_secret_scheduled_for_deletion_stops_the_deploy(
    secrets: SecretsManagerClient, samconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the secret, scheduled for deletion
    _, secret = names(samconfig)
    secrets.create_secret(Name=secret, SecretString="mk_test_key")
    secrets.delete_secret(SecretId=secret, RecoveryWindowInDays=7)
    # WHEN the preflight runs
    status, _, err = run(samconfig, capsys)
    # THEN it refuses and tells how to restore it
    assert status == 1
    assert "aws secretsmanager restore-secret" in err


def test_no_credentials_is_a_message_not_a_traceback(
    moto_endpoint: str,
    samconfig: Path,
    clean_env: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN no AWS credentials anywhere
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        clean_env.delenv(name, raising=False)
    clean_env.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    clean_env.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    clean_env.setenv("AWS_EC2_METADATA_DISABLED", "true")
    # WHEN the preflight runs
    status, _, err = run(samconfig, capsys)
    # THEN it says how to set credentials up
    assert status == 1
    assert "No AWS credentials found" in err and "Traceback" not in err
