"""The flat schema builder: a pydantic model as the scalar-only JSON Schema Median accepts."""

from __future__ import annotations

from enum import Enum, IntEnum
from typing import TYPE_CHECKING, Any, Literal

import pytest
from median_lambda import tool
from median_lambda.authoring.registry import Registry
from median_lambda.manifest.build import build_manifest
from median_lambda.manifest.rules import check_manifest
from median_lambda.manifest.schema import flat_input_schema
from median_lambda.testing import signed_event
from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from median_lambda.testing import MedianTestClient


class Colour(Enum):
    RED = "red"
    BLUE = "blue"


class Size(IntEnum):
    SMALL = 1
    LARGE = 2


class Scalars(BaseModel):
    text: str = Field(description="Some text.")
    ratio: float
    count: int
    flag: bool


class Choices(BaseModel):
    literal: Literal["a", "b"]
    colour: Colour = Field(description="A colour.")
    size: Size
    only: Literal["x"]
    maybe_size: Size | None = None


class Optionals(BaseModel):
    needed: str
    defaulted: int = 3
    nullable: str | None = None
    flag: bool = Field(default=False, description="Off unless asked.")


class Aliased(BaseModel):
    ticket_number: str = Field(alias="ticketNumber", description="The order number.")


class Constrained(BaseModel):
    amount: float = Field(gt=0, description="More than zero.")
    note: str = Field(max_length=5)
    code: str = Field(pattern=r"^[A-Z]{3}$")
    quantity: int = Field(ge=1, le=9)


class Inner(BaseModel):
    x: int


class Nested(BaseModel):
    ok: str
    inner: Inner


class Listed(BaseModel):
    items: list[str]


class Mapped(BaseModel):
    extras: dict[str, str]


class Either(BaseModel):
    value: int | str


class EitherOrNone(BaseModel):
    value: int | str | None = None


class Untyped(BaseModel):
    anything: Any


def _properties(model: type[BaseModel]) -> dict[str, Any]:
    schema, problems = flat_input_schema(model)
    assert problems == []
    properties: dict[str, Any] = schema["properties"]
    return properties


def test_scalar_fields_become_their_json_types_with_description() -> None:
    # GIVEN a model of str, float, int and bool fields, one with a description
    # WHEN its schema is built
    schema, problems = flat_input_schema(Scalars)
    # THEN each field is exactly its JSON type (and description), all required, closed to extras
    assert problems == []
    assert schema == {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "Some text."},
            "ratio": {"type": "number"},
            "count": {"type": "integer"},
            "flag": {"type": "boolean"},
        },
        "required": ["text", "ratio", "count", "flag"],
        "additionalProperties": False,
    }
    assert check_manifest({"version": 1, "tools": [_entry(schema)], "diagnostics": False}) == []


def _entry(schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": "someTool", "description": "Does a thing.", "risk": "low", "inputSchema": schema}


def test_literal_and_enum_fields_become_enums_of_their_values() -> None:
    # GIVEN Literal, str Enum, int Enum, single-value Literal and optional Enum fields
    # WHEN the schema is built
    properties = _properties(Choices)
    # THEN each is a typed enum of its values, and nothing else (no title, $ref, const, default)
    assert properties == {
        "literal": {"type": "string", "enum": ["a", "b"]},
        "colour": {"type": "string", "description": "A colour.", "enum": ["red", "blue"]},
        "size": {"type": "integer", "enum": [1, 2]},
        "only": {"type": "string", "enum": ["x"]},
        "maybe_size": {"type": "integer", "enum": [1, 2]},
    }


def test_fields_with_a_default_or_none_are_left_out_of_required() -> None:
    # GIVEN a model with one required field and three optional ones
    # WHEN the schema is built
    schema, problems = flat_input_schema(Optionals)
    # THEN only the required one is listed, and the optional ones carry no default or null type
    assert problems == []
    assert schema["required"] == ["needed"]
    assert schema["properties"] == {
        "needed": {"type": "string"},
        "defaulted": {"type": "integer"},
        "nullable": {"type": "string"},
        "flag": {"type": "boolean", "description": "Off unless asked."},
    }


def test_a_model_with_no_required_field_has_no_required_list() -> None:
    # GIVEN a model whose fields all have defaults
    class AllOptional(BaseModel):
        a: int = 1

    # WHEN the schema is built
    schema, _ = flat_input_schema(AllOptional)
    # THEN `required` is left out rather than empty
    assert "required" not in schema


def test_the_alias_is_the_schema_name() -> None:
    # GIVEN a field named ticket_number with the alias ticketNumber
    # WHEN the schema is built
    schema, _ = flat_input_schema(Aliased)
    # THEN the schema (properties and required) speaks of ticketNumber only
    assert schema["properties"] == {"ticketNumber": {"type": "string", "description": "The order number."}}
    assert schema["required"] == ["ticketNumber"]


def test_constraints_are_not_emitted() -> None:
    # GIVEN fields constrained by gt, max_length, pattern, ge and le
    # WHEN the schema is built
    properties = _properties(Constrained)
    # THEN each field has only type and description: Median refuses anything else at sync
    assert properties == {
        "amount": {"type": "number", "description": "More than zero."},
        "note": {"type": "string"},
        "code": {"type": "string"},
        "quantity": {"type": "integer"},
    }


@pytest.mark.parametrize(
    ("tool_input", "field", "message"),
    [
        ({"amount": 0, "note": "hi", "code": "ABC", "quantity": 1}, "amount", "greater than 0"),
        ({"amount": 1, "note": "too long", "code": "ABC", "quantity": 1}, "note", "at most 5 characters"),
        ({"amount": 1, "note": "hi", "code": "abc", "quantity": 1}, "code", "match pattern"),
        ({"amount": 1, "note": "hi", "code": "ABC", "quantity": 10}, "quantity", "less than or equal to 9"),
    ],
    ids=["gt", "max_length", "pattern", "le"],
)
def test_constraints_are_enforced_on_input(
    scratch_registry: Registry, client: MedianTestClient, tool_input: dict[str, Any], field: str, message: str
) -> None:
    # GIVEN a tool whose model carries constraints the schema does not
    @tool(risk="low")
    def constrained_tool(args: Constrained) -> str:
        """Takes constrained input."""
        return "ran"

    # WHEN Median calls it with input that breaks one constraint
    answer = client.call("constrainedTool", tool_input)
    # THEN the call is refused 422, naming the field and the constraint, and the tool does not run
    assert answer.status == 422
    assert answer.body["error"]["code"] == "invalid_input"
    [detail] = answer.body["error"]["details"]
    assert detail["field"] == field
    assert message in detail["message"]


@pytest.mark.parametrize(
    ("model", "field", "why"),
    [
        (Nested, "inner", "nested object"),
        (Listed, "items", "list"),
        (Mapped, "extras", "nested object"),
        (Either, "value", "union of 2 types"),
        (EitherOrNone, "value", "union of 2 types"),
        (Untyped, "anything", "no single scalar type"),
    ],
    ids=["nested model", "list", "dict", "union of two", "union of two or None", "Any"],
)
def test_fields_that_are_not_one_scalar_are_refused_naming_the_field(
    model: type[BaseModel], field: str, why: str
) -> None:
    # GIVEN a model with a field Median cannot take
    # WHEN the schema is built
    schema, problems = flat_input_schema(model)
    # THEN that field is reported (not silently dropped or passed on) and left out of the schema
    assert [(problem.field, why in problem.message) for problem in problems] == [(field, True)]
    assert field not in schema["properties"]
    assert field not in schema.get("required", [])


def test_a_refused_field_fails_the_manifest_naming_tool_field_and_rule(scratch_registry: Registry) -> None:
    # GIVEN a tool whose model has a list field, in a registry of its own
    @tool(risk="low")
    def tag_order(args: Listed) -> str:
        """Tags an order."""
        return "tagged"

    registry = Registry(tools=[scratch_registry.tools[-1]])
    # WHEN the manifest is built
    _, problems = build_manifest(registry)
    # THEN one problem says which tool, which field and why
    assert [str(problem) for problem in problems] == [
        "tagOrder: inputSchema.properties.items: "
        "is a list; a field must be one scalar (string, number, integer or boolean)"
    ]


def test_a_number_too_large_for_a_double_is_invalid_input_not_a_crash(
    sample_tools: Registry, client: MedianTestClient
) -> None:
    # GIVEN a float field (the sample issueCredit's amount) and an integer far beyond a double's range
    # (valid JSON, no 1e400 literal)
    body = (
        b'{"version":1,"op":"call","tool":"issueCredit","input":{"ticketNumber":"TCK-1042","amount":1'
        + b"0" * 400
        + b',"reason":"outage"}}'
    )
    # WHEN it is sent as Median would
    answer = client.send(signed_event("POST", body))
    # THEN the field is refused as invalid input, and nothing became infinity
    assert answer.status == 422
    assert [detail["field"] for detail in answer.body["error"]["details"]] == ["amount"]
