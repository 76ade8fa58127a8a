"""Every sync rule, broken alone, gives its own line: the tool, the field, and what to change.

Median refuses a whole manifest over any one rule, so each rule here has a case that fails
without it (turn the rule off and its line is missing), and each line is pinned word for word:
`make check` prints these lines, and an author acts on them. The cases on the other side of
each rule (the value it still accepts) are here too, so a rule cannot grow past its text.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from median_lambda.manifest.rules import Problem, check_manifest, manifest_size
from median_lambda.protocol import NAME_RULE

RULE_LINE_FOR_NAMES = f"breaks the name rule: {NAME_RULE}"
NOT_ALLOWED_IN_A_FIELD = "is not allowed; a field carries only type, description and enum"


def a_tool(name: str = "caseStatus") -> dict[str, Any]:
    """One tool Median accepts."""
    return {
        "name": name,
        "description": "Look up an order.",
        "risk": "low",
        "inputSchema": {
            "type": "object",
            "properties": {"orderNumber": {"type": "string", "description": "The order number."}},
            "required": ["orderNumber"],
            "additionalProperties": False,
        },
    }


def a_manifest() -> dict[str, Any]:
    return {"version": 1, "tools": [a_tool()], "diagnostics": False}


def lines_after(change: Any) -> list[str]:
    """The problem lines of the baseline manifest once `change` has edited it in place."""
    manifest = a_manifest()
    change(manifest)
    return [str(problem) for problem in check_manifest(manifest)]


def _tool(manifest: dict[str, Any]) -> dict[str, Any]:
    tool: dict[str, Any] = manifest["tools"][0]
    return tool


def _schema(manifest: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = _tool(manifest)["inputSchema"]
    return schema


def _field(manifest: dict[str, Any]) -> dict[str, Any]:
    field: dict[str, Any] = _schema(manifest)["properties"]["orderNumber"]
    return field


def test_the_baseline_breaks_no_rule() -> None:
    # GIVEN the manifest every case below changes in one place
    # WHEN it is checked
    # THEN nothing is reported
    assert lines_after(lambda manifest: None) == []


MANIFEST_CASES = [
    pytest.param(lambda m: m.update(version=2), ["manifest: version: must be 1"], id="version 2"),
    pytest.param(lambda m: m.pop("version"), ["manifest: version: must be 1"], id="no version"),
    pytest.param(lambda m: m.update(version="1"), ["manifest: version: must be 1"], id="version as text"),
    pytest.param(
        lambda m: m.update(diagnostics="yes"), ["manifest: diagnostics: must be true or false"], id="diagnostics text"
    ),
    pytest.param(
        lambda m: m.update(diagnostics=1), ["manifest: diagnostics: must be true or false"], id="diagnostics 1"
    ),
    pytest.param(
        lambda m: m.update(diagnostics=None), ["manifest: diagnostics: must be true or false"], id="diagnostics null"
    ),
    pytest.param(lambda m: m.update(diagnostics=True), [], id="diagnostics true"),
    pytest.param(lambda m: m.pop("diagnostics"), [], id="no diagnostics"),
    pytest.param(lambda m: m.update(tools={}), ["manifest: tools: must be a list"], id="tools an object"),
    pytest.param(lambda m: m.pop("tools"), ["manifest: tools: must be a list"], id="no tools"),
    pytest.param(
        lambda m: m.update(version=0, diagnostics="no", tools=None),
        [
            "manifest: version: must be 1",
            "manifest: diagnostics: must be true or false",
            "manifest: tools: must be a list",
        ],
        id="every manifest rule at once",
    ),
    pytest.param(lambda m: m.update(tools=[]), [], id="no tool at all"),
    pytest.param(
        lambda m: m["tools"].append("caseStatus"), ["tools[1]: tool: must be an object"], id="a tool that is text"
    ),
    pytest.param(
        lambda m: (m["tools"][0].update(risk="none"), m["tools"].insert(0, None)),
        ["tools[0]: tool: must be an object", "caseStatus: risk: must be one of low, medium, reviewed, high"],
        id="a null tool, the others still checked",
    ),
]


@pytest.mark.parametrize(("change", "lines"), MANIFEST_CASES)
def test_each_manifest_rule_gives_its_own_line(change: Any, lines: list[str]) -> None:
    # GIVEN the baseline with one manifest-level rule broken (or kept at its edge)
    # WHEN it is checked
    # THEN exactly that rule's line is reported
    assert lines_after(change) == lines


TOOL_CASES = [
    pytest.param(
        lambda t: t.update(name="order-status"), [f"order-status: name: {RULE_LINE_FOR_NAMES}"], id="bad name"
    ),
    pytest.param(lambda t: t.update(name="x" * 65), [f"{'x' * 65}: name: {RULE_LINE_FOR_NAMES}"], id="65 characters"),
    pytest.param(lambda t: t.update(name="x" * 64), [], id="64 characters"),
    pytest.param(lambda t: t.update(name=7), [f"tools[0]: name: {RULE_LINE_FOR_NAMES}"], id="name a number"),
    pytest.param(lambda t: t.pop("name"), [f"tools[0]: name: {RULE_LINE_FOR_NAMES}"], id="no name"),
    pytest.param(
        lambda t: t.update(name="reportBug"),
        ["reportBug: name: is reserved by Median; choose another name"],
        id="reserved name",
    ),
    pytest.param(
        lambda t: t.update(description="   "),
        ["caseStatus: description: is empty; write what the tool does (its docstring)"],
        id="blank description",
    ),
    pytest.param(
        lambda t: t.update(description=["Look up an order."]),
        ["caseStatus: description: is empty; write what the tool does (its docstring)"],
        id="description a list",
    ),
    pytest.param(
        lambda t: t.pop("description"),
        ["caseStatus: description: is empty; write what the tool does (its docstring)"],
        id="no description",
    ),
    pytest.param(
        lambda t: t.update(risk="critical"),
        ["caseStatus: risk: must be one of low, medium, reviewed, high"],
        id="unknown risk",
    ),
    pytest.param(
        lambda t: t.update(zeta=1, alpha=2),
        ["caseStatus: alpha: is not a member Median accepts", "caseStatus: zeta: is not a member Median accepts"],
        id="unknown members, in order",
    ),
    pytest.param(
        lambda t: t.update(inputSchema="{}"), ["caseStatus: inputSchema: must be an object"], id="schema as text"
    ),
    pytest.param(
        lambda t: t.update(risk=None, inputSchema=None),
        [
            "caseStatus: risk: must be one of low, medium, reviewed, high",
            "caseStatus: inputSchema: must be an object",
        ],
        id="the tool's rules before its schema's",
    ),
]


@pytest.mark.parametrize(("change", "lines"), TOOL_CASES)
def test_each_tool_rule_gives_its_own_line(change: Any, lines: list[str]) -> None:
    # GIVEN the baseline with one rule of its tool broken (or kept at its edge)
    # WHEN it is checked
    # THEN exactly that rule's line is reported, under the tool's name (or its place, when it has none)
    assert lines_after(lambda manifest: change(_tool(manifest))) == lines


SCHEMA_CASES = [
    pytest.param(
        lambda s: s.update(title="x"),
        ["caseStatus: inputSchema.title: is not a member Median accepts"],
        id="unknown member",
    ),
    pytest.param(lambda s: s.update(type="array"), ['caseStatus: inputSchema.type: must be "object"'], id="type array"),
    pytest.param(lambda s: s.pop("type"), ['caseStatus: inputSchema.type: must be "object"'], id="no type"),
    pytest.param(
        lambda s: s.update(additionalProperties=True),
        ["caseStatus: inputSchema.additionalProperties: must be false"],
        id="additional properties allowed",
    ),
    pytest.param(
        lambda s: s.update(additionalProperties=0),
        ["caseStatus: inputSchema.additionalProperties: must be false"],
        id="additional properties 0",
    ),
    pytest.param(
        lambda s: s.pop("additionalProperties"),
        ["caseStatus: inputSchema.additionalProperties: must be false"],
        id="additional properties unsaid",
    ),
    pytest.param(
        lambda s: s.update(properties=[]),
        ["caseStatus: inputSchema.properties: must be an object"],
        id="properties a list",
    ),
    pytest.param(
        lambda s: s.update(type="array", properties=None),
        ['caseStatus: inputSchema.type: must be "object"', "caseStatus: inputSchema.properties: must be an object"],
        id="earlier lines kept when properties is wrong",
    ),
    pytest.param(
        lambda s: s.update(required="orderNumber"),
        ["caseStatus: inputSchema.required: must be a list of field names"],
        id="required as text",
    ),
    pytest.param(
        lambda s: s.update(required=["orderNumber", 1]),
        ["caseStatus: inputSchema.required: must be a list of field names"],
        id="required holds a number",
    ),
    pytest.param(
        lambda s: s.update(required=["orderNumber", "orderNumber"]),
        ["caseStatus: inputSchema.required: names a field twice"],
        id="required twice",
    ),
    pytest.param(
        lambda s: s.update(required=["zip", "email", "orderNumber"]),
        [
            "caseStatus: inputSchema.required: names 'email', which is not a field",
            "caseStatus: inputSchema.required: names 'zip', which is not a field",
        ],
        id="required unknown fields, in order",
    ),
    pytest.param(lambda s: s.pop("required"), [], id="no required"),
    pytest.param(lambda s: s.update(required=[]), [], id="nothing required"),
]


@pytest.mark.parametrize(("change", "lines"), SCHEMA_CASES)
def test_each_input_schema_rule_gives_its_own_line(change: Any, lines: list[str]) -> None:
    # GIVEN the baseline with one rule of its input schema broken (or kept at its edge)
    # WHEN it is checked
    # THEN exactly that rule's line is reported, naming the schema's member
    assert lines_after(lambda manifest: change(_schema(manifest))) == lines


FIELD = "caseStatus: inputSchema.properties.orderNumber"

FIELD_CASES = [
    pytest.param(
        lambda f: f.update(format="email"), [f"{FIELD}.format: {NOT_ALLOWED_IN_A_FIELD}"], id="member beyond the three"
    ),
    pytest.param(
        lambda f: f.update(type="object"),
        [f"{FIELD}.type: must be a scalar: one of string, number, integer, boolean"],
        id="type object",
    ),
    pytest.param(
        lambda f: f.pop("type"),
        [f"{FIELD}.type: must be a scalar: one of string, number, integer, boolean"],
        id="no type",
    ),
    pytest.param(lambda f: f.update(description=3), [f"{FIELD}.description: must be a string"], id="description 3"),
    pytest.param(
        lambda f: f.update(description=None), [f"{FIELD}.description: must be a string"], id="description null"
    ),
    pytest.param(lambda f: f.update(description=""), [], id="description empty"),
    pytest.param(lambda f: f.pop("description"), [], id="no description"),
    pytest.param(lambda f: f.update(enum=[]), [f"{FIELD}.enum: must be a non-empty list"], id="enum empty"),
    pytest.param(lambda f: f.update(enum="a"), [f"{FIELD}.enum: must be a non-empty list"], id="enum as text"),
    pytest.param(
        lambda f: f.update(enum=["a", 1]),
        [f"{FIELD}.enum: holds a value that is not of type string"],
        id="enum value of another type",
    ),
    pytest.param(lambda f: f.update(type="number", enum=[1, 2.5]), [], id="an integer is a number"),
    pytest.param(
        lambda f: f.update(enum=["a", "b", "a"]), [f"{FIELD}.enum: repeats a value"], id="enum repeats a value"
    ),
    pytest.param(
        lambda f: f.update(type="array", enum=[[1], [1]]),
        [
            f"{FIELD}.type: must be a scalar: one of string, number, integer, boolean",
            f"{FIELD}.enum: repeats a value",
        ],
        id="enum repeats under a non-scalar type",
    ),
    pytest.param(lambda f: f.update(enum=["a", "b"]), [], id="enum of two strings"),
]


@pytest.mark.parametrize(("change", "lines"), FIELD_CASES)
def test_each_field_rule_gives_its_own_line(change: Any, lines: list[str]) -> None:
    # GIVEN the baseline with one rule of its field broken (or kept at its edge)
    # WHEN it is checked
    # THEN exactly that rule's line is reported, naming the field's member
    assert lines_after(lambda manifest: change(_field(manifest))) == lines


def test_a_field_that_is_not_an_object_and_a_field_name_outside_the_rule() -> None:
    # GIVEN a field whose schema is text, and one whose name breaks the name rule
    def change(manifest: dict[str, Any]) -> None:
        _schema(manifest)["properties"].update({"plain": "string", "order-id": {"type": "string"}})

    # WHEN the manifest is checked
    # THEN each gets its line, in the schema's order
    assert lines_after(change) == [
        "caseStatus: inputSchema.properties.plain: must be an object",
        f"caseStatus: inputSchema.properties.order-id: has a name that {RULE_LINE_FOR_NAMES}",
    ]


def test_a_field_name_outside_the_rule_that_is_also_not_an_object_gets_both_lines() -> None:
    # GIVEN one field wrong in both ways
    def change(manifest: dict[str, Any]) -> None:
        _schema(manifest)["properties"]["order id"] = 5

    # WHEN it is checked
    # THEN both lines are reported, the name's first
    assert lines_after(change) == [
        f"caseStatus: inputSchema.properties.order id: has a name that {RULE_LINE_FOR_NAMES}",
        "caseStatus: inputSchema.properties.order id: must be an object",
    ]


def test_fields_members_are_reported_in_order() -> None:
    # GIVEN a field with two members beyond the three
    def change(manifest: dict[str, Any]) -> None:
        _field(manifest).update(pattern="x", default="y")

    # WHEN it is checked
    # THEN each is named, alphabetically
    assert lines_after(change) == [
        f"{FIELD}.default: {NOT_ALLOWED_IN_A_FIELD}",
        f"{FIELD}.pattern: {NOT_ALLOWED_IN_A_FIELD}",
    ]


@pytest.mark.parametrize(
    ("origins", "rule"),
    [
        pytest.param(
            ["tools/orders.py:10", "tools/health.py:4", "tools/orders.py:30"],
            "is declared twice, at tools/orders.py:10 and at tools/orders.py:30; names must be unique",
            id="both places known",
        ),
        pytest.param(
            ["tools/orders.py:10", "", "tools/orders.py:30"],
            "is declared twice, at tools/orders.py:10 and at tools/orders.py:30; names must be unique",
            id="another tool's place unknown",
        ),
        pytest.param(
            ["tools/orders.py:10", "tools/health.py:4"],
            "repeats another tool's name; names must be unique",
            id="the repeat's place unknown",
        ),
        pytest.param(
            ["", "tools/health.py:4", "tools/orders.py:30"],
            "repeats another tool's name; names must be unique",
            id="the first's place unknown",
        ),
        pytest.param([], "repeats another tool's name; names must be unique", id="no place known"),
    ],
)
def test_a_repeated_name_points_at_both_declarations_when_both_are_known(origins: list[str], rule: str) -> None:
    # GIVEN three tools, the first and last with one name
    manifest = {"version": 1, "tools": [a_tool(), a_tool("healthCheck"), a_tool()]}
    # WHEN the manifest is checked with what is known of where each was declared
    lines = [str(problem) for problem in check_manifest(manifest, origins)]
    # THEN the repeat is reported once, on the later tool, at both places when both are known
    assert lines == [f"caseStatus: name: {rule}"]


def test_a_name_repeated_three_times_points_each_repeat_at_the_first() -> None:
    # GIVEN one name declared three times
    manifest = {"version": 1, "tools": [a_tool(), a_tool(), a_tool()]}
    # WHEN it is checked
    lines = [str(problem) for problem in check_manifest(manifest, ["a.py:1", "b.py:2", "c.py:3"])]
    # THEN each repeat names the first declaration
    assert lines == [
        "caseStatus: name: is declared twice, at a.py:1 and at b.py:2; names must be unique",
        "caseStatus: name: is declared twice, at a.py:1 and at c.py:3; names must be unique",
    ]


def test_a_problem_reads_tool_field_rule() -> None:
    # GIVEN a problem
    # WHEN it is printed (make check prints each on a line)
    # THEN it reads tool, field and rule, in that order
    assert str(Problem("caseStatus", "risk", "must be one of x")) == "caseStatus: risk: must be one of x"


@pytest.mark.parametrize(
    "description", ["plain ascii", "é and ü, two bytes each", "日本語, three bytes each", "🙂, four bytes"]
)
def test_the_manifest_size_is_its_compact_utf8_json(description: str) -> None:
    # GIVEN a manifest with text of one-, two-, three- or four-byte characters
    manifest = a_manifest()
    _tool(manifest)["description"] = description
    # WHEN its size is measured
    # THEN it is the length of what GET sends: compact separators, UTF-8, non-ASCII unescaped
    sent = json.dumps(manifest, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    assert manifest_size(manifest) == len(sent)
    assert manifest_size(manifest) < len(json.dumps(manifest).encode("utf-8"))
