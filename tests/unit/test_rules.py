"""Median's sync rules: every way a manifest is refused is caught here first, naming tool, field and rule."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from median_lambda.authoring.registry import Registry, Tool
from median_lambda.manifest.build import build_manifest
from median_lambda.manifest.rules import Problem, check_manifest, manifest_size
from median_lambda.protocol import MAX_MANIFEST_BYTES, MAX_SCHEMA_CHARS, RESERVED_NAMES
from median_lambda.runtime.env import shown_path
from pydantic import BaseModel, Field


def a_tool(name: str = "ticketStatus", **changes: Any) -> dict[str, Any]:
    """A manifest entry Median accepts, with `changes` applied."""
    entry: dict[str, Any] = {
        "name": name,
        "description": "Look up the status of one of the customer's orders.",
        "risk": "low",
        "inputSchema": {
            "type": "object",
            "properties": {"ticketNumber": {"type": "string", "description": "The order number."}},
            "required": ["ticketNumber"],
            "additionalProperties": False,
        },
    }
    entry.update(changes)
    return entry


def a_manifest(*tools: dict[str, Any]) -> dict[str, Any]:
    return {"version": 1, "tools": list(tools) or [a_tool()], "diagnostics": False}


def with_property(name: str, node: Any, *, required: list[str] | None = None) -> dict[str, Any]:
    schema = copy.deepcopy(a_tool()["inputSchema"])
    schema["properties"][name] = node
    if required is not None:
        schema["required"] = required
    return a_tool(inputSchema=schema)


def problem_lines(manifest: dict[str, Any]) -> list[str]:
    return [str(problem) for problem in check_manifest(manifest)]


def test_a_valid_manifest_has_no_problem() -> None:
    # GIVEN the seed page's own example entry, and the most a manifest may hold
    manifest = a_manifest(*(a_tool(f"tool{index}") for index in range(20)))
    # WHEN it is checked
    # THEN nothing is reported: every test below breaks exactly one rule of this baseline
    assert check_manifest(manifest) == []


def test_a_problem_line_names_tool_field_and_rule() -> None:
    # GIVEN a problem found by the checker
    problem = Problem("refund", "risk", "must be one of low, medium, reviewed, high")
    # WHEN it is printed (make check prints one per line)
    # THEN the line reads tool: field: rule
    assert str(problem) == "refund: risk: must be one of low, medium, reviewed, high"


@pytest.mark.parametrize("name", sorted(RESERVED_NAMES))
def test_a_reserved_name_is_refused(name: str) -> None:
    # GIVEN a tool named like one of Median's own
    # WHEN the manifest is checked
    # THEN the name is refused as reserved
    assert problem_lines(a_manifest(a_tool(name))) == [f"{name}: name: is reserved by Median; choose another name"]


def test_a_repeated_name_is_refused() -> None:
    # GIVEN two tools by one name, beside another
    manifest = a_manifest(a_tool("lookUp"), a_tool("other"), a_tool("lookUp"))
    # WHEN the manifest is checked
    # THEN the repeat is reported once, by name
    assert problem_lines(manifest) == ["lookUp: name: repeats another tool's name; names must be unique"]


@pytest.mark.parametrize(
    "name",
    ["", "1stTool", "_private", "look-up", "look up", "naïve", "a" * 65, "tool\n", "tool.name", "ツール"],
)
def test_a_name_outside_the_rule_is_refused(name: str) -> None:
    # GIVEN a tool name that is not a letter then up to 63 letters, digits or underscores
    # WHEN the manifest is checked
    problems = check_manifest(a_manifest(a_tool(name)))
    # THEN the name rule is reported for that tool
    assert [(p.tool, p.field) for p in problems] == [(name, "name")]
    assert "breaks the name rule" in problems[0].rule


@pytest.mark.parametrize("name", ["a", "A" * 64, "ticket_status_2", "x1"])
def test_a_name_inside_the_rule_is_accepted(name: str) -> None:
    # GIVEN names at the edges of the rule
    # WHEN the manifest is checked
    # THEN nothing is reported
    assert check_manifest(a_manifest(a_tool(name))) == []


def test_more_than_20_tools_is_refused() -> None:
    # GIVEN 21 tools
    manifest = a_manifest(*(a_tool(f"tool{index}") for index in range(21)))
    # WHEN the manifest is checked
    # THEN the count is reported against the manifest's tools
    assert problem_lines(manifest) == ["manifest: tools: has 21 tools; Median accepts at most 20"]


def test_more_than_20_fields_is_refused() -> None:
    # GIVEN a schema with 21 properties (20 is the most)
    schema = a_tool()["inputSchema"]
    schema["properties"] = {f"field{index}": {"type": "string"} for index in range(21)}
    schema["required"] = []
    twenty = copy.deepcopy(schema)
    del twenty["properties"]["field20"]
    # WHEN the manifest is checked
    # THEN 21 is reported on the tool's properties, and 20 passes
    assert problem_lines(a_manifest(a_tool(inputSchema=schema))) == [
        "ticketStatus: inputSchema.properties: has 21 fields; Median accepts at most 20"
    ]
    assert check_manifest(a_manifest(a_tool(inputSchema=twenty))) == []


def _schema_of_length(characters: int) -> dict[str, Any]:
    """A valid schema exactly this long as json.dumps(schema), with default separators."""
    schema = a_tool()["inputSchema"]
    node = schema["properties"]["ticketNumber"]
    node["description"] = ""
    node["description"] = "d" * (characters - len(json.dumps(schema)))
    assert len(json.dumps(schema)) == characters
    return schema


def test_a_schema_over_8000_characters_as_json_dumps_is_refused() -> None:
    # GIVEN schemas of exactly 8,000 and 8,001 characters as json.dumps writes them
    at_limit = a_tool(inputSchema=_schema_of_length(MAX_SCHEMA_CHARS))
    over = a_tool(inputSchema=_schema_of_length(MAX_SCHEMA_CHARS + 1))
    # WHEN each manifest is checked
    # THEN 8,000 passes and 8,001 is reported on the tool's inputSchema
    assert check_manifest(a_manifest(at_limit)) == []
    assert problem_lines(a_manifest(over)) == [
        "ticketStatus: inputSchema: is 8,001 characters as JSON; Median accepts at most 8,000"
    ]


def test_the_schema_length_counts_json_dumps_escapes_of_non_ascii() -> None:
    # GIVEN a schema under 8,000 characters of text that json.dumps writes as \\uXXXX escapes past 8,000
    schema = _schema_of_length(MAX_SCHEMA_CHARS)
    schema["properties"]["ticketNumber"]["description"] = "é" * (MAX_SCHEMA_CHARS // 6 + 1)
    assert len(json.dumps(schema, ensure_ascii=False)) < MAX_SCHEMA_CHARS
    # WHEN the manifest is checked
    problems = check_manifest(a_manifest(a_tool(inputSchema=schema)))
    # THEN it is measured as json.dumps(schema) measures it, and refused
    assert [(p.tool, p.field) for p in problems] == [("ticketStatus", "inputSchema")]


@pytest.mark.parametrize("description", ["", "   ", "\n\t"])
def test_an_empty_description_is_refused(description: str) -> None:
    # GIVEN a tool with no words for the agent to choose it by
    # WHEN the manifest is checked
    # THEN the description is reported
    assert problem_lines(a_manifest(a_tool(description=description))) == [
        "ticketStatus: description: is empty; write what the tool does (its docstring)"
    ]


@pytest.mark.parametrize("risk", ["critical", "LOW", "", None, 1])
def test_a_risk_outside_the_four_is_refused(risk: Any) -> None:
    # GIVEN a risk other than low, medium, reviewed, high
    # WHEN the manifest is checked
    # THEN the risk is reported
    assert problem_lines(a_manifest(a_tool(risk=risk))) == [
        "ticketStatus: risk: must be one of low, medium, reviewed, high"
    ]


@pytest.mark.parametrize("risk", ["low", "medium", "reviewed", "high"])
def test_each_of_the_four_risks_is_accepted(risk: str) -> None:
    assert check_manifest(a_manifest(a_tool(risk=risk))) == []


@pytest.mark.parametrize(
    "node",
    [{"type": "object"}, {"type": "array"}, {"type": "null"}, {}, {"type": ["string", "null"]}],
    ids=["object", "array", "null", "no type", "type list"],
)
def test_a_non_scalar_field_is_refused(node: dict[str, Any]) -> None:
    # GIVEN a property whose type is not string, number, integer or boolean
    # WHEN the manifest is checked
    # THEN the property's type is reported, by field
    assert problem_lines(a_manifest(with_property("extra", node))) == [
        "ticketStatus: inputSchema.properties.extra.type: must be a scalar: one of string, number, integer, boolean"
    ]


@pytest.mark.parametrize("member", ["title", "default", "minimum", "maxLength", "format", "$ref", "anyOf", "pattern"])
def test_a_property_member_beyond_type_description_enum_is_refused(member: str) -> None:
    # GIVEN a property carrying a member Median's subset does not have
    # WHEN the manifest is checked
    # THEN that very member is reported
    assert problem_lines(a_manifest(with_property("count", {"type": "integer", member: 1}))) == [
        f"ticketStatus: inputSchema.properties.count.{member}: "
        "is not allowed; a field carries only type, description and enum"
    ]


@pytest.mark.parametrize(
    ("enum", "rule"),
    [
        ([], "must be a non-empty list"),
        ("a", "must be a non-empty list"),
        (["a", 1], "holds a value that is not of type string"),
        (["a", "a"], "repeats a value"),
    ],
    ids=["empty", "not a list", "wrong type", "repeat"],
)
def test_a_bad_enum_is_refused(enum: Any, rule: str) -> None:
    # GIVEN a string property whose enum is empty, mistyped or repeats itself
    # WHEN the manifest is checked
    # THEN the enum is reported by field
    assert problem_lines(a_manifest(with_property("reason", {"type": "string", "enum": enum}))) == [
        f"ticketStatus: inputSchema.properties.reason.enum: {rule}"
    ]


def test_a_property_name_outside_the_rule_is_refused() -> None:
    # GIVEN a field named with a dash
    # WHEN the manifest is checked
    problems = check_manifest(a_manifest(with_property("order-number", {"type": "string"})))
    # THEN the field is reported under the name rule
    assert [(p.tool, p.field) for p in problems] == [("ticketStatus", "inputSchema.properties.order-number")]
    assert "name rule" in problems[0].rule


@pytest.mark.parametrize(
    ("change", "line"),
    [
        ({"additionalProperties": True}, "ticketStatus: inputSchema.additionalProperties: must be false"),
        ({"additionalProperties": None}, "ticketStatus: inputSchema.additionalProperties: must be false"),
        ({"type": "array"}, 'ticketStatus: inputSchema.type: must be "object"'),
        ({"title": "Input"}, "ticketStatus: inputSchema.title: is not a member Median accepts"),
        ({"$defs": {}}, "ticketStatus: inputSchema.$defs: is not a member Median accepts"),
    ],
    ids=["open", "no additionalProperties", "not object", "title", "$defs"],
)
def test_a_schema_other_than_the_closed_flat_object_is_refused(change: dict[str, Any], line: str) -> None:
    # GIVEN a schema with one change from type/properties/required/additionalProperties: false
    schema = a_tool()["inputSchema"]
    schema.update(change)
    if change == {"additionalProperties": None}:
        del schema["additionalProperties"]
    # WHEN the manifest is checked
    # THEN that change is reported
    assert problem_lines(a_manifest(a_tool(inputSchema=schema))) == [line]


@pytest.mark.parametrize(
    ("required", "line"),
    [
        (["ticketNumber", "ghost"], "ticketStatus: inputSchema.required: names 'ghost', which is not a field"),
        (["ticketNumber", "ticketNumber"], "ticketStatus: inputSchema.required: names a field twice"),
        ("ticketNumber", "ticketStatus: inputSchema.required: must be a list of field names"),
    ],
    ids=["unknown field", "repeat", "not a list"],
)
def test_required_must_name_each_field_at_most_once(required: Any, line: str) -> None:
    # GIVEN a required list that names an unknown field, repeats one, or is no list
    schema = a_tool()["inputSchema"]
    schema["required"] = required
    # WHEN the manifest is checked
    # THEN the required list is reported
    assert problem_lines(a_manifest(a_tool(inputSchema=schema))) == [line]


def test_an_unknown_tool_member_is_refused() -> None:
    # GIVEN a tool entry with a member the seed page does not list
    # WHEN the manifest is checked
    # THEN the member is reported
    assert problem_lines(a_manifest(a_tool(version=2))) == ["ticketStatus: version: is not a member Median accepts"]


def _manifest_of_size(size: int) -> dict[str, Any]:
    """A manifest exactly `size` bytes as GET sends it (compact, UTF-8), padded in one description."""
    manifest = a_manifest(a_tool(description="x"))
    manifest["tools"][0]["description"] = "d" * (size - manifest_size(manifest) + 1)
    assert manifest_size(manifest) == size
    return manifest


def test_a_manifest_over_500000_bytes_is_refused() -> None:
    # GIVEN manifests of exactly 500,000 and 500,001 bytes
    at_limit = _manifest_of_size(MAX_MANIFEST_BYTES)
    over = _manifest_of_size(MAX_MANIFEST_BYTES + 1)
    # WHEN each is checked
    # THEN 500,000 passes and 500,001 is reported against the manifest's size
    assert check_manifest(at_limit) == []
    assert problem_lines(over) == ["manifest: size: is 500,001 bytes; Median accepts at most 500,000"]


def test_the_manifest_size_is_counted_in_utf8_bytes_not_characters() -> None:
    # GIVEN a manifest over 500,000 bytes in far fewer characters (é is two bytes in UTF-8)
    manifest = a_manifest(a_tool(description="é" * (MAX_MANIFEST_BYTES // 2 + 1)))
    assert len(json.dumps(manifest, separators=(",", ":"), ensure_ascii=False)) < MAX_MANIFEST_BYTES
    assert manifest_size(manifest) > MAX_MANIFEST_BYTES
    # WHEN it is checked
    problems = check_manifest(manifest)
    # THEN it is refused for its size
    assert [(p.tool, p.field) for p in problems] == [("manifest", "size")]


class _Input(BaseModel):
    ticketNumber: str = Field(description="The order number.")


def _registered(name: str, **changes: Any) -> Tool:
    fields: dict[str, Any] = {
        "name": name,
        "description": "Does a thing.",
        "risk": "low",
        "input_model": _Input,
        "function": lambda args: None,
        "model_parameter": "args",
        "context_parameter": None,
        **changes,
    }
    return Tool(**fields)


def health() -> str:
    return "ok"


def status() -> str:
    return "ok"


def test_more_than_one_diagnostics_function_is_refused() -> None:
    # GIVEN a tool set that marks two functions @diagnostics
    registry = Registry(tools=[_registered("lookUp")], diagnostics=[health, status])
    # WHEN its manifest is built
    _, problems = build_manifest(registry)
    # THEN one problem names both functions, and where each is
    here = shown_path(__file__)
    assert [str(problem) for problem in problems] == [
        "manifest: diagnostics: has 2 @diagnostics functions "
        f"(health at {here}:{health.__code__.co_firstlineno}, status at {here}:{status.__code__.co_firstlineno}); "
        "at most one"
    ]


def test_build_manifest_reports_every_broken_rule_of_a_registered_tool_set() -> None:
    # GIVEN registered tools breaking several rules at once
    registry = Registry(
        tools=[
            _registered("requestHandoff"),
            _registered("lookUp", risk="urgent"),
            _registered("lookUp", description=""),
        ]
    )
    # WHEN the manifest is built
    manifest, problems = build_manifest(registry)
    # THEN each is reported, and the manifest still says whether diagnostics is on
    assert sorted(str(problem) for problem in problems) == [
        "lookUp: description: is empty; write what the tool does (its docstring)",
        "lookUp: name: repeats another tool's name; names must be unique",
        "lookUp: risk: must be one of low, medium, reviewed, high",
        "requestHandoff: name: is reserved by Median; choose another name",
    ]
    assert manifest["diagnostics"] is False
