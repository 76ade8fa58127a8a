"""Median's sync rules, checked on the manifest exactly as it will be sent.

Median refuses a whole manifest over any one of these, so the endpoint checks them first:
`make check`, the tests and `sam build` fail on a problem, and a GET refuses to serve one.
Each problem names the tool, the field and the rule, so the author knows what to change.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from median_lambda.manifest.schema import value_fits_type
from median_lambda.protocol import (
    MAX_FIELDS,
    MAX_MANIFEST_BYTES,
    MAX_SCHEMA_CHARS,
    MAX_TOOLS,
    NAME_PATTERN,
    NAME_RULE,
    PROTOCOL_VERSION,
    RESERVED_NAMES,
    RISKS,
    SCALAR_TYPES,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

_TOOL_MEMBERS = {"name", "description", "risk", "inputSchema"}
_SCHEMA_MEMBERS = {"type", "properties", "required", "additionalProperties"}
_PROPERTY_MEMBERS = {"type", "description", "enum"}


@dataclass(frozen=True)
class Problem:
    tool: str  # the tool's name, or "manifest" for rules about the whole
    field: str
    rule: str

    def __str__(self) -> str:
        return f"{self.tool}: {self.field}: {self.rule}"


def manifest_size(manifest: dict[str, Any]) -> int:
    return len(json.dumps(manifest, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def check_manifest(manifest: dict[str, Any], origins: Sequence[str] = ()) -> list[Problem]:
    """Every rule the manifest breaks. `origins[i]`, where known, says where tools[i] was declared
    ("tools/orders.py:25"), so that a problem between two tools can point at both."""
    problems: list[Problem] = []
    if manifest.get("version") != PROTOCOL_VERSION:
        problems.append(Problem("manifest", "version", f"must be {PROTOCOL_VERSION}"))
    if "diagnostics" in manifest and not isinstance(manifest["diagnostics"], bool):
        problems.append(Problem("manifest", "diagnostics", "must be true or false"))
    tools = manifest.get("tools")
    if not isinstance(tools, list):
        return [*problems, Problem("manifest", "tools", "must be a list")]
    if len(tools) > MAX_TOOLS:
        problems.append(Problem("manifest", "tools", f"has {len(tools)} tools; Median accepts at most {MAX_TOOLS}"))
    size = manifest_size(manifest)
    if size > MAX_MANIFEST_BYTES:
        problems.append(
            Problem("manifest", "size", f"is {size:,} bytes; Median accepts at most {MAX_MANIFEST_BYTES:,}")
        )
    first_of: dict[str, int] = {}
    for index, tool in enumerate(tools):
        name = tool.get("name") if isinstance(tool, dict) else None
        label = name if isinstance(name, str) else f"tools[{index}]"
        if not isinstance(tool, dict):
            problems.append(Problem(label, "tool", "must be an object"))
            continue
        if label in first_of:
            problems.append(Problem(label, "name", _repeated_name(origins, first_of[label], index)))
        first_of.setdefault(label, index)
        problems.extend(_check_tool(label, tool))
    return problems


def _repeated_name(origins: Sequence[str], first: int, again: int) -> str:
    where = [origins[index] if index < len(origins) else "" for index in (first, again)]
    if all(where):
        return f"is declared twice, at {where[0]} and at {where[1]}; names must be unique"
    return "repeats another tool's name; names must be unique"


def _check_tool(label: str, tool: dict[str, Any]) -> list[Problem]:
    problems = [
        Problem(label, member, "is not a member Median accepts") for member in sorted(tool.keys() - _TOOL_MEMBERS)
    ]
    name = tool.get("name")
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        problems.append(Problem(label, "name", f"breaks the name rule: {NAME_RULE}"))
    elif name in RESERVED_NAMES:
        problems.append(Problem(label, "name", "is reserved by Median; choose another name"))
    description = tool.get("description")
    if not isinstance(description, str) or not description.strip():
        problems.append(Problem(label, "description", "is empty; write what the tool does (its docstring)"))
    if tool.get("risk") not in RISKS:
        problems.append(Problem(label, "risk", f"must be one of {', '.join(RISKS)}"))
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict):
        problems.append(Problem(label, "inputSchema", "must be an object"))
        return problems
    return problems + _check_schema(label, schema)


def _check_schema(label: str, schema: dict[str, Any]) -> list[Problem]:
    problems = [
        Problem(label, f"inputSchema.{member}", "is not a member Median accepts")
        for member in sorted(schema.keys() - _SCHEMA_MEMBERS)
    ]
    if schema.get("type") != "object":
        problems.append(Problem(label, "inputSchema.type", 'must be "object"'))
    if schema.get("additionalProperties") is not False:
        problems.append(Problem(label, "inputSchema.additionalProperties", "must be false"))
    characters = len(json.dumps(schema))
    if characters > MAX_SCHEMA_CHARS:
        problems.append(
            Problem(
                label,
                "inputSchema",
                f"is {characters:,} characters as JSON; Median accepts at most {MAX_SCHEMA_CHARS:,}",
            )
        )
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return [*problems, Problem(label, "inputSchema.properties", "must be an object")]
    if len(properties) > MAX_FIELDS:
        problems.append(
            Problem(
                label, "inputSchema.properties", f"has {len(properties)} fields; Median accepts at most {MAX_FIELDS}"
            )
        )
    for field_name, field_schema in properties.items():
        problems.extend(_check_property(label, field_name, field_schema))
    if "required" in schema:
        required = schema["required"]
        if not isinstance(required, list) or not all(isinstance(item, str) for item in required):
            problems.append(Problem(label, "inputSchema.required", "must be a list of field names"))
        else:
            if len(set(required)) != len(required):
                problems.append(Problem(label, "inputSchema.required", "names a field twice"))
            for unknown in sorted(set(required) - properties.keys()):
                problems.append(Problem(label, "inputSchema.required", f"names {unknown!r}, which is not a field"))
    return problems


def _check_property(label: str, name: str, node: Any) -> list[Problem]:
    where = f"inputSchema.properties.{name}"
    problems: list[Problem] = []
    if not NAME_PATTERN.fullmatch(name):
        problems.append(Problem(label, where, f"has a name that breaks the name rule: {NAME_RULE}"))
    if not isinstance(node, dict):
        return [*problems, Problem(label, where, "must be an object")]
    problems.extend(
        Problem(label, f"{where}.{member}", "is not allowed; a field carries only type, description and enum")
        for member in sorted(node.keys() - _PROPERTY_MEMBERS)
    )
    json_type = node.get("type")
    if json_type not in SCALAR_TYPES:
        problems.append(Problem(label, f"{where}.type", f"must be a scalar: one of {', '.join(SCALAR_TYPES)}"))
    if "description" in node and not isinstance(node["description"], str):
        problems.append(Problem(label, f"{where}.description", "must be a string"))
    if "enum" in node:
        enum = node["enum"]
        if not isinstance(enum, list) or not enum:
            problems.append(Problem(label, f"{where}.enum", "must be a non-empty list"))
        elif json_type in SCALAR_TYPES and not all(value_fits_type(value, json_type) for value in enum):
            problems.append(Problem(label, f"{where}.enum", f"holds a value that is not of type {json_type}"))
        elif len({json.dumps(value) for value in enum}) != len(enum):
            problems.append(Problem(label, f"{where}.enum", "repeats a value"))
    return problems
