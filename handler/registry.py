"""The tools an endpoint serves: what `@tool` records, and the loader that imports `tools/`."""

from __future__ import annotations

import importlib
import os
import pkgutil
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from pydantic import BaseModel

from handler.protocol import TOOLS_PACKAGE, TOOLS_PACKAGE_ENV


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    risk: str
    input_model: type[BaseModel]
    function: Callable[..., Any]
    model_parameter: str
    context_parameter: str | None
    idempotent: bool = True


@dataclass
class Registry:
    # A list, not a dict: two tools with one name must both reach the sync-rule checker.
    tools: list[Tool] = field(default_factory=list)
    diagnostics: list[Callable[..., Any]] = field(default_factory=list)

    def find(self, name: str) -> Tool | None:
        for registered in self.tools:
            if registered.name == name:
                return registered
        return None


registry = Registry()
_loaded_packages: set[str] = set()


def tools_package() -> str:
    """The package served: `tools`, unless $MEDIAN_TOOLS_PACKAGE names another (the framework's tests do)."""
    return os.environ.get(TOOLS_PACKAGE_ENV, "").strip() or TOOLS_PACKAGE


def load_tools(package: str | None = None) -> Registry:
    """Import every module of the tools package, but those whose names start with `_`, once."""
    package = package or tools_package()
    if package not in _loaded_packages:
        imported = importlib.import_module(package)
        for module in pkgutil.iter_modules(imported.__path__):
            if not module.name.startswith("_"):
                importlib.import_module(f"{package}.{module.name}")
        _loaded_packages.add(package)
    return registry
