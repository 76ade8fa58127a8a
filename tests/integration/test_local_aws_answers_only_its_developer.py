"""The local AWS stand-in answers its developer's processes alone, not another account of the machine.

Loopback is every local account's: another Unix user can find moto's port and send it anything.
Both moto servers the project starts are attacked from a process of its own that has none of the
run's environment (tests/local_aws_attacker.py), on real HTTP: unsigned, signed with moto's
documented `testing` key, with the run's key id and a guessed secret, with a signature the
developer's client made for another request, and with the developer's own request for the same
operation replayed 20 minutes on. It tries to read (GetSecretValue, GetParameter, Scan) and to
write (PutSecretValue, PutParameter, PutItem), and moto's own data dump and reset. Every attempt
is refused 403 `LocalAwsCredentialRequired`, no answer holds the secret, and afterwards the
developer reads what they seeded, unchanged. What the developer's own processes send (boto3 from
the environment, the fixture's reset, S3's presigned URLs of both signature versions) is answered.
"""

from __future__ import annotations

import datetime
import json
import os
import signal
import stat
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.error import HTTPError

import boto3
import pytest
from botocore.auth import S3SigV4Auth, SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials

from handler.testing.moto_server import CREDENTIAL_REQUIRED, LocalCredentials, run_credentials
from tests.devserver_process import REPO, serving_local_aws
from tests.integration.test_local_aws_answers_only_this_machine import (
    LOCAL_SETTINGS,
    PARAMETER_NAME,
    PARAMETER_VALUE,
    SECRET_NAME,
    SECRET_VALUE,
)
from tests.local_aws_attacker import JSON_1_0, JSON_1_1, PLANTED, operations

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from handler.testing import MedianAWS

TABLE = "shipments"
ITEM = {"id": {"S": "SHP-1"}, "status": {"S": "in transit"}}
REGION = "us-east-1"
# A harmless call per service, whose signature the attacker is given as if it had captured it.
HARMLESS = {
    "secretsmanager": ("secretsmanager.ListSecrets", JSON_1_1),
    "ssm": ("AmazonSSM.DescribeParameters", JSON_1_1),
    "dynamodb": ("DynamoDB_20120810.ListTables", JSON_1_0),
}


@dataclass(frozen=True)
class LocalAws:
    """A running moto server, as its developer has it: its URL, the run's credential, a client maker."""

    endpoint: str
    credentials: LocalCredentials
    client: Callable[[str], Any]


def signed(
    local: LocalAws, service: str, target: str, content_type: str, body: bytes, at: datetime.datetime | None = None
) -> dict[str, str]:
    """The headers the developer's client sends for this request: signed with the run's credential, now or `at`."""
    request = AWSRequest(
        method="POST",
        url=f"{local.endpoint}/",
        data=body,
        headers={"Content-Type": content_type, "X-Amz-Target": target},
    )
    signer = SigV4Auth(
        Credentials(local.credentials.access_key_id, local.credentials.secret_access_key), service, REGION
    )
    if at is None:
        signer.add_auth(request)
    else:
        # botocore signs for the current time only: its public steps, for a time of our choosing.
        timestamp = at.strftime("%Y%m%dT%H%M%SZ")
        request.context["timestamp"] = timestamp
        request.headers["X-Amz-Date"] = timestamp
        canonical = signer.canonical_request(request)
        signature = signer.signature(signer.string_to_sign(request, canonical), request)
        request.headers["Authorization"] = (
            f"AWS4-HMAC-SHA256 Credential={signer.scope(request)}, "
            f"SignedHeaders={signer.signed_headers(signer.headers_to_sign(request))}, Signature={signature}"
        )
    return {"Host": local.endpoint.removeprefix("http://"), **dict(request.headers.items())}


def attack(local: LocalAws) -> list[dict[str, Any]]:
    """What another account's process gets from the server, attempt by attempt."""
    twenty_minutes_ago = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=20)
    stale = {}
    for operation, (service, target, content_type, document) in operations(SECRET_NAME, PARAMETER_NAME, TABLE).items():
        body = json.dumps(document).encode()
        stale[operation] = {
            "headers": signed(local, service, target, content_type, body, at=twenty_minutes_ago),
            "body": body.decode(),
        }
    plan = {
        "endpoint": local.endpoint,
        "access_key_id": local.credentials.access_key_id,
        "secret": SECRET_NAME,
        "secret_value": SECRET_VALUE,
        "parameter": PARAMETER_NAME,
        "table": TABLE,
        "captured": {
            service: signed(local, service, target, content_type, b"{}")
            for service, (target, content_type) in HARMLESS.items()
        },
        "stale": stale,
    }
    # Another account's process: none of this one's environment, so none of the run's credential.
    stranger = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO), "HOME": "/nonexistent"}
    stranger |= {
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    run = subprocess.run(
        [sys.executable, "-m", "tests.local_aws_attacker"],
        input=json.dumps(plan),
        capture_output=True,
        text=True,
        env=stranger,
        cwd=REPO,
        timeout=120,
        check=True,
    )
    return [json.loads(line) for line in run.stdout.splitlines()]


def assert_all_refused(results: list[dict[str, Any]]) -> None:
    # 6 operations x 5 attempts, and moto's data dump and reset
    assert len(results) == 32, results
    for result in results:
        assert (result["status"], result["code"]) == (403, CREDENTIAL_REQUIRED), result
        assert result["leaked"] is False, result


def assert_as_seeded(local: LocalAws) -> None:
    """What the developer seeded, read by the developer: nothing planted, nothing reset."""
    assert local.client("secretsmanager").get_secret_value(SecretId=SECRET_NAME)["SecretString"] == SECRET_VALUE
    assert local.client("ssm").get_parameter(Name=PARAMETER_NAME)["Parameter"]["Value"] == PARAMETER_VALUE
    assert local.client("dynamodb").scan(TableName=TABLE)["Items"] == [ITEM]


def make_table(dynamodb: Any) -> None:
    dynamodb.create_table(
        TableName=TABLE,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    dynamodb.put_item(TableName=TABLE, Item=ITEM)


# --- The median_aws fixture's server --------------------------------------------------------------


@pytest.fixture
def fixtures_aws(median_aws: MedianAWS) -> LocalAws:
    """The test's moto, seeded as a tool's test seeds it."""
    median_aws.create_secret(SECRET_NAME, SECRET_VALUE)
    median_aws.put_parameter(PARAMETER_NAME, PARAMETER_VALUE, secure=False)
    make_table(median_aws.client("dynamodb"))
    return LocalAws(median_aws.endpoint, run_credentials(), median_aws.client)


def test_another_account_can_neither_read_nor_write_the_fixtures_aws(fixtures_aws: LocalAws) -> None:
    # GIVEN the fixture's moto, holding a secret, a parameter and a table
    # WHEN another account's process tries every way it has to read them and to plant its own values
    results = attack(fixtures_aws)
    # THEN each attempt is refused before moto reads it, and no answer holds the secret
    assert_all_refused(results)
    # AND the developer reads what they seeded
    assert_as_seeded(fixtures_aws)


def test_the_refusal_says_what_a_developer_must_do(median_aws: MedianAWS) -> None:
    # GIVEN the fixture's moto, and a client of the developer's that signs with moto's documented key
    client = boto3.Session(aws_access_key_id="testing", aws_secret_access_key="testing").client(
        "secretsmanager", endpoint_url=median_aws.endpoint, region_name=REGION
    )
    # WHEN it calls
    with pytest.raises(client.exceptions.ClientError) as refused:
        client.list_secrets()
    # THEN botocore raises the refusal's code, and its message says where the credential is
    assert refused.value.response["Error"]["Code"] == CREDENTIAL_REQUIRED
    message = refused.value.response["Error"]["Message"]
    assert message.startswith("Refused: it is signed with another credential than this run's.")
    assert "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY" in message


def test_the_developers_processes_are_answered(median_aws: MedianAWS) -> None:
    # GIVEN the fixture's moto, and a bucket with a file in it
    s3 = median_aws.client("s3")
    s3.create_bucket(Bucket="labels")
    s3.put_object(Bucket="labels", Key="2026/label 1+A.pdf", Body=b"%PDF-label")
    # WHEN a tool's plain boto3 client, and a process the test starts, read it
    from_environment = boto3.client("s3").get_object(Bucket="labels", Key="2026/label 1+A.pdf")["Body"].read()
    child = subprocess.run(
        [
            sys.executable,
            "-c",
            "import boto3; print(len(boto3.client('s3').list_objects_v2(Bucket='labels')['Contents']))",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    # THEN both are answered: they sign with the credential the environment hands them
    assert from_environment == b"%PDF-label"
    assert child.stdout.strip() == "1"


@pytest.mark.parametrize("version", ["s3v4", "s3"])
def test_a_presigned_url_of_the_runs_credential_is_answered_and_one_of_another_is_not(
    median_aws: MedianAWS, version: str
) -> None:
    # GIVEN a file on the fixture's S3
    median_aws.client("s3").create_bucket(Bucket="labels")
    median_aws.client("s3").put_object(Bucket="labels", Key="label.pdf", Body=b"%PDF-label")
    ours = boto3.client("s3", config=Config(signature_version=version))
    theirs = boto3.Session(aws_access_key_id=run_credentials().access_key_id, aws_secret_access_key="testing").client(
        "s3", endpoint_url=median_aws.endpoint, region_name=REGION, config=Config(signature_version=version)
    )
    # WHEN a tool presigns a link to it (boto3's default for this endpoint is S3's version 2), a link
    # expired, and one presigned with a guessed secret, and each is fetched as a browser would
    parameters = {"Params": {"Bucket": "labels", "Key": "label.pdf"}}
    links = {
        "ours": ours.generate_presigned_url("get_object", **parameters),
        "expired": ours.generate_presigned_url("get_object", ExpiresIn=-1, **parameters),
        "theirs": theirs.generate_presigned_url("get_object", **parameters),
    }
    fetched = {}
    for name, link in links.items():
        try:
            with urllib.request.urlopen(link, timeout=30) as response:  # noqa: S310 - loopback
                fetched[name] = response.status, response.read()
        except HTTPError as error:
            fetched[name] = error.code, error.read()
    # THEN the link of the run's credential gets the file, and the others a refusal
    assert fetched["ours"] == (200, b"%PDF-label")
    assert fetched["expired"][0] == fetched["theirs"][0] == 403
    assert b"presigned URL has expired" in fetched["expired"][1]
    assert b"does not match this run's credential" in fetched["theirs"][1]


def test_a_signature_taken_from_an_upload_does_not_carry_another_body(median_aws: MedianAWS) -> None:
    # GIVEN a bucket, and the headers the developer's client signed to upload one file
    s3 = median_aws.client("s3")
    s3.create_bucket(Bucket="labels")
    request = AWSRequest(method="PUT", url=f"{median_aws.endpoint}/labels/label.pdf", data=b"%PDF-label")
    credentials = run_credentials()
    S3SigV4Auth(Credentials(credentials.access_key_id, credentials.secret_access_key), "s3", REGION).add_auth(request)
    headers = dict(request.headers.items())
    # WHEN another body is sent under them
    planted = urllib.request.Request(  # noqa: S310 - loopback
        f"{median_aws.endpoint}/labels/label.pdf", data=b"planted", method="PUT", headers=headers
    )
    with pytest.raises(HTTPError) as refused:
        urllib.request.urlopen(planted, timeout=30)  # noqa: S310 - loopback
    # THEN it is refused, and no file was written
    assert refused.value.code == 403
    assert b"its body is not the one signed" in refused.value.read()
    assert s3.list_objects_v2(Bucket="labels")["KeyCount"] == 0


# --- make serve LOCAL_AWS=moto --------------------------------------------------------------------

SEED_HOOK = f'''
import boto3


def seed() -> None:
    dynamodb = boto3.client("dynamodb")
    dynamodb.create_table(
        TableName="{TABLE}",
        KeySchema=[{{"AttributeName": "id", "KeyType": "HASH"}}],
        AttributeDefinitions=[{{"AttributeName": "id", "AttributeType": "S"}}],
        BillingMode="PAY_PER_REQUEST",
    )
    dynamodb.put_item(TableName="{TABLE}", Item={ITEM!r})
'''


@pytest.fixture
def serving(tmp_path: Path) -> Iterator[Any]:
    """`make serve LOCAL_AWS=moto` seeded from tools/settings.local.toml and the seed hook, as a user has it."""
    with serving_local_aws(tmp_path, LOCAL_SETTINGS, SEED_HOOK) as server:
        yield server


def test_another_account_can_neither_read_nor_write_make_serve_s_aws(serving: Any) -> None:
    # GIVEN make serve's moto, seeded from the local file and the seed hook, and the developer's way in
    environment = serving.local_aws_environment()
    local = LocalAws(
        environment["AWS_ENDPOINT_URL"],
        LocalCredentials(environment["AWS_ACCESS_KEY_ID"], environment["AWS_SECRET_ACCESS_KEY"]),
        serving.local_aws_client,
    )
    # WHEN another account's process tries every way it has to read them and to plant its own values
    results = attack(local)
    # THEN each attempt is refused before moto reads it, and no answer holds the secret
    assert_all_refused(results)
    # AND the developer reads what they seeded
    assert_as_seeded(local)
    assert PLANTED not in json.dumps(local.client("dynamodb").scan(TableName=TABLE)["Items"])


def test_make_serve_hands_its_credential_to_its_developer_alone(tmp_path: Path, serving: Any) -> None:
    # GIVEN make serve LOCAL_AWS=moto, and the file its terminal names for a shell of the developer's
    path = serving.local_aws_file
    environment = serving.local_aws_environment()
    # THEN the file and its folder are the developer's alone: no other account can read them, or put another there
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert path.stat().st_uid == os.getuid()
    # AND a shell that sources it reaches moto, with the AWS CLI's own variables
    list_tables = "import boto3; print(boto3.client('dynamodb').list_tables()['TableNames'])"
    sourced = subprocess.run(  # noqa: S603 - /bin/sh sourcing the file under test, then this interpreter
        ["/bin/sh", "-c", f'. "{path}" && exec "{sys.executable}" -c "{list_tables}"'],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO), "AWS_PROFILE": "company-production"},
        check=False,
    )
    assert sourced.returncode == 0, sourced.stderr
    assert TABLE in sourced.stdout
    # AND the terminal never shows the secret itself
    assert environment["AWS_SECRET_ACCESS_KEY"] not in serving.output()


@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_the_file_goes_when_make_serve_stops(tmp_path: Path, stop: str) -> None:
    # GIVEN make serve LOCAL_AWS=moto, and the file it named
    with serving_local_aws(tmp_path, LOCAL_SETTINGS) as server:
        path = server.local_aws_file
        assert path.is_file()
        # WHEN it is stopped: Ctrl-C, a process manager, a closed terminal
        server.process.send_signal(getattr(signal, stop))
        server.process.wait(timeout=30)
    # THEN its folder is gone with the credential
    assert not path.parent.exists()
