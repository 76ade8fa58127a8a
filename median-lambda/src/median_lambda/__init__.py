"""Serve tools to Median from AWS Lambda.

The authoring API is imported lazily, so that a GET, which needs none of it, does not pay
for pydantic at cold start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from median_lambda.authoring.api import ToolContext, ToolError, diagnostics, tool
    from median_lambda.authoring.dependencies import Parameter, Secret
    from median_lambda.authoring.settings import Settings

__all__ = ["Parameter", "Secret", "Settings", "ToolContext", "ToolError", "diagnostics", "tool"]

# Where each public name lives: imported at its first use.
_HOMES = {
    "Parameter": "median_lambda.authoring.dependencies",
    "Secret": "median_lambda.authoring.dependencies",
    "Settings": "median_lambda.authoring.settings",
    "ToolContext": "median_lambda.authoring.api",
    "ToolError": "median_lambda.authoring.api",
    "diagnostics": "median_lambda.authoring.api",
    "tool": "median_lambda.authoring.api",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is not None:
        import importlib

        return getattr(importlib.import_module(home), name)
    raise AttributeError(f"module 'median_lambda' has no attribute {name!r}")
