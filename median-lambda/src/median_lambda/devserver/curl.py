"""Copy-paste curl commands for signed requests, with the key left out.

The signature is computed when the command runs, by `python -m median_lambda sign`, which reads the
key from the shell's environment (or uses the local dev key): no key and no signature, which
would go stale in five minutes, is ever written into a command.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from median_lambda.protocol import JSON_CONTENT_TYPE, OP_CALL, OP_DIAGNOSTICS, PROTOCOL_VERSION, SIGNATURE_HEADER

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pydantic import BaseModel

SIGN_COMMAND = ".venv/bin/python -m median_lambda sign"


def get_command(url: str) -> str:
    return f'curl -s {url} -H "{SIGNATURE_HEADER}: $({SIGN_COMMAND})"'


def post_command(url: str, body: bytes) -> str:
    """Two lines: the exact body in $BODY, then the signed POST of it."""
    return (
        f"BODY={shlex.quote(body.decode('utf-8'))}\n"
        f'curl -s {url} -H "{SIGNATURE_HEADER}: $({SIGN_COMMAND} --body "$BODY")" '
        f'-H "content-type: {JSON_CONTENT_TYPE}" -d "$BODY"'
    )


# A value of each JSON Schema type, where a field gives no example of its own; and of a string's formats pydantic
# writes (EmailStr, date, datetime, UUID, HttpUrl).
_PLACEHOLDERS: dict[str, Any] = {"string": "example", "integer": 1, "number": 1, "boolean": False}
_FORMATS = {
    "email": "ada@example.com",
    "date": "2026-01-15",
    "date-time": "2026-01-15T09:30:00Z",
    "time": "09:30:00",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "uri": "https://example.com/",
}


@dataclass(frozen=True)
class ExampleCall:
    """The body of `make serve`'s example POST, and, when the tool's own model refuses its input, why and what
    to do (None when it takes it)."""

    body: bytes
    refused: str | None = None


def example_call(manifest: dict[str, Any] | None, models: Mapping[str, type[BaseModel]] | None = None) -> ExampleCall:
    """A call of the manifest's first tool, each required field given its own example (pydantic's
    `Field(examples=[...])`), else its enum's first value, else a placeholder its constraints allow, then held to
    the tool's input model (`models`, by tool name); the diagnostics operation when there is no tool, so the
    command works for any tools/."""
    tools = (manifest or {}).get("tools") or []
    if not tools:
        return ExampleCall(json.dumps({"version": PROTOCOL_VERSION, "op": OP_DIAGNOSTICS}).encode("utf-8"))
    name, schema = tools[0]["name"], tools[0]["inputSchema"]
    model = (models or {}).get(name)
    full = _properties(model)
    tool_input = {
        field: _example(node, full.get(field, {}))
        for field, node in schema["properties"].items()
        if field in schema.get("required", [])
    }
    document = {"version": PROTOCOL_VERSION, "op": OP_CALL, "tool": name, "input": tool_input}
    return ExampleCall(json.dumps(document).encode("utf-8"), _refusal(name, model, tool_input))


def _properties(model: type[BaseModel] | None) -> dict[str, dict[str, Any]]:
    if model is None:
        return {}
    from median_lambda.manifest.schema import full_properties

    try:
        return full_properties(model)
    except Exception:  # an author's model: the manifest's check names what is wrong with it
        return {}


def _example(node: dict[str, Any], full: dict[str, Any]) -> Any:
    if full.get("examples"):
        return full["examples"][0]
    if "enum" in node:
        return node["enum"][0]
    kind = node.get("type", "string")
    if kind in ("integer", "number"):
        return _number(full, kind)
    if kind == "string":
        text = _FORMATS.get(full.get("format", ""), _PLACEHOLDERS["string"])
        text += "x" * max(full.get("minLength", 0) - len(text), 0)
        return text[: max(full.get("maxLength", len(text)), 1)]
    return _PLACEHOLDERS.get(kind, "example")


def _number(full: dict[str, Any], kind: str) -> int | float:
    """1, or the nearest value to it the field's bounds allow (a whole one for an integer)."""
    step = 1 if kind == "integer" else 0.5
    low = full.get("minimum", full["exclusiveMinimum"] + step if "exclusiveMinimum" in full else None)
    high = full.get("maximum", full["exclusiveMaximum"] - step if "exclusiveMaximum" in full else None)
    value = max(1, low) if low is not None else 1
    value = min(value, high) if high is not None else value
    return int(value) if kind == "integer" else value


def _refusal(name: str, model: type[BaseModel] | None, tool_input: dict[str, Any]) -> str | None:
    """Why the tool's own model refuses the example's input, and how to give it one it takes; None if it takes it."""
    if model is None:
        return None
    from pydantic import ValidationError

    try:
        model.model_validate(tool_input)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "the input"
        return (
            f"{name} refuses this example's {field}: {first['msg']}. Give the field an example of its own "
            f"(Field(..., examples=[...])), and make serve's example is one {name} takes."
        )
    except Exception:  # the author's own validator, whatever it raises: the call itself says what
        return None
    return None
