"""AWS for a tool's tests: moto's server as the `median_aws` fixture gives it, and a fresh container's caches."""

from __future__ import annotations

import functools
import os
import sys
from typing import Any, Protocol

from median_lambda.protocol import IDEMPOTENCY_TABLE_ENV, INITIALIZATION_TYPE_ENV, PROVISIONED_INITIALIZATION

# The idempotency table as template.yaml makes it (IdempotencyTable), and Powertools' DynamoDB
# persistence layer reads it by default: the callId's record under `id`, dropped after `expiration`.
# tests/integration/test_retry_in_a_users_test.py holds the two in step.
IDEMPOTENCY_KEY_ATTRIBUTE = "id"
IDEMPOTENCY_TTL_ATTRIBUTE = "expiration"


class Environment(Protocol):
    """What a test's environment changes go through, and are put back by: pytest's MonkeyPatch."""

    def setenv(self, name: str, value: str, prepend: str | None = None) -> None: ...


class MedianAWS:
    """What the `median_aws` pytest fixture gives a test: moto's server, and boto3 pointed at it.

        def test_reads_the_table(median_aws):
            median_aws.client("dynamodb").create_table(...)
            median_aws.create_secret("median-tools/carrier-token", "t0k3n")
            answer = MedianTestClient().call("parcelStatus", {"parcel": "P-1"})

    The tool's `ctx.aws_client(...)`, `Secret(...)` and `Parameter(...)` reach the same server
    through AWS_ENDPOINT_URL, with the run's credential (which moto's server answers alone) and a
    region, for this test alone.
    """

    REGION = "us-east-1"
    IDEMPOTENCY_TABLE = "median-tools-idempotency"

    def __init__(self, endpoint: str, environment: Environment | None = None, *, region: str = REGION) -> None:
        self.endpoint = endpoint
        self.region = region
        self._environment = environment

    def client(self, service: str) -> Any:
        """A boto3 client for `service`, on moto's server, for the test's own setup and checks, signed with the
        run's credential whatever the environment holds: `MedianAWS(median_aws_endpoint).client(...)` serves a
        fixture of wider scope too.

        Made once per server, region and service, and shared by the tests of a run: making one costs
        ~25 ms (botocore reads the service's model anew for each), a suite's whole second over a few
        dozen tests. Only the test's own: the handler's and the tools' clients are forgotten after each test.
        """
        return _client(self.endpoint, self.region, service)

    def create_secret(self, name: str, value: str) -> str:
        """A secret holding `value` (a SecretString); its ARN."""
        return str(self.client("secretsmanager").create_secret(Name=name, SecretString=value)["ARN"])

    def put_parameter(self, name: str, value: str, *, secure: bool = True) -> None:
        """A parameter holding `value`: a SecureString unless `secure=False` (a String)."""
        kind = "SecureString" if secure else "String"
        self.client("ssm").put_parameter(Name=name, Value=value, Type=kind, Overwrite=True)

    def create_idempotency_table(self, name: str) -> str:
        """A table shaped as template.yaml's IdempotencyTable (key `id`, TTL `expiration`); its name."""
        dynamodb = self.client("dynamodb")
        dynamodb.create_table(
            TableName=name,
            KeySchema=[{"AttributeName": IDEMPOTENCY_KEY_ATTRIBUTE, "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": IDEMPOTENCY_KEY_ATTRIBUTE, "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        dynamodb.update_time_to_live(
            TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": IDEMPOTENCY_TTL_ATTRIBUTE}
        )
        return name

    def idempotency_table(self, name: str = IDEMPOTENCY_TABLE) -> str:
        """Run this test's calls as deployed: with the idempotency table, so a call with a callId runs its
        tool at most once and a retry gets the recorded answer. Its name, in IDEMPOTENCY_TABLE until the test ends.

            def test_a_retried_credit_is_credited_once(median_aws):
                median_aws.idempotency_table()
                client = MedianTestClient()
                first = client.call("issueStoreCredit", {...})
                again = client.retry()  # the same body and callId, as Median retries
        """
        if self._environment is None:
            raise RuntimeError("idempotency_table() needs the median_aws fixture, which puts the environment back")
        self.create_idempotency_table(name)
        self._environment.setenv(IDEMPOTENCY_TABLE_ENV, name)
        forget_what_a_container_keeps()  # the handler reads IDEMPOTENCY_TABLE once per container
        return name

    def reset(self) -> None:
        """Empty moto's server (every table, secret and parameter) and forget what the handler keeps per container."""
        from urllib.request import Request, urlopen

        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import EnvProvider

        # Signed as each of its clients' calls is, with the credential in the environment: the server
        # answers its run's credential alone, moto's own reset included (median_lambda/testing/moto_server.py).
        # The environment's provider alone, not boto3's whole chain: ~6 ms a test less, and what
        # the fixture points boto3 at is always there.
        credentials = EnvProvider().load()
        if credentials is None:
            raise RuntimeError("reset() signs with the credential in the environment, and there is none")
        url = f"{self.endpoint}/moto-api/reset"
        reset = AWSRequest(method="POST", url=url, data=b"")
        SigV4Auth(credentials.get_frozen_credentials(), "moto-api", self.region).add_auth(reset)
        request = Request(url, data=b"", method="POST", headers=dict(reset.headers.items()))  # noqa: S310 - loopback
        with urlopen(request, timeout=10):  # noqa: S310 - moto's own loopback URL
            pass
        forget_what_a_container_keeps()


@functools.cache
def _client(endpoint: str, region: str, service: str) -> Any:
    import boto3

    from median_lambda.testing.no_aws import run_credentials

    # The run's credential, which moto's server answers alone, in a session of its own: whatever the environment
    # holds (a conftest's fake keys), and whatever boto3's default session first read (another test's).
    credentials = run_credentials()
    session = boto3.session.Session(
        aws_access_key_id=credentials.access_key_id,
        aws_secret_access_key=credentials.secret_access_key,
        region_name=region,
    )
    return session.client(service, endpoint_url=endpoint)  # type: ignore[call-overload]


def forget_what_a_container_keeps() -> None:
    """Drop every per-container cache: settings, secrets, parameters, AWS clients, the idempotency table's
    client, the Median key with its client, metrics recorded but not yet flushed, whether the
    container has served an invocation (its next one logs `cold_start: true`, and its first metrics
    come with Powertools' ColdStart metric), and whether it has said that SIGALRM is another's.

    A test then sees its own environment, files and AWS, as a fresh container would: a client kept
    from an earlier pytest session in the same process (mutmut runs several) would still point at
    that session's moto server, long stopped.
    """
    from median_lambda.authoring.dependencies import forget_secrets
    from median_lambda.authoring.settings import forget_configuration
    from median_lambda.calls.idempotency import forget_clients as forget_idempotency_clients
    from median_lambda.runtime.aws_clients import forget_tool_clients
    from median_lambda.runtime.env import forget_settings
    from median_lambda.runtime.observability import forget_invocations, forget_unflushed_metrics
    from median_lambda.runtime.time_limits import forget_what_was_said

    forget_configuration()
    forget_secrets()
    forget_tool_clients()
    forget_idempotency_clients()
    forget_settings()
    forget_unflushed_metrics()
    forget_invocations()
    forget_what_was_said()
    if "aws_lambda_powertools.metrics.provider.cold_start" in sys.modules:
        # Powertools' own flag, which its log_metrics reads before it publishes ColdStart: reset as its Metrics
        # guide's test fixture resets it (read at its import, where not yet imported: nothing to reset).
        from aws_lambda_powertools.metrics.provider import cold_start

        cold_start.is_cold_start = os.environ.get(INITIALIZATION_TYPE_ENV) != PROVISIONED_INITIALIZATION
    entry_point = sys.modules.get("median_lambda.app")
    if entry_point is not None:  # not imported for this alone: a test that never called the handler has no key
        entry_point.key_source.forget()
