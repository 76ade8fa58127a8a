"""No test of a project reaches real AWS, whenever its boto3 client was made, and moto's own `mock_aws` works.

A user's tests, run by pytest in a copy of the project, from a developer's shell: a real account's
profile, keys and region in the environment and in ~/.aws, and the way out to the internet through
an HTTPS proxy, which this module runs on loopback and which records every connection asked of it.
Their conftest makes a boto3 client as it is imported, before any test (and before any fixture
could point boto3 elsewhere); one test module uses moto's own `@mock_aws`. A request that left
for AWS would pass the proxy: none does, with median-lambda's plugin on; with it left out
(`-p no:median_lambda`), the same test's call does, which is what makes the proxy a witness.
"""

from __future__ import annotations

import http.server
import threading
from typing import TYPE_CHECKING

import pytest

from tests.project_copy import ProjectCopy, copy_project
from tests.threaded_server import serving_in_a_thread

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

REAL_KEY = "AKIAREALDEVELOPERKEY"
A_REAL_SHELL = {
    "AWS_PROFILE": "company-production",
    "AWS_ACCESS_KEY_ID": REAL_KEY,
    "AWS_SECRET_ACCESS_KEY": "real-secret",
    "AWS_SESSION_TOKEN": "real-session",
    "AWS_REGION": "eu-west-1",
    "AWS_DEFAULT_REGION": "eu-west-1",
    # One try each: the control run's call fails at the proxy without botocore's retries.
    "AWS_MAX_ATTEMPTS": "1",
}

USERS_CONFTEST = '''
"""A user's conftest: moto imported, and a client made as the module is imported, shared by the tests."""

import boto3
from moto import mock_aws  # noqa: F401 - before any client, so moto's handler is in their session

ORDERS = boto3.client("dynamodb")
'''

USERS_TESTS = '''
"""A user's tests: the conftest's client outside any mock, and moto's own decorator."""

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from tests.conftest import ORDERS


def test_the_conftests_client_reaches_no_real_aws():
    with pytest.raises(ClientError) as refused:
        ORDERS.list_tables()
    assert refused.value.response["Error"]["Code"] == "UseTheMedianAwsFixture"
    message = str(refused.value)
    assert "dynamodb ListTables to https://dynamodb.us-east-1.amazonaws.com/" in message, message
    assert "median_aws fixture" in message and "mock_aws" in message


def test_its_credential_is_nobodys():
    credentials = boto3.DEFAULT_SESSION.get_credentials()
    assert credentials.access_key not in ("AKIAREALDEVELOPERKEY", "AKIAFROMTHEFILE")
    assert credentials.token is None


@mock_aws
def test_motos_own_decorator_answers():
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket="receipts")
    assert [bucket["Name"] for bucket in s3.list_buckets()["Buckets"]] == ["receipts"]


@mock_aws
def test_motos_own_decorator_answers_the_conftests_client_too():
    ORDERS.create_table(
        TableName="orders",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    assert ORDERS.list_tables()["TableNames"] == ["orders"]


def test_median_aws_still_answers(median_aws):
    median_aws.create_secret("median-tools/carrier-token", "t0k3n")
    answer = boto3.client("secretsmanager").get_secret_value(SecretId="median-tools/carrier-token")
    assert answer["SecretString"] == "t0k3n"
'''
TESTS = 5

# A client made before moto is imported: its session has no handler of moto's, so mock_aws cannot answer it.
CONFTEST_BEFORE_MOTO = """
import boto3

ORDERS = boto3.client("dynamodb")
"""
TEST_BEFORE_MOTO = """
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from tests.conftest import ORDERS


@mock_aws
def test_a_client_made_before_moto_is_refused_saying_why():
    with pytest.raises(ClientError) as refused:
        ORDERS.list_tables()
    assert "made before moto was imported" in str(refused.value)
"""

# A plugin loaded before median-lambda's (-p comes first): the client it makes as it is imported has no guard.
EARLY_PLUGIN = """
import boto3

REPORTS = boto3.client("s3")
"""


class _Proxy(http.server.BaseHTTPRequestHandler):
    """An HTTPS proxy that records each host asked of it and connects none: the way out to the internet."""

    asked: list[str]
    lock = threading.Lock()

    def do_CONNECT(self) -> None:
        with self.lock:
            self.asked.append(self.path)
        self.send_error(403, "this test's internet goes nowhere")

    do_GET = do_POST = do_CONNECT

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


@pytest.fixture(scope="module")
def internet() -> Iterator[list[str]]:
    """The proxy's address for HTTPS_PROXY, and the hosts asked of it, as a list that grows."""
    asked: list[str] = []
    handler = type("Recorder", (_Proxy,), {"asked": asked})
    with serving_in_a_thread(http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)) as server:
        asked.insert(0, f"http://127.0.0.1:{server.server_address[1]}")
        yield asked


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A developer's home, whose ~/.aws names a real account too."""
    home = tmp_path_factory.mktemp("home")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text(
        "[company-production]\naws_access_key_id = AKIAFROMTHEFILE\naws_secret_access_key = real\n", encoding="utf-8"
    )
    (home / ".aws" / "config").write_text("[profile company-production]\nregion = eu-west-1\n", encoding="utf-8")
    return home


def users_project(root: Path, conftest: str, tests: str) -> ProjectCopy:
    copy = copy_project(root)
    copy.write("tests/conftest.py", conftest)
    copy.write("tests/tools/__init__.py", "")
    copy.write("tests/tools/test_users_aws.py", tests)
    return copy


def run(project: ProjectCopy, internet: list[str], home: Path, *arguments: str) -> tuple[int, str, list[str]]:
    """pytest in the project from the developer's shell: its exit code, what it said, and the hosts it asked for."""
    proxy, before = internet[0], len(internet)
    shell = {
        **A_REAL_SHELL,
        "HOME": str(home),
        # Where boto3 looks by default, named: this test process's own environment names none of a developer's.
        "AWS_CONFIG_FILE": str(home / ".aws" / "config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(home / ".aws" / "credentials"),
        "HTTPS_PROXY": proxy,
        "HTTP_PROXY": proxy,
        "NO_PROXY": "127.0.0.1",
    }
    finished = project.run("-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *arguments, env=shell)
    return finished.returncode, finished.stdout + finished.stderr, internet[before:]


def test_no_test_reaches_real_aws_and_motos_decorator_answers(tmp_path: Path, internet: list[str], home: Path) -> None:
    # GIVEN a user's conftest that makes a boto3 client as it is imported, and tests that call it, and moto's own
    # decorator, in a developer's shell with a real account's keys and a way out to the internet
    project = users_project(tmp_path / "project", USERS_CONFTEST, USERS_TESTS)
    # WHEN pytest runs them
    code, said, asked = run(project, internet, home, "tests/tools")
    # THEN every test passes: the conftest's client is refused, naming its call, and signs with nobody's key;
    # moto's mock_aws answers it and others; median_aws still works
    assert code == 0, said
    assert f"{TESTS} passed" in said
    # AND not one connection left for the internet
    assert asked == []


def test_the_proxy_would_have_seen_a_call_that_left(tmp_path: Path, internet: list[str], home: Path) -> None:
    # GIVEN the same project, run with median-lambda's plugin left out
    project = users_project(tmp_path / "project", USERS_CONFTEST, USERS_TESTS)
    # WHEN the test that calls the conftest's client outside any mock runs
    only = "tests/tools/test_users_aws.py::test_the_conftests_client_reaches_no_real_aws"
    _, said, asked = run(project, internet, home, "-p", "no:median_lambda", only)
    # THEN its call left for the real account's DynamoDB, through the proxy: the witness sees what leaves
    assert asked == ["dynamodb.eu-west-1.amazonaws.com:443"], said


def test_a_client_made_before_moto_was_imported_is_refused_saying_so(
    tmp_path: Path, internet: list[str], home: Path
) -> None:
    # GIVEN a conftest that makes its client before anything imports moto, and a test that uses it under mock_aws
    project = users_project(tmp_path / "project", CONFTEST_BEFORE_MOTO, TEST_BEFORE_MOTO)
    # WHEN pytest runs it
    code, said, asked = run(project, internet, home, "tests/tools")
    # THEN moto cannot answer that client (its handler is not in the client's session) and the guard refuses it,
    # saying why, instead of letting it reach AWS
    assert code == 0, said
    assert asked == []


def test_a_client_made_before_the_plugin_loaded_stops_the_run_naming_it(
    tmp_path: Path, internet: list[str], home: Path
) -> None:
    # GIVEN a pytest plugin of the user's, loaded before median-lambda's (-p), that makes a client as it is imported
    project = users_project(tmp_path / "project", USERS_CONFTEST, USERS_TESTS)
    project.write("early_reports.py", EARLY_PLUGIN)
    # WHEN pytest runs with it
    code, said, asked = run(project, internet, home, "-p", "early_reports", "tests/tools")
    # THEN the run stops before any test, naming the client and the session it came from, and what to do
    assert code == pytest.ExitCode.USAGE_ERROR, said
    assert "early_reports.REPORTS: a S3 client" in said
    assert "boto3's default session" in said
    assert "Make them in a fixture or a test" in said
    assert "passed" not in said
    assert asked == []
