"""The manifest: what GET answers, built from the registered tools and checked against Median's rules."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from median_lambda.manifest.rules import Problem, check_manifest
from median_lambda.protocol import PROTOCOL_VERSION
from median_lambda.runtime.env import shown_path

if TYPE_CHECKING:
    from collections.abc import Callable

    from median_lambda.authoring.registry import Registry


def build_manifest(registry: Registry) -> tuple[dict[str, Any], list[Problem]]:
    """The manifest in the shape of Median's page, and every sync rule it breaks."""
    from median_lambda.manifest.schema import flat_input_schema

    problems: list[Problem] = []
    entries = []
    for tool in registry.tools:
        schema, field_problems = flat_input_schema(tool.input_model)
        problems.extend(Problem(tool.name, f"inputSchema.properties.{p.field}", p.message) for p in field_problems)
        entries.append({"name": tool.name, "description": tool.description, "risk": tool.risk, "inputSchema": schema})
    if len(registry.diagnostics) > 1:
        names = ", ".join(_named_at(function) for function in registry.diagnostics)
        problems.append(
            Problem(
                "manifest",
                "diagnostics",
                f"has {len(registry.diagnostics)} @diagnostics functions ({names}); at most one",
            )
        )
    manifest = {"version": PROTOCOL_VERSION, "tools": entries, "diagnostics": bool(registry.diagnostics)}
    problems.extend(check_manifest(manifest, [tool.location for tool in registry.tools]))
    return manifest, problems


def _named_at(function: Callable[..., Any]) -> str:
    """ "health at tools/health.py:9": the function, and where it was defined when that is known."""
    code = getattr(function, "__code__", None)
    if code is None:
        return function.__qualname__
    return f"{function.__qualname__} at {shown_path(code.co_filename)}:{code.co_firstlineno}"
