"""`median_aws` isolates: each test sees only what it set up, and a test without it reaches no AWS at all.

A user's own test module, run by pytest in a copy of the project (with no conftest, as a generated
project has none), in a shell that holds a real account's settings: one test makes a table and a
secret, the next forgets the fixture, a third asks for it again. Each passes run in order and run
alone, which is what isolation means: a test that forgot the fixture fails at its first AWS call,
naming the call and the fix, rather than passing against an earlier test's data, and no test
reaches a real account, whatever the shell. (A client made at a conftest's import, and moto's own
`mock_aws`: test_no_real_aws_from_a_test.py.)
"""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError
from median_lambda.testing.no_aws import ERROR_CODE

from tests.project_copy import ProjectCopy, copy_project

# What a developer's shell may hold: their real account's profile, keys and endpoints.
A_REAL_SHELL = {
    "AWS_PROFILE": "company-production",
    "AWS_ACCESS_KEY_ID": "AKIAREALKEY",
    "AWS_SECRET_ACCESS_KEY": "real",
    "AWS_SESSION_TOKEN": "real-session",
    "AWS_REGION": "eu-west-1",
    "AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:8000",
    "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true",
}

USERS_TESTS = '''
"""A user's tests on AWS: the first sets up, the second forgot the fixture, the third asks again."""

import os

import boto3
import pytest
from botocore.exceptions import ClientError


def make_orders(median_aws):
    median_aws.client("dynamodb").create_table(
        TableName="orders",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )


def test_1_sets_up_a_table_and_a_secret(median_aws):
    make_orders(median_aws)
    median_aws.create_secret("median-tools/carrier-token", "t0k3n")
    table = median_aws.idempotency_table()
    assert set(boto3.client("dynamodb").list_tables()["TableNames"]) == {"orders", table}
    assert os.environ["AWS_ENDPOINT_URL"] == median_aws.endpoint
    assert os.environ["IDEMPOTENCY_TABLE"] == table


def test_2_forgot_the_fixture_and_reaches_no_aws():
    with pytest.raises(ClientError) as refused:
        boto3.client("dynamodb").list_tables()
    assert refused.value.response["Error"]["Code"] == "UseTheMedianAwsFixture"
    assert "dynamodb ListTables to https://dynamodb.us-east-1.amazonaws.com/" in str(refused.value)
    assert "Give it the median_aws fixture" in str(refused.value)
    with pytest.raises(ClientError):
        boto3.client("secretsmanager").get_secret_value(SecretId="median-tools/carrier-token")


def test_3_sees_only_what_it_set_up(median_aws):
    assert boto3.client("dynamodb").list_tables()["TableNames"] == []
    assert median_aws.client("secretsmanager").list_secrets()["SecretList"] == []


def test_4_no_real_account_is_ever_named():
    for name in ("AWS_PROFILE", "AWS_REGION", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"):
        assert name not in os.environ, name
    assert os.environ["AWS_ACCESS_KEY_ID"] not in ("AKIAREALKEY", "testing")
    assert os.environ["AWS_SECRET_ACCESS_KEY"] not in ("real", "testing")
    assert "AWS_SESSION_TOKEN" not in os.environ
    assert os.environ["AWS_CONFIG_FILE"] == os.devnull
    assert "IDEMPOTENCY_TABLE" not in os.environ


def test_5_an_environment_left_behind_is_not_the_next_tests(median_aws):
    os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = median_aws.endpoint  # set by hand, never put back


def test_6_after_it_still_reaches_no_aws():
    with pytest.raises(ClientError) as refused:
        boto3.client("dynamodb").list_tables()
    assert refused.value.response["Error"]["Code"] == "UseTheMedianAwsFixture"

'''
TESTS = (
    "test_1_sets_up_a_table_and_a_secret",
    "test_2_forgot_the_fixture_and_reaches_no_aws",
    "test_3_sees_only_what_it_set_up",
    "test_4_no_real_account_is_ever_named",
    "test_5_an_environment_left_behind_is_not_the_next_tests",
    "test_6_after_it_still_reaches_no_aws",
)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> ProjectCopy:
    copy = copy_project(tmp_path_factory.mktemp("isolation") / "project")
    (copy.root / "tests" / "conftest.py").unlink()  # the template's suites' own: a project has none
    copy.write("tests/tools/test_orders.py", USERS_TESTS)
    return copy


def run(project: ProjectCopy, *selection: str) -> str:
    finished = project.run(
        "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *selection, env=A_REAL_SHELL
    )
    assert finished.returncode == 0, finished.stdout + finished.stderr
    return finished.stdout


def test_each_test_of_a_users_module_passes_in_order(project: ProjectCopy) -> None:
    # GIVEN a user's module whose tests set up AWS, forget the fixture, and ask for it again,
    # run in a shell that names a real account
    # WHEN pytest runs the module
    output = run(project, "tests/tools/test_orders.py")
    # THEN every test passes: none saw another's data, and none reached anything but moto or nothing
    assert f"{len(TESTS)} passed" in output


# The tests whose outcome an earlier test could change: what they see is theirs alone.
ORDER_SENSITIVE = (TESTS[1], TESTS[2], TESTS[5])


@pytest.mark.parametrize("name", ORDER_SENSITIVE)
def test_each_test_of_a_users_module_passes_alone(project: ProjectCopy, name: str) -> None:
    # WHEN one test runs alone
    # THEN it passes as it did in order: what it sees does not depend on what ran before it
    assert "1 passed" in run(project, f"tests/tools/test_orders.py::{name}")


def test_in_this_process_too_a_test_without_the_fixture_reaches_no_aws() -> None:
    # GIVEN a test that asked for neither median_aws nor moto
    import boto3

    # WHEN it calls AWS
    with pytest.raises(ClientError) as refused:
        boto3.client("secretsmanager").get_secret_value(SecretId="median/any")
    # THEN the call is refused at once, naming it and the fix (whether an earlier test of this run left boto3
    # pointed at median_aws's moto, which answers only the tests that ask, or at AWS itself)
    assert refused.value.response["Error"]["Code"] == ERROR_CODE
    message = refused.value.response["Error"]["Message"]
    assert message.startswith("median-lambda refused secrets-manager GetSecretValue to ")
    assert "median_aws fixture" in message
