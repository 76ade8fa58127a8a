"""`median smoke-check`, the pipeline's check after each deploy, against a real endpoint over HTTP.

The endpoint is the dev server (`make serve`) verifying with the key in moto's Secrets Manager,
as a deployed function does, and serving a `tools` package of the test's own.
"""

from __future__ import annotations

import json
import textwrap
import uuid
from typing import TYPE_CHECKING

import boto3
import pytest
from median_lambda.cli import smoke_check
from median_lambda.cli.commands import main
from median_lambda.protocol import KEY_SECRET_ENV
from median_lambda.testing import TEST_KEY

from tests.devserver_process import running_devserver

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

ONE_TOOL = '''
from pydantic import BaseModel, Field

from median_lambda import tool


class EchoInput(BaseModel):
    text: str = Field(description="What to say back.")


@tool(risk="low")
def echo(args: EchoInput) -> dict:
    """Say the text back."""
    return {"text": args.text}
'''


def _tools_dir(root: Path) -> Path:
    (root / "tools").mkdir()
    (root / "tools" / "__init__.py").write_text("", encoding="utf-8")
    (root / "tools" / "echo.py").write_text(textwrap.dedent(ONE_TOOL), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def endpoint(median_aws_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An endpoint whose secret, on moto's server, holds TEST_KEY."""
    name = f"median/smoke/{uuid.uuid4().hex[:8]}"
    boto3.client("secretsmanager", endpoint_url=median_aws_endpoint).create_secret(Name=name, SecretString=TEST_KEY)
    root = _tools_dir(tmp_path_factory.mktemp("smoke"))
    env = {KEY_SECRET_ENV: name, "AWS_ENDPOINT_URL": median_aws_endpoint}
    with running_devserver(root, cwd=root, tools_package=None, env=env) as server:
        yield server.url


@pytest.fixture(scope="module")
def endpoint_without_its_secret(median_aws_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An endpoint deployed before anyone created the secret it names, on moto's server."""
    root = _tools_dir(tmp_path_factory.mktemp("smoke-nosecret"))
    env = {KEY_SECRET_ENV: f"median/never-created/{uuid.uuid4().hex[:8]}", "AWS_ENDPOINT_URL": median_aws_endpoint}
    with running_devserver(root, cwd=root, env=env) as s:
        yield s.url


@pytest.fixture
def no_median_key(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv("MEDIAN_KEY", raising=False)
    return monkeypatch


def smoke_check_command(arguments: list[str]) -> int:
    """`median smoke-check ARGUMENTS`, as the deploy workflow runs it after each deploy."""
    return main(["smoke-check", *arguments])


@pytest.fixture
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    """One attempt, no pause: the retries are for API Gateway's moments, not for these tests."""
    monkeypatch.setattr(smoke_check, "GATEWAY_RETRIES", 1)


def test_a_live_endpoint_that_reads_its_key_passes_without_median_key(
    endpoint: str, no_median_key: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN an endpoint whose secret exists, and no $MEDIAN_KEY in the pipeline
    # WHEN the smoke check runs
    status = smoke_check_command([endpoint])
    # THEN it passes, prints the URL alone on stdout (the workflow's environment link), and
    # says that the manifest was not fetched
    out, err = capsys.readouterr()
    assert status == 0
    assert out == f"{endpoint}\n"
    assert "reads its Median key" in err
    assert "MEDIAN_KEY is not set" in err


def test_with_median_key_it_also_fetches_the_manifest(
    endpoint: str, no_median_key: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the key Median signs with in $MEDIAN_KEY
    no_median_key.setenv("MEDIAN_KEY", TEST_KEY)
    # WHEN the smoke check runs
    status = smoke_check_command([endpoint])
    # THEN it fetched the manifest, with the one tool this endpoint serves
    _, err = capsys.readouterr()
    assert status == 0
    assert "serves its manifest (1 tools)" in err


def test_a_median_key_other_than_the_secrets_fails_and_says_which(
    endpoint: str, no_median_key: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a $MEDIAN_KEY that is not the key in the endpoint's secret
    no_median_key.setenv("MEDIAN_KEY", "mk_some_other_key")
    # WHEN the smoke check runs
    status = smoke_check_command([endpoint])
    # THEN it fails, saying that the secret and $MEDIAN_KEY differ, and never prints either key
    _, err = capsys.readouterr()
    assert status == 1
    assert "the secret holds another key than $MEDIAN_KEY" in err
    assert "mk_some_other_key" not in err and TEST_KEY not in err


def test_an_endpoint_that_cannot_read_its_secret_fails_with_the_fix(
    endpoint_without_its_secret: str, no_median_key: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN an endpoint deployed before its secret was created
    # WHEN the smoke check runs, with no key of its own
    status = smoke_check_command([endpoint_without_its_secret])
    # THEN it fails on 500 no_key, and says to create the secret MedianKeySecretName names
    _, err = capsys.readouterr()
    assert status == 1
    assert "500 no_key" in err
    assert "Create the secret this stage's MedianKeySecretName names" in err


def test_the_url_comes_from_the_stacks_outputs(
    endpoint: str, no_median_key: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN `sam list stack-outputs --output json` of a stack holding the endpoint
    outputs = tmp_path / "outputs.json"
    outputs.write_text(
        json.dumps(
            [
                {"OutputKey": "MedianToolsFunctionArn", "OutputValue": "arn:aws:lambda:eu-west-1:1:function:f"},
                {"OutputKey": "MedianEndpointUrl", "OutputValue": endpoint, "Description": "Paste this URL"},
            ]
        ),
        encoding="utf-8",
    )
    # WHEN the smoke check reads them
    status = smoke_check_command(["--stack-outputs", str(outputs)])
    # THEN it checked the MedianEndpointUrl output's endpoint
    out, _ = capsys.readouterr()
    assert status == 0
    assert out == f"{endpoint}\n"


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ('[{"OutputKey": "SomethingElse", "OutputValue": "x"}]', "has no MedianEndpointUrl output"),
        ("[]", "has no MedianEndpointUrl output"),
        ('{"not": "a list"}', "has no MedianEndpointUrl output"),
        ("Error: Stack does not exist", "cannot read the stack's outputs"),
    ],
)
def test_outputs_without_the_endpoint_fail_clearly(
    content: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN outputs of another stack, of none, or not JSON at all
    outputs = tmp_path / "outputs.json"
    outputs.write_text(content, encoding="utf-8")
    # WHEN the smoke check reads them
    status = smoke_check_command(["--stack-outputs", str(outputs)])
    # THEN it fails with one line that says so
    _, err = capsys.readouterr()
    assert status == 1
    assert said in err


def test_an_endpoint_that_does_not_answer_fails(
    closed_port: int, no_waiting: None, no_median_key: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a URL where nothing listens
    # WHEN the smoke check runs
    status = smoke_check_command([f"http://127.0.0.1:{closed_port}/"])
    # THEN it fails, saying the GET got no answer
    _, err = capsys.readouterr()
    assert status == 1
    assert "got no answer" in err


def test_something_that_is_not_the_endpoint_fails(
    moto_endpoint: str, no_waiting: None, no_median_key: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a URL that answers HTTP, but is not a Median tools endpoint (moto's server)
    # WHEN the smoke check runs
    status = smoke_check_command([f"{moto_endpoint}/"])
    # THEN it fails: the answer was not the endpoint's 401 mismatch
    _, err = capsys.readouterr()
    assert status == 1
    assert "expected 401 unauthorized (mismatch)" in err


@pytest.mark.parametrize("url", ["ftp://example.com/", "not a url", "https://"])
def test_a_url_that_is_not_http_is_refused(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a URL that is not http(s)
    # WHEN the smoke check is given it
    status = smoke_check_command([url])
    # THEN it refuses it without sending anything
    _, err = capsys.readouterr()
    assert status == 1
    assert "is not an http(s) URL" in err


PASTED_KEY = "mk_live_pasted_into_the_workflow_0123"


@pytest.mark.parametrize(
    "arguments",
    [
        ["--key", PASTED_KEY],
        [f"--key={PASTED_KEY}"],
        [f"-k{PASTED_KEY}"],
        ["--median-key", PASTED_KEY],
        [PASTED_KEY],  # in the URL's place
        ["https://example.com/", PASTED_KEY],  # after the URL
        ["--stack-outputs", "outputs.json", PASTED_KEY],
        [f"--stack-outputs={PASTED_KEY}", "https://example.com/"],
    ],
)
def test_a_key_on_the_command_line_is_never_printed_to_the_ci_log(
    arguments: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a workflow step that passes the key on the smoke check's command line
    # WHEN it runs
    status = smoke_check_command(arguments)
    # THEN it stops without sending anything, and its output, the CI log, never holds the key
    out, err = capsys.readouterr()
    assert status != 0
    assert PASTED_KEY not in out + err
