"""A tool's input model as the flat JSON Schema Median accepts.

pydantic writes the full JSON Schema; this projects each property onto the subset of
docs/protocol.md: exactly `type` (a scalar), an optional `description` and an optional
`enum`. Constraints (`gt`, `max_length`, patterns …) stay behind in the model, which still
enforces them on every call. What cannot be projected (nested models, lists, dicts, unions
of two types) is reported as a problem naming the field, never silently dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from median_lambda.protocol import SCALAR_TYPES

if TYPE_CHECKING:
    from pydantic import BaseModel


@dataclass(frozen=True)
class FieldProblem:
    field: str
    message: str


def _resolve(node: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    reference = node.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/$defs/"):
        resolved = definitions.get(reference.removeprefix("#/$defs/"), {})
        # A $ref beside its own description: the field's words win over the class's docstring.
        return {**resolved, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _json_type_of(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


def value_fits_type(value: Any, json_type: str) -> bool:
    actual = _json_type_of(value)
    return actual == json_type or (json_type == "number" and actual == "integer")


def _flat_property(name: str, node: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any] | FieldProblem:
    node = _resolve(node, definitions)
    description = node.get("description")
    variants = node.get("anyOf") or node.get("oneOf")
    if variants:
        # `X | None` is an optional X: Median simply leaves the field out.
        non_null = [v for v in variants if v.get("type") != "null"]
        if len(non_null) != 1:
            return FieldProblem(name, f"is a union of {len(non_null)} types; a field must be one scalar type")
        node = {**_resolve(non_null[0], definitions), **({"description": description} if description else {})}

    enum = node.get("enum")
    if "const" in node:
        enum = [node["const"]]
    json_type = node.get("type")
    if json_type is None and enum:
        kinds = {_json_type_of(value) for value in enum}
        json_type = kinds.pop() if len(kinds) == 1 else None
        if json_type is None and kinds == {"number", "integer"}:
            json_type = "number"
    if json_type == "object" or "properties" in node:
        return FieldProblem(name, "is a nested object; flatten it into scalar fields")
    if json_type == "array":
        return FieldProblem(name, "is a list; a field must be one scalar (string, number, integer or boolean)")
    if json_type not in SCALAR_TYPES:
        found = json_type or "none"
        return FieldProblem(
            name, f"has no single scalar type (found {found}); use str, float, int, bool, a Literal or an Enum"
        )

    flat: dict[str, Any] = {"type": json_type}
    if description:
        flat["description"] = description
    if enum is not None:
        if not enum:
            return FieldProblem(name, "has an empty enum")
        if not all(value_fits_type(value, json_type) for value in enum):
            return FieldProblem(name, f"has enum values that are not all of type {json_type}")
        if len({repr(value) for value in enum}) != len(enum):
            return FieldProblem(name, "has an enum with repeated values")
        flat["enum"] = list(enum)
    return flat


def flat_input_schema(model: type[BaseModel]) -> tuple[dict[str, Any], list[FieldProblem]]:
    """The manifest's `inputSchema` for this model, and every field that does not fit the subset."""
    full = model.model_json_schema(by_alias=True, mode="validation")
    definitions = full.get("$defs", {})
    properties: dict[str, Any] = {}
    problems: list[FieldProblem] = []
    for name, node in full.get("properties", {}).items():
        flat = _flat_property(name, node, definitions)
        if isinstance(flat, FieldProblem):
            problems.append(flat)
        else:
            properties[name] = flat
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = [name for name in full.get("required", []) if name in properties]
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema, problems


def full_properties(model: type[BaseModel]) -> dict[str, dict[str, Any]]:
    """Each field's whole JSON Schema (its constraints and examples, which the manifest leaves out), by the name
    Median sends: a $ref resolved, an optional X's X."""
    full = model.model_json_schema(by_alias=True, mode="validation")
    definitions = full.get("$defs", {})
    properties: dict[str, dict[str, Any]] = {}
    for name, node in full.get("properties", {}).items():
        resolved = _resolve(node, definitions)
        variants = [each for each in resolved.get("anyOf", []) if each.get("type") != "null"]
        properties[name] = {**_resolve(variants[0], definitions), **resolved} if len(variants) == 1 else resolved
    return properties
