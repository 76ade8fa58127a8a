"""Serve tools to Median from AWS Lambda.

The authoring API is imported lazily, so that a GET, which needs none of it, does not pay
for pydantic at cold start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from handler.authoring.api import ToolContext, ToolError, diagnostics, tool
    from handler.authoring.dependencies import Parameter, Secret
    from handler.authoring.settings import Settings

__all__ = ["Parameter", "Secret", "Settings", "ToolContext", "ToolError", "diagnostics", "tool"]

# Where each public name lives: imported at its first use.
_HOMES = {
    "Parameter": "handler.authoring.dependencies",
    "Secret": "handler.authoring.dependencies",
    "Settings": "handler.authoring.settings",
    "ToolContext": "handler.authoring.api",
    "ToolError": "handler.authoring.api",
    "diagnostics": "handler.authoring.api",
    "tool": "handler.authoring.api",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is not None:
        import importlib

        return getattr(importlib.import_module(home), name)
    raise AttributeError(f"module 'handler' has no attribute {name!r}")
