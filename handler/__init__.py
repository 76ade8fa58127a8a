"""Serve tools to Median from AWS Lambda.

The authoring API is imported lazily, so that a GET, which needs none of it, does not pay
for pydantic at cold start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from handler.authoring import ToolContext, ToolError, diagnostics, tool
    from handler.settings import Settings

    # What a type checker sees: a tool writes `token: str = Secret("...")` and receives the
    # value, a str, never this declaration; so each is typed Any, as FastMCP types Depends()
    # for the same reason. At run time they are handler.dependencies' classes.
    def Secret(
        name: str | None = None,
        *,
        setting: str | None = None,
        field: str | None = None,
        cache_seconds: float = 300,
    ) -> Any: ...

    def Parameter(name: str | None = None, *, setting: str | None = None, cache_seconds: float = 300) -> Any: ...


__all__ = ["Parameter", "Secret", "Settings", "ToolContext", "ToolError", "diagnostics", "tool"]

# Where each public name lives: imported at its first use.
_HOMES = {
    "Parameter": "handler.dependencies",
    "Secret": "handler.dependencies",
    "Settings": "handler.settings",
    "ToolContext": "handler.authoring",
    "ToolError": "handler.authoring",
    "diagnostics": "handler.authoring",
    "tool": "handler.authoring",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is not None:
        import importlib

        return getattr(importlib.import_module(home), name)
    raise AttributeError(f"module 'handler' has no attribute {name!r}")
