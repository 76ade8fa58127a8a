"""The example call `make serve` prints: an input the first tool's own model takes, built from its examples and its
constraints, or, where none can be, the example said to be refused, with what to do."""

from __future__ import annotations

import json
from datetime import date  # noqa: TC003 - pydantic reads the annotation at runtime
from typing import Any

import pytest
from median_lambda.devserver.curl import example_call
from pydantic import BaseModel, Field


def manifest_of(name: str, model: type[BaseModel]) -> dict[str, Any]:
    """The manifest Median reads for one tool, its flat schema's properties and required fields as the build gives."""
    from median_lambda.manifest.schema import flat_input_schema

    schema, problems = flat_input_schema(model)
    assert problems == []
    return {"version": 1, "tools": [{"name": name, "inputSchema": schema}], "diagnostics": False}


def sent_input(name: str, model: type[BaseModel]) -> tuple[dict[str, Any], str | None]:
    call = example_call(manifest_of(name, model), {name: model})
    return json.loads(call.body)["input"], call.refused


class WithExamples(BaseModel):
    orderNumber: str = Field(pattern=r"^ORD-\d{4}$", examples=["ORD-1042"])
    note: str | None = None


class Constrained(BaseModel):
    quantity: int = Field(ge=3, le=99)
    share: float = Field(gt=0, lt=0.75)
    below: int = Field(lt=-4)
    code: str = Field(min_length=10)
    initials: str = Field(max_length=2)
    day: date


class Patterned(BaseModel):
    orderNumber: str = Field(pattern=r"^ORD-\d{4}$")


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        (WithExamples, {"orderNumber": "ORD-1042"}),
        (
            Constrained,
            {
                "quantity": 3,
                "share": 0.25,
                "below": -5,
                "code": "examplexxx",
                "initials": "ex",
                "day": "2026-01-15",
            },
        ),
    ],
    ids=["a field's own example", "the field's constraints"],
)
def test_the_example_is_an_input_the_tools_own_model_takes(model: type[BaseModel], expected: dict[str, Any]) -> None:
    # WHEN make serve builds its example call of a tool
    sent, refused = sent_input("lookUp", model)
    # THEN each required field is given what its model takes, and the model takes the whole
    assert sent == expected
    assert refused is None
    model.model_validate(sent)


def test_an_input_no_example_can_give_is_said_to_be_refused_with_what_to_do() -> None:
    # WHEN the tool's field holds to a pattern, with no example of its own
    sent, refused = sent_input("parcelStatus", Patterned)
    # THEN the example is printed all the same, saying the tool refuses it, which field, and how to give one it takes
    assert sent == {"orderNumber": "example"}
    assert refused == (
        "parcelStatus refuses this example's orderNumber: String should match pattern '^ORD-\\d{4}$'. Give the field "
        "an example of its own (Field(..., examples=[...])), and make serve's example is one parcelStatus takes."
    )
