"""Your function as template.yaml deploys it, and the requests the contract suite sends it.

The fixtures that set it up are median_lambda/contract/conftest.py's.
"""

from __future__ import annotations

import dataclasses
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from median_lambda.protocol import SECRETS_EXTENSION_PORT_ENV
from median_lambda.testing import FakeLambdaContext, TestAnswer, answer_of, call_body, signed_event, translated

if TYPE_CHECKING:
    from collections.abc import Callable

    from median_lambda.authoring.registry import Tool
    from median_lambda.testing import MedianAWS, Stack

# The function and the table as template.yaml names them.
FUNCTION = "MedianToolsFunction"
IDEMPOTENCY_TABLE_VARIABLE = "IDEMPOTENCY_TABLE"
KEY_SECRET_VARIABLE = "MEDIAN_KEY_SECRET_ID"
# The suite's own tools, served by $MEDIAN_TOOLS_PACKAGE as the framework's tests serve theirs.
CONTRACT_TOOLS = "median_lambda.contract.contract_tools"
# A call to this name reaches no tool of any endpoint: a request the suite expects refused carries it.
NO_SUCH_TOOL = "contractSuiteNoSuchTool"
NO_TOOLS_YET = "tools/ serves no tool yet: nothing of yours to send input to"


@dataclass(frozen=True)
class DeployedFunction:
    """What template.yaml deploys: the function's environment and limits, its key's secret, its idempotency table."""

    environment: dict[str, str]
    key_secret: str
    table: dict[str, Any]  # the idempotency table's properties, resolved
    function_name: str
    timeout_seconds: float
    memory_mb: int

    def context(self) -> FakeLambdaContext:
        """A fresh invocation's context: its deadline is the function's timeout from now."""
        return FakeLambdaContext(
            function_name=self.function_name,
            memory_limit_in_mb=self.memory_mb,
            invoked_function_arn=f"arn:aws:lambda:us-east-1:123456789012:function:{self.function_name}:live",
            timeout_seconds=self.timeout_seconds,
        )


def _deployed_value(value: Any, stack: Stack) -> str | None:
    """An environment value as the function gets it; a resource's Ref by the name CloudFormation gives it."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str | int | float):
        return str(value)
    if isinstance(value, dict) and list(value) == ["Ref"] and value["Ref"] in stack.resources:
        return f"{stack.parameters['AWS::StackName']}-{value['Ref']}"
    return None  # a value only CloudFormation can compute: no tool runs here to read it


def _set_per_test(name: str) -> bool:
    """Whether a test sets this variable as the function has it. Not the extension's port: no extension
    runs here, and without it the key is read through boto3, the same GetSecretValue the extension
    makes. Nor Powertools' own (service, level, namespace, tracing): Powertools reads them once per
    process, so a test that set them would leave its values to every later test of the run."""
    return name != SECRETS_EXTENSION_PORT_ENV and not name.startswith("POWERTOOLS_")


def deployed_function_of_template() -> DeployedFunction:
    """template.yaml's function, as SAM translates it with every parameter at its default."""
    stack = translated()
    function = stack.properties(FUNCTION)
    variables = function["Environment"]["Variables"]
    environment = {
        name: shown
        for name, value in variables.items()
        if _set_per_test(name) and (shown := _deployed_value(value, stack)) is not None
    }
    table_ref = variables.get(IDEMPOTENCY_TABLE_VARIABLE)
    assert isinstance(table_ref, dict) and "Ref" in table_ref, (
        f"template.yaml gives {FUNCTION} no {IDEMPOTENCY_TABLE_VARIABLE}: every retried call would run its tool again"
    )
    assert KEY_SECRET_VARIABLE in environment, f"template.yaml gives {FUNCTION} no {KEY_SECRET_VARIABLE}"
    return DeployedFunction(
        environment=environment,
        key_secret=environment[KEY_SECRET_VARIABLE],
        table=stack.properties(table_ref["Ref"]),
        function_name=f"{stack.parameters['AWS::StackName']}-{FUNCTION}",
        timeout_seconds=float(function["Timeout"]),
        memory_mb=int(function["MemorySize"]),
    )


class Endpoint:
    """Your function as deployed, reached as API Gateway reaches it: each request a real event, signed."""

    def __init__(self, deployed: DeployedFunction, aws: MedianAWS) -> None:
        self.deployed = deployed
        self.aws = aws
        self.table_name = deployed.environment[IDEMPOTENCY_TABLE_VARIABLE]

    def invoke(self, event: dict[str, Any]) -> dict[str, Any]:
        """Lambda's raw response to the event: what API Gateway turns into the HTTP answer."""
        from median_lambda.app import lambda_handler

        response: dict[str, Any] = lambda_handler(event, self.deployed.context())  # type: ignore[arg-type]
        return response

    def send(self, event: dict[str, Any]) -> TestAnswer:
        return answer_of(self.invoke(event))

    def get(self, *, payload_format: str = "2.0") -> TestAnswer:
        return self.send(signed_event("GET", payload_format=payload_format))

    def post(self, body: bytes, *, payload_format: str = "2.0", base64_body: bool = False) -> TestAnswer:
        return self.send(signed_event("POST", body, payload_format=payload_format, base64_body=base64_body))

    def call(self, tool: str, tool_input: dict[str, Any] | None = None, **members: Any) -> TestAnswer:
        """A call as Median sends it: with a callId of its own, unless the test names one."""
        members.setdefault("callId", f"call_{uuid.uuid4().hex}")
        return self.post(call_body(tool, tool_input, **members))

    def records(self) -> list[dict[str, Any]]:
        """The idempotency table's items, as DynamoDB holds them."""
        items: list[dict[str, Any]] = self.aws.client("dynamodb").scan(TableName=self.table_name)["Items"]
        return items


def create_table(aws: MedianAWS, name: str, properties: dict[str, Any]) -> None:
    """The table as template.yaml declares its keys, billing and time to live."""
    dynamodb = aws.client("dynamodb")
    billing: dict[str, Any] = {"BillingMode": properties.get("BillingMode", "PROVISIONED")}
    if billing["BillingMode"] == "PROVISIONED":
        billing["ProvisionedThroughput"] = {
            name: int(value) for name, value in properties["ProvisionedThroughput"].items()
        }
    dynamodb.create_table(
        TableName=name,
        KeySchema=properties["KeySchema"],
        AttributeDefinitions=properties["AttributeDefinitions"],
        **billing,
    )
    expiry = properties.get("TimeToLiveSpecification")
    if expiry:
        dynamodb.update_time_to_live(
            TableName=name,
            TimeToLiveSpecification={
                "Enabled": str(expiry["Enabled"]).lower() == "true",
                "AttributeName": expiry["AttributeName"],
            },
        )


@dataclass
class GuardedTools:
    """Stand-ins for your tools' functions: each records that it was reached, and fails the call."""

    ran: list[str] = dataclasses.field(default_factory=list)

    def stand_in(self, name: str) -> Callable[..., Any]:
        def refuse_to_run(*args: Any, **kwargs: Any) -> Any:
            self.ran.append(name)
            raise AssertionError(f"the contract suite ran {name}: a request it sends must be refused before that")

        return refuse_to_run


def your_tools() -> list[Tool]:
    """The tools tools/ serves, as `make serve` and the deployed function load them."""
    from median_lambda.authoring.registry import load_tools

    return list(load_tools().tools)
