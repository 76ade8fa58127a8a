"""`make deploy`'s preflight against Secrets Manager and CloudFormation (moto's server, over HTTP)."""

from __future__ import annotations

import io
import json
import uuid
from typing import TYPE_CHECKING

import boto3
import pytest

from scripts.deploy_preflight import main

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
    from scripts.sam_settings import deploy_config, parameter_overrides

    config = deploy_config(samconfig)
    return config["stack_name"], parameter_overrides(config)["MedianKeySecretName"]


def run(samconfig: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(["--config", str(samconfig)])
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


def test_the_first_deploy_asks_nothing_samconfig_holds(
    secrets: SecretsManagerClient, samconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the secret exists and the stack does not, yet, and samconfig.toml holds its region
    stack, secret = names(samconfig)
    secrets.create_secret(Name=secret, SecretString="mk_test_key")
    # WHEN the preflight runs
    status, out, err = run(samconfig, capsys)
    # THEN sam deploy runs as samconfig.toml says, not guided, and only its change set is left to confirm
    assert status == 0 and out == ""
    assert err == (
        f"First deploy of {stack} to us-east-1: sam deploy shows what it creates, and asks you to confirm it.\n"
    )


def without_region(samconfig: Path) -> Path:
    text = samconfig.read_text(encoding="utf-8")
    assert text.count('region = "us-east-1"\n') == 1
    samconfig.write_text(text.replace('region = "us-east-1"\n', ""), encoding="utf-8")
    return samconfig


def test_a_region_samconfig_lacks_is_asked_once_offering_the_profiles_and_recorded(
    secrets: SecretsManagerClient, samconfig: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN samconfig.toml without a region (copier copy's empty answer), a profile whose region is us-east-1,
    # the secret there
    _, secret = names(without_region(samconfig))
    secrets.create_secret(Name=secret, SecretString="mk_test_key")
    before = samconfig.read_text(encoding="utf-8")
    # WHEN the preflight runs, and the user presses Enter at its one question
    monkeypatch.setattr("sys.stdin", io.StringIO("\n"))
    status, out, err = run(samconfig, capsys)
    # THEN it asked for the region alone, offering the profile's, and deploys there
    assert status == 0 and out == ""
    assert err.startswith("\tAWS Region [us-east-1]: Recorded in samconfig.toml [default]: region = us-east-1.")
    # AND samconfig.toml holds it now where sam deploy reads it, every other line as it was
    after = samconfig.read_text(encoding="utf-8")
    assert after == before.replace(
        "[default.global.parameters]\n", '[default.global.parameters]\nregion = "us-east-1"\n'
    )
    # AND the next deploy asks nothing
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert run(samconfig, capsys)[0] == 0


def test_a_region_that_is_none_is_refused_and_nothing_recorded(
    moto_endpoint: str, samconfig: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN samconfig.toml without a region
    before = without_region(samconfig).read_text(encoding="utf-8")
    # WHEN the question is answered with something that is no region
    monkeypatch.setattr("sys.stdin", io.StringIO("Europe\n"))
    status, _, err = run(samconfig, capsys)
    # THEN the deploy stops, saying what a region is, and samconfig.toml is as it was
    assert status == 1
    assert "Not deploying. 'Europe' is not an AWS region, such as eu-west-1: nothing was recorded." in err
    assert samconfig.read_text(encoding="utf-8") == before


def test_a_parameter_without_a_value_is_asked_and_added_to_the_stages_values(
    secrets: SecretsManagerClient, samconfig: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN samconfig.toml that passes no MedianKeySecretName, which the template has no default for
    text = samconfig.read_text(encoding="utf-8")
    _, written = names(samconfig)
    samconfig.write_text(text.replace(f'MedianKeySecretName=\\"{written}\\" ', ""), encoding="utf-8")
    secret = f"median-tools/{uuid.uuid4().hex[:8]}"  # within the parameter's 40 characters
    secrets.create_secret(Name=secret, SecretString="mk_test_key")
    # WHEN the preflight asks for it, and is given the secret's name
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{secret}\n"))
    status, _, err = run(samconfig, capsys)
    # THEN it asked that alone, checked that secret, and added it to the values samconfig.toml passes
    assert status == 0, err
    assert err.startswith("\tParameter MedianKeySecretName: Recorded in samconfig.toml [default]")
    from scripts.sam_settings import deploy_config, parameter_overrides

    assert parameter_overrides(deploy_config(samconfig)) == {"LogLevel": "INFO", "MedianKeySecretName": secret}


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
    status, out, _ = run(samconfig, capsys)
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
