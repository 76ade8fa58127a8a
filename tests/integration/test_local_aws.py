"""`make serve LOCAL_AWS=moto`: a tool that reads a secret and a DynamoDB table runs with no AWS account."""

from __future__ import annotations

import json
import re
import textwrap
import urllib.request
from typing import TYPE_CHECKING, Any
from urllib.error import HTTPError

import pytest
from median_lambda.devserver.local_aws import LocalAwsError, requested
from median_lambda.key.local_key import dev_key
from median_lambda.protocol import SIGNATURE_HEADER
from median_lambda.request.signature import sign
from median_lambda.testing import call_body

from tests.devserver_process import REPO, running_devserver

if TYPE_CHECKING:
    from pathlib import Path

    from tests.devserver_process import DevServerProcess

# A tool as a user writes it: boto3 as it comes, no endpoint, no credentials in the code.
CARRIER_TOOL = '''
    from __future__ import annotations

    import boto3
    from pydantic import BaseModel, Field

    from median_lambda import tool


    class ShipmentInput(BaseModel):
        shipmentId: str = Field(description="The shipment's id, e.g. SHP-1.")


    @tool(risk="low", name="shipmentStatus")
    def shipment_status(args: ShipmentInput) -> dict[str, object]:
        """The status of a shipment, from the company's own table and carrier."""
        token = boto3.client("secretsmanager").get_secret_value(SecretId="median-tools/carrier-token")
        account = boto3.client("ssm").get_parameter(Name="/median-tools/carrier/account-id")["Parameter"]["Value"]
        item = boto3.client("dynamodb").get_item(TableName="shipments", Key={"id": {"S": args.shipmentId}})
        return {
            "status": item["Item"]["status"]["S"],
            "tokenIsTheLocalOne": token["SecretString"] == "local-dev-token",
            "account": account,
        }
'''

DOCS = REPO / "docs" / "configuration.md"


def docs_snippet(language: str, first_line: str) -> str:
    """The fenced block of docs/configuration.md that starts with `first_line`, as a user would copy it."""
    text = DOCS.read_text(encoding="utf-8")
    for match in re.finditer(rf"^( *)```{language}\n(.*?)^\1```", text, flags=re.MULTILINE | re.DOTALL):
        block = textwrap.dedent(match.group(2))
        if block.startswith(first_line):
            return block
    raise AssertionError(f"docs/configuration.md has no {language} block starting {first_line!r}")


# The guide's own snippets are the project's files here, so they run as written.
LOCAL_SETTINGS = docs_snippet("toml", "# tools/settings.local.toml")
SEED_HOOK = docs_snippet("python", "# tests/tools/local_aws_seed.py")


def write(path: Path, source: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A user's project: a tool on AWS, the local file naming its secret and parameter, and a seed hook."""
    root = tmp_path / "project"
    write(root / "tools" / "__init__.py", "")
    write(root / "tools" / "shipments.py", CARRIER_TOOL)
    write(root / "tools" / "settings.local.toml", LOCAL_SETTINGS)
    write(root / "tests" / "tools" / "local_aws_seed.py", SEED_HOOK)
    return root


# What a developer's shell may hold: their real account's profile and keys, which must not be used.
A_REAL_SHELL = {
    "AWS_PROFILE": "company-production",
    "AWS_ACCESS_KEY_ID": "AKIAREALKEY",
    "AWS_SECRET_ACCESS_KEY": "real",
    "AWS_SESSION_TOKEN": "real-session",
    "AWS_ENDPOINT_URL": "",
    "AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:8000",  # DynamoDB Local, say
    "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true",
}


def call(server: DevServerProcess, tool: str, tool_input: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    body = call_body(tool, tool_input)
    request = urllib.request.Request(  # noqa: S310 - loopback
        server.url, data=body, method="POST", headers={SIGNATURE_HEADER: sign(dev_key(), body)}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - a loopback URL of our own
            return response.status, json.loads(response.read())
    except HTTPError as error:
        return error.code, json.loads(error.read())


def test_a_tool_on_secrets_parameters_and_dynamodb_runs_under_make_serve_with_no_account(
    project: Path, tmp_path: Path
) -> None:
    # GIVEN make serve started with LOCAL_AWS=moto, in a shell that also holds a real account's settings
    with running_devserver(tmp_path, cwd=project, tools_package=None, env={**A_REAL_SHELL, "LOCAL_AWS": "moto"}) as srv:
        # WHEN Median calls the tool
        status, answer = call(srv, "shipmentStatus", {"shipmentId": "SHP-1"})
        startup = srv.output()
    # THEN it answers from moto: the item the seed hook made, the secret and parameter the local file named
    assert status == 200, answer
    assert answer["output"] == {"status": "in transit", "tokenIsTheLocalOne": True, "account": "ACME-LOCAL"}
    # AND the terminal says where AWS is, and what was seeded from where
    assert "Local AWS: moto's server on http://127.0.0.1:" in startup
    assert "no AWS account is used" in startup
    assert "1 secret(s) from tools/settings.local.toml [secrets]: median-tools/carrier-token" in startup
    assert "1 parameter(s) from tools/settings.local.toml [parameters]: /median-tools/carrier/account-id" in startup
    assert "what tests/tools/local_aws_seed.py seed() made" in startup
    # AND never the secret's value
    assert "local-dev-token" not in startup


def test_a_seed_hook_that_fails_is_named_at_its_line_and_the_server_serves_regardless(
    project: Path, tmp_path: Path
) -> None:
    # GIVEN a seed hook with a mistake on its fifth line, and a parameter name AWS refuses (the prefix aws is its own)
    write(project / "tests" / "tools" / "local_aws_seed.py", "import boto3\n\n\ndef seed() -> None:\n    1 / 0\n")
    local_file = project / "tools" / "settings.local.toml"
    local_file.write_text(local_file.read_text(encoding="utf-8") + '"aws/carrier" = "x"\n', encoding="utf-8")
    # WHEN make serve starts with LOCAL_AWS=moto
    with running_devserver(tmp_path, cwd=project, tools_package=None, env={"LOCAL_AWS": "moto"}) as srv:
        status, answer = call(srv, "shipmentStatus", {"shipmentId": "SHP-1"})
        startup = srv.output()
    # THEN the terminal names the hook's line and the error, and the refused parameter, the rest is still
    # seeded, and the server runs: the tool's call fails on the missing table as it would against a real account
    assert "seed failed: tests/tools/local_aws_seed.py:5: ZeroDivisionError: division by zero" in startup
    assert "1 secret(s) from tools/settings.local.toml [secrets]" in startup
    assert 'seed failed: tools/settings.local.toml [parameters] "aws/carrier": ' in startup
    assert "1 parameter(s) from tools/settings.local.toml [parameters]: /median-tools/carrier/account-id" in startup
    assert status == 500, answer


def test_a_seed_hook_that_fails_alone_is_not_called_nothing_to_seed(project: Path, tmp_path: Path) -> None:
    # GIVEN a seed hook that fails on its fifth line, and no local file to seed from
    write(project / "tests" / "tools" / "local_aws_seed.py", "import boto3\n\n\ndef seed() -> None:\n    1 / 0\n")
    (project / "tools" / "settings.local.toml").unlink()
    # WHEN make serve starts with LOCAL_AWS=moto
    with running_devserver(tmp_path, cwd=project, tools_package=None, env={"LOCAL_AWS": "moto"}) as srv:
        startup = srv.output()
    # THEN the terminal names the hook's failure, and does not also tell the user to write the hook they wrote
    assert "seed failed: tests/tools/local_aws_seed.py:5: ZeroDivisionError: division by zero" in startup
    assert "nothing seeded" not in startup


@pytest.mark.parametrize("value", ["", "off", "moto", "MOTO"])
def test_local_aws_takes_moto_or_nothing(value: str) -> None:
    # GIVEN LOCAL_AWS unset, switched off, or asking for moto
    # THEN moto's server is started only for moto
    assert requested({"LOCAL_AWS": value}) is (value.lower() == "moto")


def test_another_local_aws_value_is_refused_with_the_choices() -> None:
    # GIVEN LOCAL_AWS naming something this server cannot start
    # WHEN make serve reads it
    with pytest.raises(LocalAwsError) as refused:
        requested({"LOCAL_AWS": "localstack"})
    # THEN it says the choices
    assert "use LOCAL_AWS=moto for moto's server, or leave it unset to use your own AWS credentials" in str(
        refused.value
    )
