"""Every outbound call ends, as a whole, before the time its call has left: a server that trickles its answer.

A step's timeout (botocore's read timeout, httpx's, a socket's) bounds each wait for bytes: a
server that sends its answer a byte at a time meets none of them, and runs a call into the
function's deadline. Here every such server is real, on the wire: the fault relay
(tests/fault_relay.py) passes each request to moto's server and sends its answer back a byte
every 0.2 s, under every read timeout the handler sets, so no step ever times out.

What must hold, for each outbound call the framework makes or hands a tool:
- a tool's AWS client (`ctx.aws_client`) and its HTTP calls (`timeout=ctx.http_timeout()`, in a
  sync or an async tool, with urllib, requests or httpx) end in time for the tool to answer its
  own ToolError: Median gets the tool's message, not the 504 that leaves a write in doubt;
- the Median key's read, through boto3 and through the Parameters and Secrets extension, ends
  in time for a JSON 500 no_key;
- the idempotency table's requests end in time for the answer the table's failure calls for.

"Before the deadline" is Lambda's own word for it: the fake context's time left is still above
zero when the answer comes back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import botocore.exceptions
import pytest
from median_lambda import app, tool
from median_lambda.authoring.api import ToolContext, ToolError
from median_lambda.key.source import MedianKeySource
from median_lambda.protocol import (
    DEV_KEY_ENV,
    IDEMPOTENCY_TABLE_ENV,
    KEY_SECRET_ENV,
    SECRETS_EXTENSION_PORT_ENV,
    SECRETS_EXTENSION_TOKEN_ENV,
    TOOLS_PACKAGE_ENV,
)
from median_lambda.testing import FakeLambdaContext, answer_of, call_body, signed_event
from pydantic import BaseModel

from tests.clock import SteppedClock
from tests.fault_relay import FaultRelay
from tests.support.secrets_extension import SecretsExtensionStandIn

if TYPE_CHECKING:
    from collections.abc import Callable

    from median_lambda.authoring.registry import Registry
    from median_lambda.testing import MedianAWS, MedianTestClient, TestAnswer
    from mypy_boto3_secretsmanager import SecretsManagerClient

    from tests.conftest import LogCapture

# A byte every 0.2 s: more often than any read timeout here (the table's 0.5 s is the shortest).
TRICKLE_SECONDS = 0.2
# A short function: the tool has a few seconds, a trickled answer would take over a minute.
FUNCTION_SECONDS = 5.0
STORE_DOWN = "The parcel store is not answering; try again in a minute."
CARRIER_DOWN = "The carrier is not answering; try again later."
PROJECT_ROOT = Path(__file__).resolve().parents[2]


class ParcelInput(BaseModel):
    parcel: str = "P-1"


def call_in_short_function(client: MedianTestClient, tool_name: str) -> tuple[TestAnswer, FakeLambdaContext]:
    """The tool called as Median calls it (a callId, through the idempotency table), with FUNCTION_SECONDS left."""
    context = FakeLambdaContext(timeout_seconds=FUNCTION_SECONDS)
    body = call_body(tool_name, {}, callId=f"call_{uuid.uuid4().hex}")
    return client.send(signed_event("POST", body, key=client.key), context), context


@pytest.fixture
def parcels(median_aws: MedianAWS, idempotency_table: str) -> None:
    median_aws.client("dynamodb").create_table(
        TableName="parcels",
        KeySchema=[{"AttributeName": "parcel", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "parcel", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )


def read_parcel(ctx: ToolContext, relay: FaultRelay | None = None) -> dict[str, Any]:
    """What docs/your-own-systems.md's parcelLocation does: botocore's errors become the tool's own message.

    With `relay`, its own request's answer trickles back (the table's requests before and after pass).
    """
    if relay is not None:
        relay.trickle(every_seconds=TRICKLE_SECONDS, times=1)
    try:
        row = ctx.aws_client("dynamodb").get_item(TableName="parcels", Key={"parcel": {"S": "P-1"}})
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as error:
        raise ToolError(STORE_DOWN) from error
    return {"found": "Item" in row}


def test_a_tools_aws_call_whose_answer_trickles_ends_in_the_tools_own_message(
    parcels: None,
    fault_relay: FaultRelay,
    monkeypatch: pytest.MonkeyPatch,
    scratch_registry: Registry,
    client: MedianTestClient,
) -> None:
    # GIVEN a tool reading the company's table through ctx.aws_client, the answer to its own request
    # trickling back a byte at a time, each well within botocore's read timeout
    @tool(risk="low")
    def parcel_row(args: ParcelInput, ctx: ToolContext) -> dict[str, Any]:
        """Read a parcel's row."""
        return read_parcel(ctx, fault_relay)

    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", fault_relay.endpoint)
    # WHEN the tool is called with a few seconds left
    answer, context = call_in_short_function(client, "parcelRow")
    # THEN the call was cut short in time for the tool's own message to reach Median, not a 504
    assert answer.status == 200, answer.body
    assert answer.body["error"] == {"code": "tool_error", "message": STORE_DOWN}
    assert context.get_remaining_time_in_millis() > 0


# An async tool's AWS call blocks its event loop, where only the timer reaches it: run as a Lambda
# container runs it, in a process of its own whose main thread holds no other loop (in this test
# process, the browser tests' Playwright keeps one there, and the tool's loop runs beside it).
_ASYNC_TOOL = """
import botocore.exceptions
from pydantic import BaseModel

from median_lambda import ToolContext, ToolError, tool


class ParcelInput(BaseModel):
    parcel: str = "P-1"


@tool(risk="low")
async def parcel_row(args: ParcelInput, ctx: ToolContext) -> dict:
    \"\"\"Read a parcel's row.\"\"\"
    try:
        row = ctx.aws_client("dynamodb").get_item(TableName="parcels", Key={"parcel": {"S": "P-1"}})
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as error:
        raise ToolError(%r) from error
    return {"found": "Item" in row}
"""
_CALL_IT = """
import json
from median_lambda.testing import FakeLambdaContext, MedianTestClient, call_body, signed_event

context = FakeLambdaContext(timeout_seconds=%r)
answer = MedianTestClient().send(signed_event("POST", call_body("parcelRow", {})), context)
print(json.dumps({"status": answer.status, "body": answer.body, "left": context.get_remaining_time_in_millis()}))
"""


def test_an_async_tools_aws_call_whose_answer_trickles_ends_in_the_tools_own_message(
    parcels: None, fault_relay: FaultRelay, tmp_path: Path
) -> None:
    # GIVEN an async tool reading the table through ctx.aws_client, in a container of its own
    package = tmp_path / f"async_tools_{uuid.uuid4().hex[:8]}"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "parcels.py").write_text(_ASYNC_TOOL % STORE_DOWN, encoding="utf-8")
    # AND every DynamoDB answer it gets trickling back (the container has no idempotency table)
    fault_relay.trickle(every_seconds=TRICKLE_SECONDS)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(PROJECT_ROOT)]),
        TOOLS_PACKAGE_ENV: package.name,
        "AWS_ENDPOINT_URL_DYNAMODB": fault_relay.endpoint,
    }
    env.pop(IDEMPOTENCY_TABLE_ENV, None)
    # WHEN it is called with a few seconds left
    finished = subprocess.run(  # noqa: S603 - this interpreter, this test's own script
        [sys.executable, "-c", _CALL_IT % FUNCTION_SECONDS],
        env=env,
        cwd=PROJECT_ROOT,
        capture_output=True,
        check=True,
        timeout=60,
    )
    outcome = json.loads(finished.stdout.decode().strip().rsplit("\n", 1)[-1])
    # THEN the call was cut short in time for the tool's own message, not a 504
    assert outcome["status"] == 200, outcome
    assert outcome["body"]["error"] == {"code": "tool_error", "message": STORE_DOWN}
    assert outcome["left"] > 0


def ask_with_urllib(url: str, ctx: ToolContext) -> int:
    with urllib.request.urlopen(url, timeout=ctx.http_timeout()) as response:  # noqa: S310 - the test's own relay
        response.read()
        return int(response.status)


def ask_with_requests(url: str, ctx: ToolContext) -> int:
    import requests

    return requests.get(url, timeout=ctx.http_timeout()).status_code


def ask_with_httpx(url: str, ctx: ToolContext) -> int:
    import httpx

    with httpx.Client(timeout=ctx.http_timeout()) as http:
        return http.get(url).status_code


SYNC_CLIENTS: dict[str, Callable[[str, ToolContext], int]] = {
    "urllib": ask_with_urllib,
    "requests": ask_with_requests,
    "httpx": ask_with_httpx,
}


@pytest.mark.parametrize("library", list(SYNC_CLIENTS))
def test_a_sync_tools_http_call_whose_answer_trickles_ends_in_the_tools_own_message(
    fault_relay: FaultRelay, scratch_registry: Registry, client: MedianTestClient, idempotency_table: str, library: str
) -> None:
    # GIVEN a tool calling an HTTP API with ctx.http_timeout(), catching its library's errors as it should
    import httpx
    import requests

    ask = SYNC_CLIENTS[library]

    @tool(risk="low")
    def carrier_ping(args: ParcelInput, ctx: ToolContext) -> dict[str, Any]:
        """Ask the carrier's API."""
        try:
            return {"status": ask(fault_relay.endpoint, ctx)}
        except (OSError, requests.RequestException, httpx.HTTPError) as error:
            raise ToolError(CARRIER_DOWN) from error

    # AND the API's answer trickling back a byte at a time
    fault_relay.trickle(every_seconds=TRICKLE_SECONDS)
    # WHEN the tool is called with a few seconds left
    answer, context = call_in_short_function(client, "carrierPing")
    # THEN its request was cut short in time for its own message
    assert answer.status == 200, answer.body
    assert answer.body["error"] == {"code": "tool_error", "message": CARRIER_DOWN}
    assert context.get_remaining_time_in_millis() > 0


def test_a_tool_that_logs_its_cut_calls_error_reads_why_it_ended(
    fault_relay: FaultRelay, scratch_registry: Registry, client: MedianTestClient, idempotency_table: str
) -> None:
    # GIVEN a tool that keeps its HTTP library's error for its own log line, as an author debugging the API would
    logged: list[str] = []

    @tool(risk="low")
    def carrier_ping(args: ParcelInput, ctx: ToolContext) -> dict[str, Any]:
        """Ask the carrier's API."""
        try:
            return {"status": ask_with_urllib(fault_relay.endpoint, ctx)}
        except OSError as error:
            logged.append(str(error))
            raise ToolError(CARRIER_DOWN) from error

    # AND the API's answer trickling back a byte at a time
    fault_relay.trickle(every_seconds=TRICKLE_SECONDS)
    # WHEN the tool is called with a few seconds left
    answer, _ = call_in_short_function(client, "carrierPing")
    # THEN the error it logs says the call's time for the network ran out, not that the API failed
    assert answer.body["error"] == {"code": "tool_error", "message": CARRIER_DOWN}
    said = "the time this call had for its outbound calls is up"
    assert logged == [said] or logged == [f"<urlopen error {said}>"]  # cut in the answer's body, or its headers


def test_an_async_tools_httpx_call_whose_answer_trickles_ends_in_the_tools_own_message(
    fault_relay: FaultRelay, scratch_registry: Registry, client: MedianTestClient, idempotency_table: str
) -> None:
    # GIVEN an async tool calling an HTTP API with httpx, as tools/returns.py's pickupSlots does
    @tool(risk="low")
    async def carrier_slots(args: ParcelInput, ctx: ToolContext) -> dict[str, Any]:
        """Ask the carrier's API for slots."""
        import httpx

        try:
            async with httpx.AsyncClient(base_url=fault_relay.endpoint, timeout=ctx.http_timeout()) as http:
                response = await http.get("/pickup-slots")
                return {"status": response.status_code}
        except httpx.HTTPError as error:
            raise ToolError(CARRIER_DOWN) from error

    # AND the API's answer trickling back a byte at a time
    fault_relay.trickle(every_seconds=TRICKLE_SECONDS)
    # WHEN the tool is called with a few seconds left
    answer, context = call_in_short_function(client, "carrierSlots")
    # THEN its request was cut short in time for its own message
    assert answer.status == 200, answer.body
    assert answer.body["error"] == {"code": "tool_error", "message": CARRIER_DOWN}
    assert context.get_remaining_time_in_millis() > 0


@pytest.mark.parametrize("kind", ["def", "async def"])
def test_a_tool_that_lets_its_cut_call_raise_is_answered_timeout_not_a_crash(
    fault_relay: FaultRelay, scratch_registry: Registry, client: MedianTestClient, idempotency_table: str, kind: str
) -> None:
    # GIVEN a tool that does not catch its HTTP library's errors, plain or async
    if kind == "def":

        @tool(risk="high")
        def post_refund(args: ParcelInput, ctx: ToolContext) -> dict[str, Any]:
            """Post a refund to the payments API."""
            return {"status": ask_with_urllib(fault_relay.endpoint, ctx)}
    else:

        @tool(risk="high")
        async def post_refund(args: ParcelInput, ctx: ToolContext) -> dict[str, Any]:
            """Post a refund to the payments API."""
            import httpx

            async with httpx.AsyncClient(timeout=ctx.http_timeout()) as http:
                return {"status": (await http.post(fault_relay.endpoint)).status_code}

    # AND that API's answer trickling back
    fault_relay.trickle(every_seconds=TRICKLE_SECONDS)
    # WHEN the tool is called
    answer, context = call_in_short_function(client, "postRefund")
    # THEN the call cut short is what it is, a timeout, whose work is in doubt: not a crash of the tool's code
    assert answer.status == 504, answer.body
    assert answer.body["error"]["code"] == "timeout"
    assert "unknown whether it did its work" in answer.body["error"]["message"]
    assert context.get_remaining_time_in_millis() > 0


def test_a_tool_that_crashes_with_little_time_left_is_a_crash_not_a_timeout(
    scratch_registry: Registry, client: MedianTestClient, idempotency_table: str, logs: LogCapture
) -> None:
    # GIVEN a tool with a bug, which meets it once the time for its outbound calls is up
    import time

    from median_lambda.runtime.aws_clients import TOOL_MARGIN_SECONDS

    @tool(risk="low")
    def divide(args: ParcelInput, ctx: ToolContext) -> dict[str, Any]:
        """Divide the parcel, after some work of its own."""
        while (ctx.remaining_seconds() or 0.0) > TOOL_MARGIN_SECONDS - 0.1:
            time.sleep(0.02)
        return {"half": 1 // 0}

    context = FakeLambdaContext(timeout_seconds=FUNCTION_SECONDS)
    # WHEN it is called
    answer = client.send(signed_event("POST", call_body("divide", {}, callId="call_bug"), key=client.key), context)
    # THEN no call of its was cut short: its crash is a crash, named in the log as one, not a timeout
    assert answer.status == 500, answer.body
    assert answer.body["error"]["code"] == "internal_error"
    assert any(record["message"] == "Tool divide crashed" for record in logs.records())


def test_a_tool_still_waiting_on_its_own_code_is_not_interrupted_only_stopped(
    scratch_registry: Registry, client: MedianTestClient, idempotency_table: str
) -> None:
    # GIVEN a tool that waits on its own event past its time, hiding every exception as over-defensive code does
    import threading

    never = threading.Event()

    @tool(risk="low")
    def wait_on_own_lock(args: ParcelInput) -> dict[str, Any]:
        """Wait for work of its own."""
        try:
            never.wait(3 * FUNCTION_SECONDS)
        except Exception:  # the over-defensive code under test
            return {"madeUp": True}
        return {"madeUp": False}

    # WHEN it is called
    answer, _ = call_in_short_function(client, "waitOnOwnLock")
    # THEN nothing interrupted its own code for it to swallow: it was stopped, and answered 504
    assert answer.status == 504, answer.body


# --- The Median key -------------------------------------------------------------------------------

KEY = "mk_live_whole_call_0123456789"


@pytest.fixture
def key_behind(
    secrets: SecretsManagerClient, fault_relay: FaultRelay, clean_env: pytest.MonkeyPatch
) -> Callable[[FaultRelay | None], str]:
    """A new container whose key is in a secret of this test's, read by boto3 through `fault_relay`."""
    secret_id = f"median/whole-call-{uuid.uuid4().hex[:8]}"
    secrets.create_secret(Name=secret_id, SecretString=KEY)
    clean_env.setenv(KEY_SECRET_ENV, secret_id)
    clean_env.delenv(DEV_KEY_ENV, raising=False)
    clean_env.setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", fault_relay.endpoint)
    clean_env.setattr(app, "key_source", MedianKeySource(clock=SteppedClock()))

    def through_extension(line: FaultRelay | None) -> str:
        if line is not None:
            clean_env.setenv(SECRETS_EXTENSION_PORT_ENV, str(line.port))
            clean_env.setenv(SECRETS_EXTENSION_TOKEN_ENV, "session-token")
        return secret_id

    return through_extension


def get_in_short_function(seconds: float) -> tuple[TestAnswer, FakeLambdaContext]:
    context = FakeLambdaContext(timeout_seconds=seconds)
    return answer_of(app.lambda_handler(signed_event("GET", key=KEY), context)), context  # type: ignore[arg-type]


def test_a_key_read_whose_answer_trickles_is_a_json_no_key_before_the_deadline(
    key_behind: Callable[[FaultRelay | None], str], fault_relay: FaultRelay
) -> None:
    # GIVEN a cold container, Secrets Manager trickling its answer, and a function with 3 s
    key_behind(None)
    fault_relay.trickle(every_seconds=TRICKLE_SECONDS)
    # WHEN Median's GET arrives
    answer, context = get_in_short_function(3.0)
    # THEN the function answers its own 500 no_key, in JSON, before Lambda's deadline would answer for it
    assert answer.status == 500
    no_key = {"code": "no_key", "message": "The server has no usable Median key to verify with."}
    assert answer.body == {"error": no_key}
    assert context.get_remaining_time_in_millis() > 0


def test_a_key_read_through_a_trickling_extension_falls_back_in_time_and_serves(
    key_behind: Callable[[FaultRelay | None], str], moto_endpoint: str, client: MedianTestClient
) -> None:
    # GIVEN the extension's answers trickling in, Secrets Manager itself answering, and a function with 8 s
    with (
        SecretsExtensionStandIn(moto_endpoint, "session-token", ttl_seconds=0) as extension,
        FaultRelay("127.0.0.1", extension.port) as line,
    ):
        key_behind(line)
        line.trickle(every_seconds=TRICKLE_SECONDS)
        # WHEN Median's GET arrives
        answer, context = get_in_short_function(8.0)
    # THEN the extension's read was given up in time, boto3 read the key, and the manifest was served
    assert answer.status == 200, answer.body
    assert context.get_remaining_time_in_millis() > 0


def test_a_key_read_with_both_ways_trickling_is_a_json_no_key_before_the_deadline(
    key_behind: Callable[[FaultRelay | None], str], fault_relay: FaultRelay, moto_endpoint: str
) -> None:
    # GIVEN the extension's answers and Secrets Manager's both trickling, and a function with 3 s
    with (
        SecretsExtensionStandIn(moto_endpoint, "session-token", ttl_seconds=0) as extension,
        FaultRelay("127.0.0.1", extension.port) as line,
    ):
        key_behind(line)
        line.trickle(every_seconds=TRICKLE_SECONDS)
        fault_relay.trickle(every_seconds=TRICKLE_SECONDS)
        # WHEN Median's GET arrives
        answer, context = get_in_short_function(3.0)
    # THEN the function still answers its own JSON 500 no_key before the deadline
    assert answer.status == 500
    assert answer.body["error"]["code"] == "no_key"
    assert context.get_remaining_time_in_millis() > 0


# --- The idempotency table ------------------------------------------------------------------------


def test_a_table_whose_answers_trickle_is_a_500_before_the_deadline_and_the_tool_never_ran(
    fault_relay: FaultRelay,
    monkeypatch: pytest.MonkeyPatch,
    scratch_registry: Registry,
    client: MedianTestClient,
    idempotency_table: str,
) -> None:
    # GIVEN a tool, and the idempotency table's answers trickling back under its 0.5 s read timeout
    runs: list[str] = []

    @tool(risk="high")
    def refund(args: ParcelInput) -> dict[str, Any]:
        """Refund a parcel."""
        runs.append(args.parcel)
        return {"refunded": True}

    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", fault_relay.endpoint)
    fault_relay.trickle(every_seconds=TRICKLE_SECONDS)
    # WHEN the tool is called
    answer, context = call_in_short_function(client, "refund")
    # THEN the in-progress write was given up in the time kept for it: a 500 saying the tool did not run
    assert answer.status == 500, answer.body
    assert "did not run it; retry" in answer.body["error"]["message"]
    assert runs == []
    assert context.get_remaining_time_in_millis() > 0


def test_an_answer_leaves_no_limit_armed_behind(
    parcels: None, scratch_registry: Registry, client: MedianTestClient
) -> None:
    # GIVEN a tool whose AWS call answered in time
    import signal

    @tool(risk="low")
    def parcel_row(args: ParcelInput, ctx: ToolContext) -> dict[str, Any]:
        """Read a parcel's row."""
        return read_parcel(ctx)

    # WHEN it is called
    answer, _ = call_in_short_function(client, "parcelRow")
    # THEN it answered, and no timer is left to interrupt whatever the container runs next
    assert answer.body["output"] == {"found": False}, json.dumps(answer.body)
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


# --- A tool's own secret --------------------------------------------------------------------------


def test_a_tools_secret_whose_answer_trickles_is_a_504_before_the_deadline_and_the_tool_never_ran(
    median_aws: MedianAWS,
    fault_relay: FaultRelay,
    monkeypatch: pytest.MonkeyPatch,
    scratch_registry: Registry,
    client: MedianTestClient,
    idempotency_table: str,
) -> None:
    # GIVEN a tool taking a secret whose every answer trickles back from Secrets Manager
    from median_lambda import Secret

    median_aws.create_secret("median-tools/carrier-token", "token")
    monkeypatch.setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", fault_relay.endpoint)
    fault_relay.trickle(every_seconds=TRICKLE_SECONDS)
    runs: list[str] = []

    @tool(risk="low")
    def with_token(args: ParcelInput, token: str = Secret("median-tools/carrier-token")) -> dict[str, Any]:
        """Use the carrier's token."""
        runs.append(token)
        return {}

    # WHEN the tool is called with a few seconds left
    answer, context = call_in_short_function(client, "withToken")
    # THEN the read ended in the call's time: the tool did not run, and Median is told to retry
    assert answer.status == 504, answer.body
    assert "so the tool did not run; retry" in answer.body["error"]["message"]
    assert runs == []
    assert context.get_remaining_time_in_millis() > 0
