"""Copy-paste curl commands for signed requests, with the key left out.

The signature is computed when the command runs, by `python -m median_lambda sign`, which reads the
key from the shell's environment (or uses the local dev key): no key and no signature, which
would go stale in five minutes, is ever written into a command.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from median_lambda.protocol import JSON_CONTENT_TYPE, OP_CALL, OP_DIAGNOSTICS, PROTOCOL_VERSION, SIGNATURE_HEADER

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


# A value of each JSON Schema type, for the required fields of the example call.
_PLACEHOLDERS: dict[str, Any] = {"string": "example", "integer": 1, "number": 1, "boolean": False}


def example_call(manifest: dict[str, Any] | None) -> bytes:
    """A call of the manifest's first tool, a placeholder in each required field (an enum's first
    value); the diagnostics operation when there is no tool, so the command works for any tools/."""
    tools = (manifest or {}).get("tools") or []
    if not tools:
        return json.dumps({"version": PROTOCOL_VERSION, "op": OP_DIAGNOSTICS}).encode("utf-8")
    schema = tools[0]["inputSchema"]
    tool_input = {
        name: node["enum"][0] if "enum" in node else _PLACEHOLDERS.get(node.get("type", "string"), "example")
        for name, node in schema["properties"].items()
        if name in schema.get("required", [])
    }
    document = {"version": PROTOCOL_VERSION, "op": OP_CALL, "tool": tools[0]["name"], "input": tool_input}
    return json.dumps(document).encode("utf-8")
