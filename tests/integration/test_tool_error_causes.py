"""The exception behind a ToolError is seen: by its type and the author's line in a deployed log, in full
on the author's own machine, and never in the answer Median gets.

`raise ToolError("The order store is not answering.") from error` is how the docs say to decline a
call a backend failed: the agent reads the ToolError's message, and the operator needs the error
behind it, an AccessDenied above all (an IAM policy that does not match the tool). The family tried
here: an AWS error over HTTP (AccessDenied through the fault relay, since moto's server cannot be made
to deny; a table that does not exist, from moto's DynamoDB itself), botocore refusing a parameter
before sending it, a bug in the tool's own code, from a sync and an async tool; a ToolError raised
while handling an exception without `from` (what Python's traceback shows as its cause, so it counts),
one raised `from None` (the author said it has none), and one with no cause at all.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from botocore.exceptions import BotoCoreError, ClientError
from median_lambda import ToolContext, ToolError, diagnostics, tool
from median_lambda.testing import FakeLambdaContext, call_body, diagnostics_body, signed_event
from pydantic import BaseModel

from tests.conftest import AS_DEPLOYED, BOTH

if TYPE_CHECKING:
    from collections.abc import Callable

    from median_lambda.authoring.registry import Registry
    from median_lambda.testing import MedianAWS, MedianTestClient, TestAnswer

    from tests.conftest import LogCapture
    from tests.fault_relay import FaultRelay

# What a customer typed: the tools pass it to AWS, or trip on it, so the exceptions' messages quote it.
CUSTOMER = "ZQ-Ada-4242"
DENIAL = "is not authorized to perform: ssm:GetParameter on resource"  # the AccessDenied's own words
THIS_FILE = Path(__file__)


def line_of(marker: str) -> int:
    """The line of this file that carries `# <marker>`: where a tool below meets its cause."""
    lines = THIS_FILE.read_text(encoding="utf-8").splitlines()
    (number,) = [at for at, line in enumerate(lines, start=1) if line.rstrip().endswith(f"# {marker}")]
    return number


class Note(BaseModel):
    note: str = ""


def _carrier_for(note: str) -> str:
    return {"express": "DHL"}[note]  # cause: a bug


def register_tools() -> None:
    @tool(risk="low", name="carrierUrl")
    def carrier_url(args: Note, ctx: ToolContext) -> dict[str, Any]:
        """Read the carrier's URL from Parameter Store, with the function's role."""
        try:
            found = ctx.aws_client("ssm").get_parameter(Name=f"/acme/carriers/{args.note}")  # cause: access denied
        except ClientError as error:
            raise ToolError("The carrier directory is not answering; try again later.") from error
        return {"url": found["Parameter"]["Value"]}

    @tool(risk="low", name="orderLookup")
    async def order_lookup(args: Note, ctx: ToolContext) -> dict[str, Any]:
        """Look an order up in the company's own table."""
        try:
            orders = ctx.aws_client("dynamodb")
            orders.get_item(TableName="acme-orders", Key={"id": {"S": args.note}})  # cause: no table
        except ClientError as error:
            raise ToolError("The order store is not answering; try again later.") from error
        return {}

    @tool(risk="low", name="recentOrders")
    def recent_orders(args: Note, ctx: ToolContext) -> dict[str, Any]:
        """List recent orders, passing botocore a value of the wrong type, as a bug would."""
        try:
            ctx.aws_client("dynamodb").scan(TableName="acme-orders", Limit=args.note)  # cause: a parameter refused
        except (ClientError, BotoCoreError) as error:
            raise ToolError("The order store is not answering; try again later.") from error
        return {}

    @tool(risk="low", name="carrierName")
    def carrier_name(args: Note) -> dict[str, Any]:
        """Name the carrier of a parcel."""
        try:
            return {"carrier": _carrier_for(args.note)}
        except KeyError as error:
            raise ToolError("No carrier goes by that name.") from error

    @tool(risk="low", name="carrierNameAsync")
    async def carrier_name_async(args: Note) -> dict[str, Any]:
        """Name the carrier of a parcel, as an async tool."""
        try:
            return {"carrier": _carrier_for(args.note)}
        except KeyError as error:
            raise ToolError("No carrier goes by that name.") from error

    @tool(risk="low", name="carrierNameWithoutFrom")
    def carrier_name_without_from(args: Note) -> dict[str, Any]:
        """Name the carrier, declining from inside the handler without `from`."""
        try:
            return {"carrier": _carrier_for(args.note)}
        except KeyError:
            raise ToolError("No carrier goes by that name.")  # noqa: B904 - the case under test

    @tool(risk="low", name="carrierNameFromNone")
    def carrier_name_from_none(args: Note) -> dict[str, Any]:
        """Name the carrier, declining `from None`: the author says the KeyError is no cause."""
        try:
            return {"carrier": _carrier_for(args.note)}
        except KeyError:
            raise ToolError("No carrier goes by that name.") from None

    @tool(risk="low", name="noCarrier")
    def no_carrier(args: Note) -> dict[str, Any]:
        """Decline with nothing behind it."""
        raise ToolError("No carrier goes by that name.")

    @tool(risk="low", name="noCarrierAsync")
    async def no_carrier_async(args: Note) -> dict[str, Any]:
        """Decline with nothing behind it, awaited on the container's loop (which the framework re-raises from)."""
        raise ToolError("No carrier goes by that name.")

    @diagnostics
    def carrier_health() -> dict[str, Any]:
        try:
            return {"carrier": _carrier_for(CUSTOMER)}
        except KeyError as error:
            raise ToolError("The carrier's health is unknown.") from error


@dataclass(frozen=True)
class Cause:
    """A way a ToolError is raised from a cause, and what a person should read about it."""

    ask: Callable[[str], bytes]  # the call's body, given its callId
    declined: str  # what the log line names as declining
    message: str  # the ToolError's, all the answer carries
    cause_type: str
    marker: str  # the comment marking the author's line the cause came through
    aws: tuple[str, str] | None = None  # AWS's error code and operation
    words: str = CUSTOMER  # what the exception's own message says, which only the author's machine shows
    linked: str = "The above exception was the direct cause of the following exception:"


def _call(tool_name: str) -> Callable[[str], bytes]:
    return lambda call_id: call_body(tool_name, {"note": CUSTOMER}, callId=call_id)


CARRIER_GONE = "No carrier goes by that name."
STORE_DOWN = "The order store is not answering; try again later."
CAUSES = {
    "AccessDenied": Cause(
        _call("carrierUrl"),
        "Tool carrierUrl",
        "The carrier directory is not answering; try again later.",
        "AccessDeniedException",  # botocore's class for SSM's modelled error: a ClientError
        "cause: access denied",
        aws=("AccessDeniedException", "GetParameter"),
        words=DENIAL,
    ),
    "a table that does not exist": Cause(
        _call("orderLookup"),
        "Tool orderLookup",
        STORE_DOWN,
        "ResourceNotFoundException",
        "cause: no table",
        aws=("ResourceNotFoundException", "GetItem"),
        words="Requested resource not found",
    ),
    "a parameter botocore refuses": Cause(
        _call("recentOrders"), "Tool recentOrders", STORE_DOWN, "ParamValidationError", "cause: a parameter refused"
    ),
    "a bug in the tool": Cause(_call("carrierName"), "Tool carrierName", CARRIER_GONE, "KeyError", "cause: a bug"),
    "a bug in an async tool": Cause(
        _call("carrierNameAsync"), "Tool carrierNameAsync", CARRIER_GONE, "KeyError", "cause: a bug"
    ),
    "raised while handling it, without from": Cause(
        _call("carrierNameWithoutFrom"),
        "Tool carrierNameWithoutFrom",
        CARRIER_GONE,
        "KeyError",
        "cause: a bug",
        linked="During handling of the above exception, another exception occurred:",
    ),
    "diagnostics": Cause(
        lambda call_id: diagnostics_body(),
        "Diagnostics",
        "The carrier's health is unknown.",
        "KeyError",
        "cause: a bug",
    ),
}
NO_CAUSE = {"from None": "carrierNameFromNone", "none at all": "noCarrier", "none, async": "noCarrierAsync"}


@pytest.fixture
def tools(
    scratch_registry: Registry, median_aws: MedianAWS, fault_relay: FaultRelay, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tools above, Parameter Store behind the relay and denying (the function's role has no right to it)."""
    register_tools()
    monkeypatch.setenv("AWS_ENDPOINT_URL_SSM", fault_relay.endpoint)
    fault_relay.answer_with_error(
        "AccessDeniedException", f"User: arn:aws:sts::123456789012:assumed-role/median-tools-role/fn {DENIAL} x"
    )


@pytest.fixture
def deployed(tools: None, key_in_secrets_manager: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The function as Lambda runs it: its name set, not sam local, the key read from Secrets Manager."""
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "median-tools")
    monkeypatch.delenv("AWS_SAM_LOCAL", raising=False)


def _ask(invoke: Callable[..., TestAnswer], cause: Cause, context: FakeLambdaContext) -> TestAnswer:
    return invoke(signed_event("POST", cause.ask("call_cause_1")), context)


@pytest.mark.parametrize("configuration", BOTH, indirect=True)
@pytest.mark.parametrize("cause", list(CAUSES.values()), ids=list(CAUSES))
def test_a_deployed_function_logs_the_cause_by_type_and_line_and_the_answer_never_carries_it(
    deployed: None,
    configuration: str,  # after `tools`' median_aws, which empties moto
    invoke: Callable[..., TestAnswer],
    logs: LogCapture,
    cause: Cause,
) -> None:
    # GIVEN a deployed function whose tool declines with a ToolError raised from an exception
    context = FakeLambdaContext()
    # WHEN Median calls it
    answer = _ask(invoke, cause, context)
    # THEN the agent gets the ToolError's message, and nothing of the exception behind it
    assert (answer.status, answer.body["ok"]) == (200, False)
    assert answer.body["error"] == {"code": "tool_error", "message": cause.message}
    assert CUSTOMER not in json.dumps(answer.body) and cause.cause_type not in json.dumps(answer.body)
    # AND one line names what declined, the exception's type, AWS's code and operation, and the author's line
    origin = f"tests/integration/{THIS_FILE.name}:{line_of(cause.marker)}"
    [record] = [record for record in logs.records() if "cause_type" in record]
    code = f" {cause.aws[0]}" if cause.aws and cause.aws[0] != cause.cause_type else ""
    assert record["message"] == f"{cause.declined} declined the call, caused by {cause.cause_type}{code} at {origin}"
    assert record["level"] == "WARNING"
    assert (record["cause_type"], record["cause_origin"]) == (cause.cause_type, origin)
    assert (record.get("aws_error_code"), record.get("aws_operation")) == (cause.aws or (None, None))
    # AND it is found by the answer's reference, the request id every line of the call carries
    assert record["reference"] == record["function_request_id"] == context.aws_request_id
    # AND neither the exception's message nor the customer's input is logged or printed, nor a traceback
    printed = logs.text()  # stdout and stderr
    assert CUSTOMER not in printed and cause.words not in printed
    assert "Traceback" not in printed


@pytest.mark.parametrize("cause", list(CAUSES.values()), ids=list(CAUSES))
def test_off_lambda_the_cause_is_printed_with_its_message_and_the_authors_frames(
    tools: None, client: MedianTestClient, logs: LogCapture, cause: Cause
) -> None:
    # GIVEN the test client on the author's machine (make serve's terminal is test_devserver_crashes.py's)
    context = FakeLambdaContext()
    # WHEN the tool is called
    answer = client.send(signed_event("POST", cause.ask("call_cause_2")), context)
    printed = logs.text()  # the log on stdout, then stderr
    # THEN the answer is still the ToolError's message alone
    assert answer.body["error"] == {"code": "tool_error", "message": cause.message}
    # AND stderr says what declined, under the call's reference, with the exception, its words and the
    # author's line, then the ToolError it became
    assert f"{cause.declined} declined the call; its answer is its ToolError's message (tool_error), " in printed
    assert f"reference {context.aws_request_id}." in printed
    where = f'  File "tests/integration/{THIS_FILE.name}", line {line_of(cause.marker)}, in '
    explained = printed.split("Traceback (most recent call last):\n", 1)[1]
    assert where in explained
    assert cause.words in explained
    assert cause.linked in explained
    assert explained.rstrip().endswith(f"ToolError: {cause.message}")
    # AND no frame of the framework is shown
    assert "handler/" not in explained
    # AND the deployed log's line is written here too
    assert [record["cause_type"] for record in logs.records() if "cause_type" in record] == [cause.cause_type]


@pytest.mark.parametrize("tool_name", list(NO_CAUSE.values()), ids=list(NO_CAUSE))
def test_a_tool_error_with_no_cause_logs_and_prints_nothing(
    tools: None, client: MedianTestClient, capsys: pytest.CaptureFixture[str], tool_name: str
) -> None:
    # GIVEN a tool that declines with nothing behind its ToolError, or with `from None`
    # WHEN it is called
    answer = client.call(tool_name, {"note": CUSTOMER})
    # THEN the agent gets the message, and no cause is logged or printed
    assert answer.body["error"] == {"code": "tool_error", "message": CARRIER_GONE}
    printed = capsys.readouterr()
    assert [json.loads(line)["message"] for line in printed.out.splitlines() if '"level"' in line] == []
    assert printed.err == ""


def test_an_exception_never_raised_is_placed_at_the_tool_errors_line(
    scratch_registry: Registry, client: MedianTestClient, logs: LogCapture
) -> None:
    # GIVEN a tool that makes an exception and declines from it without ever raising it
    @tool(risk="low", name="declinesFromAMadeError")
    def declines_from_a_made_error(args: Note) -> dict[str, Any]:
        """Decline from an exception made on the spot."""
        raise ToolError("No such parcel.") from LookupError(args.note)  # cause: never raised

    # WHEN it is called
    client.call("declinesFromAMadeError", {"note": CUSTOMER})
    # THEN the cause's place is where the ToolError was raised, the only line it has
    [record] = [record for record in logs.records() if "cause_type" in record]
    assert record["cause_type"] == "LookupError"
    assert record["cause_origin"] == f"tests/integration/{THIS_FILE.name}:{line_of('cause: never raised')}"
    assert CUSTOMER not in json.dumps(record)


def test_a_tools_answered_from_its_record_logs_its_cause_once(
    deployed: None, configuration: str, invoke: Callable[..., TestAnswer], logs: LogCapture
) -> None:
    # GIVEN a deployed function (through the idempotency table) whose tool declined from a cause
    assert configuration == AS_DEPLOYED
    cause = CAUSES["a bug in the tool"]
    first = _ask(invoke, cause, FakeLambdaContext())
    # WHEN Median retries the call with its callId
    again = _ask(invoke, cause, FakeLambdaContext())
    # THEN the answer is replayed, and the cause was logged for the run alone
    assert again.body == first.body
    assert len([record for record in logs.records() if "cause_type" in record]) == 1
    assert re.search(r"declined the call, caused by KeyError at ", logs.text())


@pytest.mark.parametrize("configuration", ["as make serve"], indirect=True)
def test_an_aws_error_botocore_does_not_model_is_named_by_its_code(
    deployed: None,
    configuration: str,  # without the table: the relay denies every DynamoDB request, the table's too
    fault_relay: FaultRelay,
    monkeypatch: pytest.MonkeyPatch,
    invoke: Callable[..., TestAnswer],
    logs: LogCapture,
) -> None:
    # GIVEN a tool on the company's own table, which the function's role may not read: DynamoDB's
    # AccessDeniedException, which botocore raises as a plain ClientError
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", fault_relay.endpoint)
    fault_relay.answer_with_error("AccessDeniedException", f"User: arn:aws:sts::123456789012:assumed-role/r {DENIAL}")
    # WHEN it is called
    answer = invoke(signed_event("POST", call_body("orderLookup", {"note": CUSTOMER})), FakeLambdaContext())
    # THEN the log names the class and AWS's code, as the runbook shows it, and the operation
    assert answer.body["error"]["message"] == STORE_DOWN
    [record] = [record for record in logs.records() if "cause_type" in record]
    origin = f"tests/integration/{THIS_FILE.name}:{line_of('cause: no table')}"
    assert (
        record["message"]
        == f"Tool orderLookup declined the call, caused by ClientError AccessDeniedException at {origin}"
    )
    assert (record["aws_error_code"], record["aws_operation"]) == ("AccessDeniedException", "GetItem")
    assert DENIAL not in logs.text()
