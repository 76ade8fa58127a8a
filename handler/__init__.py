"""Serve tools to Median from AWS Lambda.

The authoring API is imported lazily, so that a GET, which needs none of it, does not pay
for pydantic at cold start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from handler.authoring import ToolContext, ToolError, diagnostics, tool

__all__ = ["ToolContext", "ToolError", "diagnostics", "tool"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from handler import authoring

        return getattr(authoring, name)
    raise AttributeError(f"module 'handler' has no attribute {name!r}")
