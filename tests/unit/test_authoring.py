"""The authoring API as a tool's author meets it: `@tool`, `ToolContext`, `ToolError`, `@diagnostics`."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import pytest
from pydantic import BaseModel, ConfigDict, Field

from handler import ToolContext, ToolError, diagnostics, tool
from handler.testing import FakeLambdaContext, call_body, signed_event

if TYPE_CHECKING:
    from handler.authoring.registry import Registry, Tool
    from handler.testing import MedianTestClient
    from tests.conftest import LogCapture


class LookupInput(BaseModel):
    ticketNumber: str = Field(description="The order number.")


class OtherInput(BaseModel):
    note: str


class OpenInput(BaseModel):
    """An author's model that says nothing about extra fields."""

    model_config = ConfigDict(extra="allow")
    ticketNumber: str


class StatusOutput(BaseModel):
    ticket_number: str = Field(serialization_alias="ticketNumber")
    status: str


def _last(registry: Registry) -> Tool:
    return registry.tools[-1]


def test_the_name_defaults_to_the_function_name_in_camel_case(scratch_registry: Registry) -> None:
    # GIVEN a tool declared with only its risk
    @tool(risk="low")
    def look_up_ticket_status(args: LookupInput) -> str:
        """Look up a ticket."""
        return "ok"

    # WHEN it is registered
    # THEN its name is the function's, in camelCase
    assert _last(scratch_registry).name == "lookUpTicketStatus"


def test_the_description_is_the_docstring_without_its_indentation(scratch_registry: Registry) -> None:
    # GIVEN a tool whose docstring runs over two indented lines
    @tool(risk="low")
    def look_up(args: LookupInput) -> str:
        """Look up the status of one of the customer's orders.

        Use it whenever the customer asks where an order is.
        """
        return "ok"

    # WHEN it is registered
    # THEN the description is the docstring, dedented and trimmed
    assert _last(scratch_registry).description == (
        "Look up the status of one of the customer's orders.\n\nUse it whenever the customer asks where an order is."
    )


def test_name_and_description_can_be_given(scratch_registry: Registry, client: MedianTestClient) -> None:
    # GIVEN a tool that names and describes itself
    @tool(risk="medium", name="findOrder", description="Find an order by its number.")
    def look_up(args: LookupInput) -> str:
        """Not this."""
        return "ok"

    # WHEN the manifest is served
    entry = client.manifest().body["tools"][-1]
    # THEN the given name and description are the manifest's
    assert (entry["name"], entry["description"], entry["risk"]) == (
        "findOrder",
        "Find an order by its number.",
        "medium",
    )


@pytest.mark.parametrize(
    "description", [pytest.param(None, id="no docstring"), pytest.param("  \n ", id="a blank description")]
)
def test_a_tool_without_a_description_is_refused_at_its_line(
    scratch_registry: Registry, description: str | None
) -> None:
    # GIVEN a tool with nothing for the agent to read
    from handler.authoring.registry import ToolDefinitionError

    declared = sys._getframe().f_lineno + 4
    # WHEN it is declared
    with pytest.raises(ToolDefinitionError) as refused:

        @tool(risk="low", description=description)
        def silent(args: LookupInput) -> str:
            return "ok"

    # THEN it is refused at the author's line, saying what to write, and nothing is registered
    assert str(refused.value) == (
        f"tests/unit/test_authoring.py:{declared}: @tool on silent has no description: write a docstring saying "
        'what the tool does (the agent reads it to decide when to call the tool), or give @tool(description="...")'
    )
    assert scratch_registry.tools == []


def test_two_tools_with_one_name_break_the_sync_rule_naming_both_places(scratch_registry: Registry) -> None:
    # GIVEN two tools with one name registered without the loader (a test's own, say), which checks them itself
    for _ in range(2):

        @tool(risk="low", name="lookUp")
        def look_up(args: LookupInput) -> str:
            """Look it up."""
            return "ok"

    # WHEN the manifest is built
    from handler.manifest.build import build_manifest

    _, problems = build_manifest(scratch_registry)
    # THEN the rule names both declarations
    (problem,) = problems
    assert str(problem).startswith("lookUp: name: is declared twice, at tests/unit/test_authoring.py:")


def test_a_function_with_no_model_parameter_is_refused_with_what_to_fix() -> None:
    # GIVEN a function with only a context parameter
    def no_input(ctx: ToolContext) -> str:
        """No input."""
        return "ok"

    # WHEN it is declared a tool
    # THEN the author is told which function, and to annotate a parameter with a pydantic model
    with pytest.raises(TypeError, match=r"no_input: one parameter must be annotated with a pydantic BaseModel"):
        tool(risk="low")(no_input)


def test_a_function_with_two_model_parameters_is_refused_with_what_to_fix() -> None:
    # GIVEN a function with two model parameters
    def two_inputs(first: LookupInput, second: OtherInput) -> str:
        """Two inputs."""
        return "ok"

    # WHEN it is declared a tool
    # THEN the author is told only one may be a model
    with pytest.raises(TypeError, match=r"two_inputs: only one parameter may be annotated with a pydantic model"):
        tool(risk="low")(two_inputs)


@pytest.mark.parametrize("annotated", [False, True], ids=["unannotated", "annotated with str"])
def test_a_parameter_that_is_neither_input_nor_context_is_refused(annotated: bool) -> None:
    # GIVEN a function with an extra parameter
    if annotated:

        def extra_parameter(args: LookupInput, verbose: str) -> str:
            """Extra."""
            return "ok"

    else:

        def extra_parameter(args: LookupInput, verbose) -> str:  # type: ignore[no-untyped-def]
            """Extra."""
            return "ok"

    # WHEN it is declared a tool
    # THEN the author is told which parameter, and what it may be
    with pytest.raises(TypeError) as refused:
        tool(risk="low")(extra_parameter)
    message = str(refused.value)
    assert "extra_parameter" in message
    assert "parameter 'verbose' must be annotated with a pydantic model (the input), ToolContext" in message
    assert 'or default to Secret("...") or Parameter("...")' in message


def test_a_refused_function_is_not_registered(scratch_registry: Registry) -> None:
    # GIVEN a function that cannot be a tool
    def broken(ctx: ToolContext) -> str:
        return "ok"

    count = len(scratch_registry.tools)
    # WHEN declaring it fails
    with pytest.raises(TypeError):
        tool(risk="low")(broken)
    # THEN the served tool set is unchanged
    assert len(scratch_registry.tools) == count


def test_tool_context_is_optional(scratch_registry: Registry, client: MedianTestClient) -> None:
    # GIVEN a tool that takes only its input
    @tool(risk="low")
    def echo_number(args: LookupInput) -> str:
        """Echo the number."""
        return args.ticketNumber

    # WHEN Median calls it
    answer = client.call("echoNumber", {"ticketNumber": "TCK-1"})
    # THEN it runs without a context
    assert answer.status == 200
    assert answer.body == {"version": 1, "ok": True, "output": "TCK-1"}


def test_tool_context_carries_call_id_conversation_and_remaining_time(
    scratch_registry: Registry, client: MedianTestClient
) -> None:
    # GIVEN a tool that reports what its context holds, under whatever parameter name it likes
    @tool(risk="low")
    def whoami(args: LookupInput, call: ToolContext) -> dict[str, object]:
        """Report the context."""
        remaining = call.remaining_seconds()
        return {
            "callId": call.call_id,
            "conversation": call.conversation,
            "requestId": call.request_id,
            "hasLambdaContext": call.lambda_context is not None,
            "remainingOk": remaining is not None and 0 < remaining <= 30,
        }

    context = FakeLambdaContext(timeout_seconds=30)
    body = call_body("whoami", {"ticketNumber": "TCK-1"}, callId="call_7", conversation={"id": "conv_9"})
    # WHEN Median calls it with a callId and a conversation
    answer = client.send(signed_event("POST", body), context)
    # THEN the tool sees them, the Lambda's request id, and the time left
    assert answer.body["output"] == {
        "callId": "call_7",
        "conversation": {"id": "conv_9"},
        "requestId": context.aws_request_id,
        "hasLambdaContext": True,
        "remainingOk": True,
    }


def test_the_input_model_is_closed_to_extra_fields_even_if_the_author_left_it_open(
    scratch_registry: Registry, client: MedianTestClient
) -> None:
    # GIVEN a tool whose model allows extra fields
    seen: list[object] = []

    @tool(risk="low")
    def open_tool(args: OpenInput) -> str:
        """Takes an open model."""
        seen.append(args)
        return "ran"

    # WHEN Median calls it with a field the model does not declare, and then without
    refused = client.call("openTool", {"ticketNumber": "TCK-1", "sneaky": "x"})
    accepted = client.call("openTool", {"ticketNumber": "TCK-1"})
    # THEN the extra field is refused 422 by name, the manifest says so, and the tool still gets its own model
    assert refused.status == 422
    assert refused.body["error"]["details"] == [{"field": "sneaky", "message": "Extra inputs are not permitted"}]
    assert accepted.status == 200
    assert len(seen) == 1
    assert isinstance(seen[0], OpenInput)
    entry = client.manifest().body["tools"][-1]
    assert entry["inputSchema"]["additionalProperties"] is False


def test_a_returned_pydantic_model_is_serialised_by_alias(scratch_registry: Registry, client: MedianTestClient) -> None:
    # GIVEN a tool that returns a pydantic model
    @tool(risk="low")
    def typed_status(args: LookupInput) -> StatusOutput:
        """Typed status."""
        return StatusOutput(ticket_number=args.ticketNumber, status="shipped")

    # WHEN Median calls it
    answer = client.call("typedStatus", {"ticketNumber": "TCK-1"})
    # THEN the output is the model as JSON, under its aliases
    assert answer.body == {"version": 1, "ok": True, "output": {"ticketNumber": "TCK-1", "status": "shipped"}}


@pytest.mark.parametrize("output", [None, 3, 2.5, True, "text", [1, "a"], {"nested": {"deep": [None]}}])
def test_any_json_value_may_be_returned(scratch_registry: Registry, client: MedianTestClient, output: object) -> None:
    # GIVEN a tool that returns a JSON value
    @tool(risk="low")
    def give(args: LookupInput) -> object:
        """Give a value."""
        return output

    # WHEN Median calls it
    # THEN the value is the output
    assert client.call("give", {"ticketNumber": "x"}).body == {"version": 1, "ok": True, "output": output}


def test_a_tool_error_becomes_an_answer_for_the_agent(scratch_registry: Registry, client: MedianTestClient) -> None:
    # GIVEN a tool that declines
    @tool(risk="low")
    def decline(args: LookupInput) -> str:
        """Declines."""
        raise ToolError("That order belongs to another customer.")

    # WHEN Median calls it
    answer = client.call("decline", {"ticketNumber": "x"})
    # THEN it is 200 with ok false and the tool's message
    assert answer.status == 200
    assert answer.body == {
        "version": 1,
        "ok": False,
        "error": {"code": "tool_error", "message": "That order belongs to another customer."},
    }


def test_the_decorated_function_stays_callable(scratch_registry: Registry) -> None:
    # GIVEN a decorated tool
    @tool(risk="low")
    def plain(args: LookupInput) -> str:
        """Plain."""
        return args.ticketNumber

    # WHEN the author calls it directly (in a unit test, say)
    # THEN it is their own function
    assert plain(LookupInput(ticketNumber="TCK-1")) == "TCK-1"


def test_diagnostics_may_take_a_tool_context_or_nothing(scratch_registry: Registry, client: MedianTestClient) -> None:
    # GIVEN diagnostics that take no parameter, and diagnostics that take the context
    def bare() -> str:
        return "bare"

    def with_context(context: ToolContext) -> str:
        return f"call {context.call_id}"

    for function in (bare, with_context):
        scratch_registry.diagnostics[:] = []
        diagnostics(function)
        # WHEN Median asks for diagnostics
        answer = client.diagnostics()
        # THEN each runs
        assert answer.status == 200, answer.body
        assert answer.body["output"] in ("bare", "call None")


def test_diagnostics_that_raise_are_a_500_logged_as_diagnostics_under_the_answers_reference(
    scratch_registry: Registry, client: MedianTestClient, logs: LogCapture
) -> None:
    # GIVEN diagnostics that raise
    def broken() -> str:
        raise ConnectionError("the warehouse database is down")

    scratch_registry.diagnostics[:] = []
    diagnostics(broken)
    # WHEN Median asks for diagnostics
    answer = client.diagnostics()
    # THEN the answer is a 500 with a reference, and the one error line names diagnostics (no tool ran) under it
    assert answer.status == 500
    reference = answer.body["error"]["message"].removeprefix("The tool failed on the server; reference ").rstrip(".")
    [record] = [r for r in logs.records() if r["level"] == "ERROR"]
    assert record["message"] == "Diagnostics crashed"
    assert record["reference"] == reference
    assert record["error_type"] == "ConnectionError"


@pytest.mark.parametrize("annotation", [None, "str"], ids=["unannotated", "annotated with str"])
def test_a_diagnostics_function_with_a_parameter_it_cannot_be_given_is_refused(
    scratch_registry: Registry, annotation: str | None
) -> None:
    # GIVEN diagnostics whose parameter is not a ToolContext (an easy slip: `def health(ctx)`)
    if annotation is None:

        def health(ctx) -> str:  # type: ignore[no-untyped-def]
            return "ok"

    else:

        def health(ctx: str) -> str:
            return "ok"

    count = len(scratch_registry.diagnostics)
    # WHEN it is marked @diagnostics
    # THEN the author is told at import, not by a 500 on every diagnostics call, and it is not registered
    with pytest.raises(TypeError, match=r"health: parameter 'ctx' must be annotated with ToolContext"):
        diagnostics(health)
    assert len(scratch_registry.diagnostics) == count


def test_a_tool_with_two_context_parameters_is_refused(scratch_registry: Registry) -> None:
    # GIVEN a tool asking for the context twice (only one could ever be passed)
    def twice(args: LookupInput, ctx: ToolContext, again: ToolContext) -> str:
        """Twice."""
        return "ok"

    # WHEN it is declared
    # THEN the author is told at import
    with pytest.raises(TypeError, match=r"twice: only one parameter may be annotated with ToolContext"):
        tool(risk="low")(twice)


def test_a_call_runs_under_the_lambda_context_the_test_gives_as_a_retry_does(
    scratch_registry: Registry, client: MedianTestClient
) -> None:
    # GIVEN a tool and a diagnostics function that say how long their call has left
    @tool(risk="low", name="timeLeft")
    def time_left(args: OtherInput, ctx: ToolContext) -> dict[str, object]:
        """Say how long this call has left."""
        return {"seconds": ctx.remaining_seconds()}

    @diagnostics
    def health(ctx: ToolContext) -> dict[str, object]:
        return {"seconds": ctx.remaining_seconds()}

    # WHEN each is called with a context of 2 seconds, as a call with little time left, and without one
    short = client.call("timeLeft", {"note": "x"}, context=FakeLambdaContext(timeout_seconds=2))
    again = client.retry(context=FakeLambdaContext(timeout_seconds=2))
    default = client.call("timeLeft", {"note": "x"})
    checked = client.diagnostics(context=FakeLambdaContext(timeout_seconds=2))
    # THEN the short calls had under 2 seconds, and the others Lambda's default 30
    assert short.body["output"]["seconds"] < 2
    assert again.body["output"]["seconds"] < 2
    assert checked.body["output"]["seconds"] < 2
    assert default.body["output"]["seconds"] > 20
