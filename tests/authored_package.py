"""A tools package a test writes, importable under a name no other test uses, and served while the test runs.

The framework's tests that need a tool set of the author's making (a broken one, two with one
name) write it here; the examples in tools/ play no part.
"""

from __future__ import annotations

import sys
import textwrap
import uuid
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pytest
from median_lambda.authoring.registry import Registry, ToolLoadError, load_tools
from median_lambda.protocol import TOOLS_PACKAGE_ENV

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

# What a tool module starts with: its model, at lines 2-8.
MODEL = """
from pydantic import BaseModel

from median_lambda import tool


class NoteInput(BaseModel):
    note: str
"""


class AuthorsPackage:
    """A tools package in a temporary folder, importable under a name of its own."""

    def __init__(self, root: Path) -> None:
        self.name = f"authored_{uuid.uuid4().hex[:10]}"
        self.folder = root / self.name
        self.folder.mkdir()
        (self.folder / "__init__.py").write_text("", encoding="utf-8")

    def module(self, name: str, source: str) -> None:
        (self.folder / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")

    def at(self, module: str, line: int) -> str:
        """How a place in it is shown: relative to the working directory, which holds the package."""
        return f"{self.name}/{module}.py:{line}"

    def registered(self) -> Registry:
        """What its modules registered, apart from anything else the served registry holds."""
        served = load_tools(self.name)
        return Registry(
            tools=[tool for tool in served.tools if tool.function.__module__.startswith(f"{self.name}.")],
            diagnostics=[check for check in served.diagnostics if check.__module__.startswith(f"{self.name}.")],
        )

    def failure(self) -> ToolLoadError:
        with pytest.raises(ToolLoadError) as failed:
            load_tools(self.name)
        return failed.value


@contextmanager
def serving_authors_package(root: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AuthorsPackage]:
    """A fresh package under `root`, served ($MEDIAN_TOOLS_PACKAGE) with `root` as the working directory.

    Its modules are forgotten afterwards; the registry is the caller's to put back (scratch_registry).
    """
    package = AuthorsPackage(root)
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.chdir(root)
    monkeypatch.setenv(TOOLS_PACKAGE_ENV, package.name)
    try:
        yield package
    finally:
        for name in [name for name in sys.modules if name == package.name or name.startswith(f"{package.name}.")]:
            del sys.modules[name]
