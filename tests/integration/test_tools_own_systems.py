"""A tool's own secret, parameter, AWS client and HTTP call, on moto's server over HTTP, with faults on the wire."""

from __future__ import annotations

import json
import urllib.request
from typing import TYPE_CHECKING, Any

import botocore.exceptions
import pytest
from median_lambda import Parameter, Secret, Settings, ToolContext, ToolError, tool
from median_lambda.authoring import dependencies as tool_secrets
from median_lambda.testing import FakeLambdaContext, MedianAWS, call_body, signed_event
from pydantic import BaseModel

from tests.clock import SteppedClock
from tests.fault_relay import Fault
from tests.support.secrets_extension import SecretsExtensionStandIn

if TYPE_CHECKING:
    from collections.abc import Callable

    from median_lambda.authoring.registry import Registry
    from median_lambda.testing import MedianTestClient, TestAnswer

    from tests.conftest import LogCapture
    from tests.fault_relay import FaultRelay

TOKEN = "carrier-token-value-7f3a"  # a secret's value: no answer or log line may carry it
SECRET_NAME = "median-tools/carrier-token"


class ParcelInput(BaseModel):
    parcel: str = "P-1"


class TableSettings(Settings):
    parcels_table: str


def register_token_tool(declared: Any, runs: list[str]) -> None:
    @tool(risk="low")
    def parcel_status(args: ParcelInput, token: str = declared) -> dict[str, Any]:
        """Tell where a parcel is."""
        runs.append(token)
        return {"tokenLength": len(token)}


@pytest.fixture
def runs(scratch_registry: Registry) -> list[str]:
    return []


def test_a_secret_named_in_the_signature_reaches_the_tool(
    median_aws: MedianAWS, runs: list[str], client: MedianTestClient
) -> None:
    # GIVEN a secret in Secrets Manager, and a tool that names it
    median_aws.create_secret(SECRET_NAME, TOKEN)
    register_token_tool(Secret(SECRET_NAME), runs)
    # WHEN the tool is called
    answer = client.call("parcelStatus", {})
    # THEN it ran with the secret's value
    assert answer.status == 200, answer.body
    assert runs == [TOKEN]


def test_a_secrets_json_member_and_a_secure_parameter_reach_the_tool(
    median_aws: MedianAWS, runs: list[str], client: MedianTestClient, scratch_registry: Registry
) -> None:
    # GIVEN a JSON secret and a SecureString parameter
    median_aws.create_secret("median-tools/warehouse", json.dumps({"user": "tools", "password": TOKEN}))
    median_aws.put_parameter("/median-tools/carrier/base-url", "https://carrier.example")

    @tool(risk="low")
    def stock(
        args: ParcelInput,
        password: str = Secret("median-tools/warehouse", field="password"),
        base_url: str = Parameter("/median-tools/carrier/base-url"),
    ) -> dict[str, Any]:
        """Tell the stock."""
        return {"password": password == TOKEN, "baseUrl": base_url}

    # WHEN the tool is called
    answer = client.call("stock", {})
    # THEN each value was read as declared
    assert answer.body["output"] == {"password": True, "baseUrl": "https://carrier.example"}


def test_a_secret_named_by_a_setting(
    median_aws: MedianAWS, runs: list[str], client: MedianTestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a secret whose name is configuration (here, an override's; settings.toml per stage in a project)
    median_aws.create_secret("median-tools-staging/carrier-token", TOKEN)
    monkeypatch.setenv("MEDIAN_SETTING_CARRIER_TOKEN_SECRET", "median-tools-staging/carrier-token")
    register_token_tool(Secret(setting="CARRIER_TOKEN_SECRET"), runs)
    # WHEN the tool is called
    answer = client.call("parcelStatus", {})
    # THEN the secret named there was read
    assert answer.status == 200
    assert runs == [TOKEN]


def _secret_missing(aws: MedianAWS, relay: FaultRelay, patch: pytest.MonkeyPatch) -> None:
    pass


def _secret_binary(aws: MedianAWS, relay: FaultRelay, patch: pytest.MonkeyPatch) -> None:
    aws.client("secretsmanager").create_secret(Name=SECRET_NAME, SecretBinary=TOKEN.encode())


def _access_denied(aws: MedianAWS, relay: FaultRelay, patch: pytest.MonkeyPatch) -> None:
    aws.create_secret(SECRET_NAME, TOKEN)
    patch.setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", relay.endpoint)
    relay.answer_with_error("AccessDeniedException", "not authorized to perform secretsmanager:GetSecretValue")


def _unreachable(aws: MedianAWS, relay: FaultRelay, patch: pytest.MonkeyPatch) -> None:
    aws.create_secret(SECRET_NAME, TOKEN)
    patch.setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", relay.endpoint)
    relay.fail(Fault.REFUSE)


@pytest.mark.parametrize(
    ("breaks", "cause"),
    [
        pytest.param(_secret_missing, "ResourceNotFoundException", id="no such secret"),
        pytest.param(_secret_binary, "SecretBinary", id="a binary secret"),
        pytest.param(_access_denied, "AccessDeniedException", id="access denied"),
        # Refused anew, or reset on a connection kept open: botocore names either.
        pytest.param(
            _unreachable, ("EndpointConnectionError", "ConnectionClosedError"), id="Secrets Manager unreachable"
        ),
    ],
)
def test_a_secret_that_cannot_be_read_is_a_500_the_tool_never_ran_and_the_log_names_it(
    median_aws: MedianAWS,
    fault_relay: FaultRelay,
    monkeypatch: pytest.MonkeyPatch,
    runs: list[str],
    client: MedianTestClient,
    logs: LogCapture,
    breaks: Callable[[MedianAWS, FaultRelay, pytest.MonkeyPatch], None],
    cause: str | tuple[str, ...],
) -> None:
    # GIVEN a tool whose secret cannot be read, for one of the reasons a deploy meets
    breaks(median_aws, fault_relay, monkeypatch)
    register_token_tool(Secret(SECRET_NAME), runs)
    # WHEN the tool is called
    answer = client.call("parcelStatus", {})
    # THEN Median gets internal_error saying the tool did not run and to retry; the tool did not run
    assert answer.status == 500
    assert answer.body["error"]["code"] == "internal_error"
    message = answer.body["error"]["message"]
    assert "could not read its configuration or secrets, so it did not run; retry" in message
    assert runs == []
    # AND the log names the tool, the secret and the cause, and never the value
    [record] = [record for record in logs.records() if "did not run" in record["message"]]
    assert "parcelStatus" in record["message"]
    assert SECRET_NAME in record["cause"]
    assert any(each in record["cause"] for each in ((cause,) if isinstance(cause, str) else cause))
    assert TOKEN not in logs.text()
    assert TOKEN not in json.dumps(answer.body)


def test_a_parameter_that_does_not_exist_is_a_500_naming_it(
    median_aws: MedianAWS, runs: list[str], client: MedianTestClient, logs: LogCapture
) -> None:
    # GIVEN a tool taking a parameter nobody has put
    register_token_tool(Parameter("/median-tools/carrier/base-url"), runs)
    # WHEN the tool is called
    answer = client.call("parcelStatus", {})
    # THEN the tool did not run, and the log names the parameter and Parameter Store's reason
    assert answer.status == 500
    assert runs == []
    [record] = [record for record in logs.records() if "did not run" in record["message"]]
    assert "/median-tools/carrier/base-url" in record["cause"]
    assert "ParameterNotFound" in record["cause"]


def test_a_read_secret_is_kept_through_an_outage_and_a_failure_is_remembered_for_the_floor(
    median_aws: MedianAWS,
    fault_relay: FaultRelay,
    monkeypatch: pytest.MonkeyPatch,
    runs: list[str],
    client: MedianTestClient,
) -> None:
    # GIVEN a secret read once, through a relay, on a clock the test steps
    clock = SteppedClock()
    monkeypatch.setattr(tool_secrets.stores, "clock", clock)
    monkeypatch.setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", fault_relay.endpoint)
    median_aws.create_secret(SECRET_NAME, TOKEN)
    register_token_tool(Secret(SECRET_NAME, cache_seconds=60), runs)
    assert client.call("parcelStatus", {}).status == 200
    # WHEN Secrets Manager becomes unreachable and the cache lifetime passes
    fault_relay.fail(Fault.RESET)
    clock.advance(61)
    kept = client.call("parcelStatus", {})
    # THEN calls go on with the value read before
    assert kept.status == 200
    assert runs == [TOKEN, TOKEN]
    # AND no read is tried again within the floor: the relay lets the next one through, the value is the same
    fault_relay.fail(Fault.NONE)
    median_aws.client("secretsmanager").put_secret_value(SecretId=SECRET_NAME, SecretString="rotated")
    clock.advance(tool_secrets.MIN_REFRESH_SECONDS - 1)
    assert client.call("parcelStatus", {}).status == 200
    assert runs[-1] == TOKEN
    # AND past the floor, the next call reads the rotated value
    clock.advance(2)
    assert client.call("parcelStatus", {}).status == 200
    assert runs[-1] == "rotated"


def test_a_secret_is_read_once_in_its_cache_lifetime_however_often_it_is_called(
    median_aws: MedianAWS, monkeypatch: pytest.MonkeyPatch, runs: list[str], client: MedianTestClient
) -> None:
    # GIVEN a secret kept for its default lifetime, read by a first call, on a clock the test steps
    clock = SteppedClock()
    monkeypatch.setattr(tool_secrets.stores, "clock", clock)
    median_aws.create_secret(SECRET_NAME, TOKEN)
    register_token_tool(Secret(SECRET_NAME), runs)
    assert client.call("parcelStatus", {}).status == 200
    # WHEN the secret changes, and calls come each past the refresh floor, all within the lifetime
    median_aws.client("secretsmanager").put_secret_value(SecretId=SECRET_NAME, SecretString="rotated")
    step = tool_secrets.MIN_REFRESH_SECONDS + 1
    assert 3 * step < tool_secrets.DEFAULT_CACHE_SECONDS
    for _ in range(3):
        clock.advance(step)
        assert client.call("parcelStatus", {}).status == 200
    # THEN each ran with the value read first: within its lifetime a value costs no read
    assert runs == [TOKEN] * 4
    # AND past the lifetime, the next call reads the new value
    clock.advance(tool_secrets.DEFAULT_CACHE_SECONDS - 3 * step)
    assert client.call("parcelStatus", {}).status == 200
    assert runs[-1] == "rotated"


def test_a_missing_secret_costs_at_most_one_read_per_floor(
    median_aws: MedianAWS, monkeypatch: pytest.MonkeyPatch, runs: list[str], client: MedianTestClient
) -> None:
    # GIVEN a tool whose secret does not exist yet, called once
    clock = SteppedClock()
    monkeypatch.setattr(tool_secrets.stores, "clock", clock)
    register_token_tool(Secret(SECRET_NAME), runs)
    assert client.call("parcelStatus", {}).status == 500
    # WHEN the secret is created, and the tool called again within the refresh floor
    median_aws.create_secret(SECRET_NAME, TOKEN)
    again = client.call("parcelStatus", {})
    # THEN the failure is answered from memory: no read until the floor has passed
    assert again.status == 500
    clock.advance(tool_secrets.MIN_REFRESH_SECONDS)
    assert client.call("parcelStatus", {}).status == 200
    assert runs == [TOKEN]


def test_a_secret_and_a_parameter_are_read_through_the_extension_when_it_is_on(
    median_aws: MedianAWS, monkeypatch: pytest.MonkeyPatch, runs: list[str], client: MedianTestClient
) -> None:
    # GIVEN the Parameters and Secrets extension (a stand-in reading moto), and a secret and a parameter
    median_aws.create_secret(SECRET_NAME, TOKEN)
    median_aws.put_parameter("/median-tools/region", "eu-west-1", secure=False)
    with SecretsExtensionStandIn(median_aws.endpoint, token="session-token", ttl_seconds=0) as extension:
        monkeypatch.setenv("PARAMETERS_SECRETS_EXTENSION_HTTP_PORT", str(extension.port))
        monkeypatch.setenv("AWS_SESSION_TOKEN", "session-token")

        @tool(risk="low")
        def parcel_region(
            args: ParcelInput,
            token: str = Secret(SECRET_NAME),
            region: str = Parameter("/median-tools/region"),
        ) -> dict[str, Any]:
            """Tell a parcel's region."""
            return {"token": token == TOKEN, "region": region}

        # WHEN the tool is called
        answer = client.call("parcelRegion", {})
        # THEN both came through the extension, one read each
        assert answer.body["output"] == {"token": True, "region": "eu-west-1"}
        assert extension.reads == 2


def test_an_extension_that_gives_nothing_falls_back_to_boto3_and_says_so_once(
    median_aws: MedianAWS,
    monkeypatch: pytest.MonkeyPatch,
    runs: list[str],
    client: MedianTestClient,
    closed_port: int,
    logs: LogCapture,
) -> None:
    # GIVEN the extension switched on, but nothing listening on its port
    median_aws.create_secret(SECRET_NAME, TOKEN)
    monkeypatch.setenv("PARAMETERS_SECRETS_EXTENSION_HTTP_PORT", str(closed_port))
    monkeypatch.setenv("AWS_SESSION_TOKEN", "session-token")
    register_token_tool(Secret(SECRET_NAME, cache_seconds=0), runs)
    clock = SteppedClock()
    monkeypatch.setattr(tool_secrets.stores, "clock", clock)
    # WHEN the tool is called twice, each time past the refresh floor so that each reads anew
    answers = [client.call("parcelStatus", {})]
    clock.advance(tool_secrets.MIN_REFRESH_SECONDS)
    answers.append(client.call("parcelStatus", {}))
    # THEN both calls run with the secret, read through boto3
    assert [answer.status for answer in answers] == [200, 200]
    assert runs == [TOKEN, TOKEN]
    # AND the operator reads the cause once, not once per call
    warnings = [
        record for record in logs.records() if "Parameters and Secrets Extension gave no value" in record["message"]
    ]
    assert len(warnings) == 1
    assert "could not be reached" in warnings[0]["cause"]


def test_a_secret_read_that_outlasts_the_call_is_a_504_and_the_tool_never_ran(
    median_aws: MedianAWS,
    fault_relay: FaultRelay,
    monkeypatch: pytest.MonkeyPatch,
    runs: list[str],
    client: MedianTestClient,
) -> None:
    # GIVEN a tool whose secret sits behind a stalled Secrets Manager, and a call with little time left
    median_aws.create_secret(SECRET_NAME, TOKEN)
    monkeypatch.setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", fault_relay.endpoint)
    fault_relay.fail(Fault.STALL)
    register_token_tool(Secret(SECRET_NAME), runs)
    # WHEN the tool is called
    answer = _call_within(client, "parcelStatus", seconds=2)
    # THEN the function answers in its own time: a 504 that says the tool did not run, to retry
    assert answer.status == 504
    assert answer.body["error"]["code"] == "timeout"
    assert "so the tool did not run; retry" in answer.body["error"]["message"]
    assert runs == []


@pytest.fixture
def secret_behind_relay(
    median_aws: MedianAWS, fault_relay: FaultRelay, monkeypatch: pytest.MonkeyPatch, runs: list[str]
) -> SteppedClock:
    """The token tool's secret, read through the fault relay, kept by a clock the test steps."""
    clock = SteppedClock()
    monkeypatch.setattr(tool_secrets.stores, "clock", clock)
    median_aws.create_secret(SECRET_NAME, TOKEN)
    monkeypatch.setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", fault_relay.endpoint)
    register_token_tool(Secret(SECRET_NAME), runs)
    return clock


def _cause_the_tool_did_not_run_for(logs: LogCapture) -> str:
    did_not_run = "Tool parcelStatus did not run: what it takes could not be read"
    [record] = [r for r in logs.records() if r["message"] == did_not_run]
    cause: str = record["cause"]
    return cause


def test_a_call_soon_after_a_read_that_did_not_finish_says_so_and_when_it_is_read_again(
    secret_behind_relay: SteppedClock,
    fault_relay: FaultRelay,
    runs: list[str],
    client: MedianTestClient,
    logs: LogCapture,
) -> None:
    # GIVEN a call whose secret read was cut short by its deadline (Secrets Manager stalled)
    fault_relay.fail(Fault.STALL)
    assert _call_within(client, "parcelStatus", seconds=1).status == 504
    # WHEN the next call comes within the refresh floor, while that read still waits on the wire
    answer = client.call("parcelStatus", {})
    # THEN it is a 500, the tool never ran, and the log gives the cause an operator can act on: when it is read again
    assert answer.status == 500
    assert runs == []
    floor = f"{tool_secrets.MIN_REFRESH_SECONDS:g}"
    assert _cause_the_tool_did_not_run_for(logs) == f"its last read did not finish; it is read again {floor} s after"


def test_a_value_past_its_stale_bound_is_refused_as_too_old_when_no_read_since_has_finished(
    secret_behind_relay: SteppedClock,
    fault_relay: FaultRelay,
    runs: list[str],
    client: MedianTestClient,
    logs: LogCapture,
) -> None:
    # GIVEN a secret read once, then, past its lifetime and the stale bound, a read cut short by a stalled network
    assert client.call("parcelStatus", {}).status == 200
    secret_behind_relay.advance(tool_secrets.DEFAULT_CACHE_SECONDS + tool_secrets.STALE_IF_ERROR_SECONDS)
    fault_relay.fail(Fault.STALL)
    assert _call_within(client, "parcelStatus", seconds=1).status == 504
    # WHEN the next call comes within the refresh floor
    answer = client.call("parcelStatus", {})
    # THEN the value read before is not used, and the log says it is too old and could not be read since
    assert answer.status == 500
    assert runs == [TOKEN]
    assert _cause_the_tool_did_not_run_for(logs) == (
        "the value read before is too old, and it could not be read again since"
    )


def _call_within(client: MedianTestClient, tool_name: str, seconds: float) -> TestAnswer:
    body = call_body(tool_name, {})
    return client.send(signed_event("POST", body, key=client.key), FakeLambdaContext(timeout_seconds=seconds))


@pytest.mark.parametrize("fault", [Fault.STALL, Fault.SWALLOW, Fault.RESET], ids=lambda fault: fault.value)
def test_a_stuck_aws_backend_ends_in_the_tools_own_tool_error_before_the_deadline(
    median_aws: MedianAWS,
    fault_relay: FaultRelay,
    monkeypatch: pytest.MonkeyPatch,
    scratch_registry: Registry,
    client: MedianTestClient,
    fault: Fault,
) -> None:
    # GIVEN a tool reading the company's DynamoDB table through ctx.aws_client, catching botocore's errors
    median_aws.client("dynamodb").create_table(
        TableName="parcels",
        KeySchema=[{"AttributeName": "parcel", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "parcel", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )

    @tool(risk="low")
    def parcel_row(args: ParcelInput, ctx: ToolContext) -> dict[str, Any]:
        """Read a parcel's row."""
        try:
            item = ctx.aws_client("dynamodb").get_item(TableName="parcels", Key={"parcel": {"S": args.parcel}})
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as error:
            raise ToolError("The parcel store is not answering; try again in a minute.") from error
        return {"found": "Item" in item}

    # AND the table's endpoint stuck on the wire, with a function that has a few seconds left
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", fault_relay.endpoint)
    fault_relay.fail(fault)
    # WHEN the tool is called
    answer = _call_within(client, "parcelRow", seconds=5)
    # THEN botocore gave up in the time the call had, and Median gets the tool's own message, not a 504
    assert answer.status == 200, answer.body
    assert answer.body["error"] == {
        "code": "tool_error",
        "message": "The parcel store is not answering; try again in a minute.",
    }
    # AND with the wire healthy again, the same client answers
    fault_relay.fail(Fault.NONE)
    assert _call_within(client, "parcelRow", seconds=5).body["output"] == {"found": False}


@pytest.mark.parametrize("fault", [Fault.STALL, Fault.RESET], ids=lambda fault: fault.value)
def test_a_stuck_http_backend_ends_in_the_tools_own_tool_error_before_the_deadline(
    median_aws: MedianAWS,
    fault_relay: FaultRelay,
    scratch_registry: Registry,
    client: MedianTestClient,
    fault: Fault,
) -> None:
    # GIVEN a tool calling an HTTP API with ctx.http_timeout(), catching the timeout
    @tool(risk="low")
    def carrier_ping(args: ParcelInput, ctx: ToolContext) -> dict[str, Any]:
        """Ask the carrier's API."""
        try:
            with urllib.request.urlopen(fault_relay.endpoint, timeout=ctx.http_timeout()) as response:  # noqa: S310
                return {"status": response.status}
        except OSError as error:  # urllib's URLError, a timeout, a reset: all OSErrors
            raise ToolError("The carrier's API is not answering; try again later.") from error

    # AND the API stuck on the wire
    fault_relay.fail(fault)
    # WHEN the tool is called with a few seconds left
    answer = _call_within(client, "carrierPing", seconds=4)
    # THEN the request gave up in time, and the tool's own message reached Median
    assert answer.status == 200, answer.body
    assert answer.body["error"]["message"] == "The carrier's API is not answering; try again later."


def test_the_fixture_gives_every_test_an_empty_aws_and_fresh_caches(
    median_aws: MedianAWS, runs: list[str], client: MedianTestClient
) -> None:
    # GIVEN a secret read and cached by a tool
    median_aws.create_secret(SECRET_NAME, TOKEN)
    register_token_tool(Secret(SECRET_NAME), runs)
    assert client.call("parcelStatus", {}).status == 200
    # WHEN the fixture's reset runs, as it does before every test
    median_aws.reset()
    # THEN moto holds no secret, and the cached value is gone with it
    assert median_aws.client("secretsmanager").list_secrets()["SecretList"] == []
    assert client.call("parcelStatus", {}).status == 500


def test_a_value_set_for_one_test_is_the_one_its_tool_reads(
    monkeypatch: pytest.MonkeyPatch, scratch_registry: Registry, client: MedianTestClient
) -> None:
    # GIVEN a tool whose Settings were read at an earlier call
    monkeypatch.setenv("MEDIAN_SETTING_PARCELS_TABLE", "registered")

    @tool(risk="low")
    def table_name(args: ParcelInput, settings: TableSettings) -> dict[str, Any]:
        """Tell the table's name."""
        return {"table": settings.parcels_table}

    assert client.call("tableName", {}).body["output"] == {"table": "registered"}
    # WHEN a later test sets another value (here: the plugin's reset between tests, run by hand)
    from median_lambda.testing import forget_what_a_container_keeps

    forget_what_a_container_keeps()
    monkeypatch.setenv("MEDIAN_SETTING_PARCELS_TABLE", "this-test")
    # THEN the tool reads that test's value
    assert client.call("tableName", {}).body["output"] == {"table": "this-test"}
