"""Integer fields take whole numbers written as floats (3.0, 3e0), as JSON Schema counts them; nothing else loosens."""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda import tool
from median_lambda.testing import call_body, signed_event
from pydantic import BaseModel, Field

from tests.conftest import with_call_id

if TYPE_CHECKING:
    from median_lambda.authoring.registry import Registry
    from median_lambda.testing import MedianTestClient, TestAnswer

TOOL = "echoNumbers"

# As deployed: through the idempotency table, whose library copies and hashes what it is given.
pytestmark = pytest.mark.usefixtures("configuration")


class Size(IntEnum):
    SMALL = 1
    LARGE = 2


class NumbersInput(BaseModel):
    count: int = Field(default=0, description="Any integer.")
    positive: int = Field(default=1, gt=0, description="An integer above 0.")
    maybe: int | None = Field(default=None, description="An optional integer.")
    renamed: int = Field(default=0, alias="itemCount", description="An integer named itemCount in the schema.")
    size: Size = Field(default=Size.SMALL, description="1 or 2.")
    amount: float = Field(default=0.0, description="Any number.")
    label: str = Field(default="", description="Text, never a number.")


@pytest.fixture
def echo(scratch_registry: Registry) -> None:
    @tool(risk="low", name=TOOL)
    def echo_numbers(args: NumbersInput) -> dict[str, Any]:
        """Echo the parsed input, with each value's Python type."""
        values = args.model_dump(by_alias=True)
        return {name: [value, type(value).__name__] for name, value in values.items()}


def _send(client: MedianTestClient, input_json: str) -> TestAnswer:
    """A call whose `input` is exactly this JSON text, as a model may have written it, with its own callId."""
    body = with_call_id(call_body(TOOL, {}).replace(b'"input": {}', b'"input": ' + input_json.encode("utf-8")))
    assert input_json.encode("utf-8") in body
    return client.send(signed_event("POST", body, key=client.key))


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("3.0", 3),
        ("3e0", 3),
        ("3E0", 3),
        ("3.000", 3),
        ("30e-1", 3),
        ("0.0", 0),
        ("-0.0", 0),
        ("-7.0", -7),
        ("1e3", 1000),
        ("1.5e3", 1500),
        # Beyond 2**53 a double cannot hold every integer: the literal is read exactly, not rounded.
        ("9007199254740993.0", 9007199254740993),
        ("1e20", 100_000_000_000_000_000_000),
        # Already an integer literal: untouched, however large.
        ("9007199254740993", 9007199254740993),
    ],
)
@pytest.mark.usefixtures("echo")
def test_a_whole_number_written_as_a_float_is_that_integer(
    written: str, expected: int, client: MedianTestClient
) -> None:
    # GIVEN an int field, and a model that writes a whole number with a fraction or an exponent
    # WHEN Median calls the tool with it
    answer = _send(client, f'{{"count": {written}}}')
    # THEN the tool runs with that exact integer, as an int
    assert answer.status == 200, answer.body
    assert answer.body["output"]["count"] == [expected, "int"]


@pytest.mark.parametrize(
    "written",
    [
        "3.5",
        "-0.5",
        "1e-1",
        # A fraction too small for a double to keep is still a fraction: no integer.
        "3.0000000000000001",
        "1e-400",
        '"3"',
        '"3.0"',
        "true",
        "false",
        "null",
    ],
)
@pytest.mark.usefixtures("echo")
def test_anything_but_a_whole_number_is_still_refused_422(written: str, client: MedianTestClient) -> None:
    # GIVEN an int field and a value that is no integer (a fraction, a string, a boolean, null)
    # WHEN Median calls the tool with it
    answer = _send(client, f'{{"count": {written}}}')
    # THEN the call is refused 422 invalid_input, naming the field, and the tool does not run
    assert answer.status == 422, answer.body
    assert answer.body["error"]["code"] == "invalid_input"
    assert [detail["field"] for detail in answer.body["error"]["details"]] == ["count"]


@pytest.mark.usefixtures("echo")
def test_a_number_too_large_for_a_double_is_refused_with_the_body(client: MedianTestClient) -> None:
    # GIVEN an int field and 1e400, which no double holds (the body rule for every number)
    # WHEN Median calls the tool with it
    answer = _send(client, '{"count": 1e400}')
    # THEN the body is refused 400 bad_request before any field is looked at
    assert answer.status == 400
    assert answer.body["error"]["code"] == "bad_request"


@pytest.mark.parametrize(
    ("input_json", "status", "field", "expected"),
    [
        # Constraints judge the integer: 2.0 passes gt=0, 0.0 and -1e0 do not.
        ('{"positive": 2.0}', 200, "positive", [2, "int"]),
        ('{"positive": 0.0}', 422, "positive", None),
        ('{"positive": -1e0}', 422, "positive", None),
        # An optional int takes a whole float, and null, as before.
        ('{"maybe": 4.0}', 200, "maybe", [4, "int"]),
        ('{"maybe": null}', 200, "maybe", [None, "NoneType"]),
        ('{"maybe": 4.5}', 422, "maybe", None),
        # An aliased field is matched by the name in the schema.
        ('{"itemCount": 5.0}', 200, "itemCount", [5, "int"]),
        ('{"itemCount": 5.5}', 422, "itemCount", None),
        # An IntEnum is an integer field with an enum: 2.0 is its member 2, 3.0 no member.
        ('{"size": 2.0}', 200, "size", [2, "Size"]),
        ('{"size": 3.0}', 422, "size", None),
    ],
)
@pytest.mark.usefixtures("echo")
def test_constraints_optional_aliased_and_enum_integer_fields(
    input_json: str, status: int, field: str, expected: list[Any] | None, client: MedianTestClient
) -> None:
    # GIVEN an integer field with a constraint, an optional one, an aliased one and an IntEnum
    # WHEN Median calls the tool with a value written as a float
    answer = _send(client, input_json)
    # THEN the field is judged as the integer the value denotes
    assert answer.status == status, answer.body
    if status == 200:
        assert answer.body["output"][field] == expected
    else:
        assert [detail["field"] for detail in answer.body["error"]["details"]] == [field]


@pytest.mark.usefixtures("echo")
def test_other_fields_keep_their_values(client: MedianTestClient) -> None:
    # GIVEN a whole float in a number field and a string field, beside one in the int field
    # WHEN Median calls the tool
    answer = _send(client, '{"count": 2.0, "amount": 3.0, "label": "4.0"}')
    # THEN only the int field becomes an int: the number stays a float, the text stays text
    assert answer.status == 200, answer.body
    output = answer.body["output"]
    assert (output["count"], output["amount"], output["label"]) == ([2, "int"], [3.0, "float"], ["4.0", "str"])


@pytest.mark.usefixtures("echo")
def test_a_whole_float_in_an_unknown_field_is_still_an_extra_field(client: MedianTestClient) -> None:
    # GIVEN a field the schema does not have, holding a whole float
    # WHEN Median calls the tool
    answer = _send(client, '{"other": 3.0}')
    # THEN it is refused as an extra field, as any value there would be
    assert answer.status == 422
    assert [detail["field"] for detail in answer.body["error"]["details"]] == ["other"]
