"""AWS for a tool's tests: moto's server as the `median_aws` fixture gives it, and a fresh container's caches."""

from __future__ import annotations

import functools
import sys
from typing import Any


class MedianAWS:
    """What the `median_aws` pytest fixture gives a test: moto's server, and boto3 pointed at it.

        def test_reads_the_table(median_aws):
            median_aws.client("dynamodb").create_table(...)
            median_aws.create_secret("median-tools/carrier-token", "t0k3n")
            answer = MedianTestClient().call("parcelStatus", {"parcel": "P-1"})

    The tool's `ctx.aws_client(...)`, `Secret(...)` and `Parameter(...)` reach the same server
    through AWS_ENDPOINT_URL, with fake credentials and a region, so no test reaches AWS.
    """

    REGION = "us-east-1"

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint

    def client(self, service: str) -> Any:
        """A boto3 client for `service`, on moto's server, for the test's own setup and checks.

        Made once per server and service, and shared by the tests of a run: making one costs ~25 ms
        (botocore reads the service's model anew for each), a suite's whole second over a few dozen
        tests. Only the test's own: the handler's and the tools' clients are forgotten after each test.
        """
        return _client(self.endpoint, service)

    def create_secret(self, name: str, value: str) -> str:
        """A secret holding `value` (a SecretString); its ARN."""
        return str(self.client("secretsmanager").create_secret(Name=name, SecretString=value)["ARN"])

    def put_parameter(self, name: str, value: str, *, secure: bool = True) -> None:
        """A parameter holding `value`: a SecureString unless `secure=False` (a String)."""
        kind = "SecureString" if secure else "String"
        self.client("ssm").put_parameter(Name=name, Value=value, Type=kind, Overwrite=True)

    def reset(self) -> None:
        """Empty moto's server (every table, secret and parameter) and forget what the handler keeps per container."""
        from urllib.request import Request, urlopen

        with urlopen(Request(f"{self.endpoint}/moto-api/reset", method="POST"), timeout=10):  # noqa: S310 - moto's own loopback URL
            pass
        forget_what_a_container_keeps()


@functools.cache
def _client(endpoint: str, service: str) -> Any:
    import boto3

    return boto3.client(service, endpoint_url=endpoint, region_name=MedianAWS.REGION)  # type: ignore[call-overload]


def forget_what_a_container_keeps() -> None:
    """Drop every per-container cache: settings, secrets, parameters, AWS clients, the idempotency table's
    client, the Median key with its client, metrics recorded but not yet flushed, and whether the
    container has served an invocation (its next one logs `cold_start: true`).

    A test then sees its own environment, files and AWS, as a fresh container would: a client kept
    from an earlier pytest session in the same process (mutmut runs several) would still point at
    that session's moto server, long stopped.
    """
    from handler.authoring.dependencies import forget_secrets
    from handler.authoring.settings import forget_configuration
    from handler.calls.idempotency import forget_clients as forget_idempotency_clients
    from handler.runtime.aws_clients import forget_tool_clients
    from handler.runtime.env import forget_settings
    from handler.runtime.observability import forget_invocations, forget_unflushed_metrics

    forget_configuration()
    forget_secrets()
    forget_tool_clients()
    forget_idempotency_clients()
    forget_settings()
    forget_unflushed_metrics()
    forget_invocations()
    entry_point = sys.modules.get("handler.app")
    if entry_point is not None:  # not imported for this alone: a test that never called the handler has no key
        entry_point.key_source.forget()
