"""Which module holds each tool: what the build writes (`median tool-modules`), and what a deployed
function does with it (`load_tools_for`): import the module of the tool a call names, and no other.

Each test writes a tools package of its own, served through $MEDIAN_TOOLS_PACKAGE; the file the
build would write is put where a deployed function reads it (median_lambda/tool_modules.json).
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import pytest
from median_lambda.authoring import registry as registry_module
from median_lambda.authoring.registry import ToolLoadError, load_tools_for, tool_modules

from tests.authored_package import MODEL, AuthorsPackage, serving_authors_package

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from median_lambda.authoring.registry import Registry

STOCK = (
    MODEL
    + '''

@tool(risk="low", idempotent=False)
def stock_level(args: NoteInput) -> dict:
    """How many are in stock."""
    return {"inStock": 3}
'''
)
REFUNDS = (
    MODEL
    + '''

@tool(risk="reviewed")
def issue_refund(args: NoteInput) -> dict:
    """Refund an order."""
    return {"refunded": True}
'''
)
# A module whose tools come from another module of the package, which it imports.
RETURNS = """
from {package}.refunds import issue_refund
from {package}._factory import returns_tool

start_return = returns_tool()
"""
FACTORY = (
    MODEL
    + '''

def returns_tool():
    @tool(risk="medium")
    def start_return(args: NoteInput) -> dict:
        """Start a return."""
        return {"started": True}

    return start_return
'''
)
HEALTH = """
from median_lambda import diagnostics


@diagnostics
def health() -> dict:
    return {"ok": True}
"""


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scratch_registry: Registry) -> Iterator[AuthorsPackage]:
    with serving_authors_package(tmp_path, monkeypatch) as authored:
        authored.module("stock", STOCK)
        authored.module("refunds", REFUNDS)
        authored.module("returns", RETURNS.format(package=authored.name))
        authored.module("_factory", FACTORY)
        authored.module("health", HEALTH)
        yield authored


def _built(package: AuthorsPackage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, written: object) -> None:
    """`written` where a deployed function reads the build's file, read anew."""
    built = tmp_path / "tool_modules.json"
    built.write_text(json.dumps(written), encoding="utf-8")
    monkeypatch.setattr(registry_module, "PREBUILT_TOOL_MODULES", str(built))
    monkeypatch.setattr(registry_module, "_prebuilt", None)


def _imported(package: AuthorsPackage) -> list[str]:
    return sorted(name.removeprefix(f"{package.name}.") for name in sys.modules if name.startswith(f"{package.name}."))


def test_the_build_names_the_module_whose_import_registers_each_tool(package: AuthorsPackage) -> None:
    # WHEN the build asks where each tool lives
    written = tool_modules()
    # THEN each tool is named with the module whose import registered it (a tool made by a helper module's
    # function, in the module that calls it), and the diagnostics with theirs
    assert written == {
        "package": package.name,
        "tools": {
            "issueRefund": f"{package.name}.refunds",
            "startReturn": f"{package.name}.returns",
            "stockLevel": f"{package.name}.stock",
        },
        "diagnostics": f"{package.name}.health",
    }


def test_the_build_names_no_diagnostics_where_there_are_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scratch_registry: Registry
) -> None:
    with serving_authors_package(tmp_path, monkeypatch) as authored:
        authored.module("stock", STOCK)
        # WHEN the build asks where each tool lives, in a package without diagnostics
        written = tool_modules()
    # THEN the diagnostics are named by none
    assert written["diagnostics"] is None
    assert written["tools"] == {"stockLevel": f"{authored.name}.stock"}


def test_a_call_imports_only_the_module_the_build_named(
    package: AuthorsPackage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN what the build wrote for this package
    _built(package, tmp_path, monkeypatch, {"package": package.name, "tools": {"stockLevel": f"{package.name}.stock"}})
    # WHEN a call to stockLevel looks for its tool
    found = load_tools_for("stockLevel").find("stockLevel")
    # THEN it has it, having imported its module alone
    assert found is not None
    assert found.name == "stockLevel"
    assert _imported(package) == ["stock"]


def test_a_name_the_build_never_saw_imports_nothing(
    package: AuthorsPackage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN what the build wrote for this package, with no diagnostics
    written = {"package": package.name, "tools": {"stockLevel": f"{package.name}.stock"}, "diagnostics": None}
    _built(package, tmp_path, monkeypatch, written)
    # WHEN a call names a tool it does not hold, and another asks for diagnostics
    served = load_tools_for("stockLevels")
    # THEN neither is found, and no module of the package was imported
    assert served.find("stockLevels") is None
    assert load_tools_for(None).diagnostics == []
    assert _imported(package) == []


@pytest.mark.parametrize(
    "written",
    [
        pytest.param({"package": "another_package", "tools": {}}, id="for another package"),
        pytest.param({"package": "PACKAGE", "tools": {"stockLevel": "PACKAGE.refunds"}}, id="naming another module"),
        pytest.param(["not", "what", "the", "build", "writes"], id="not a table"),
        pytest.param({"package": "PACKAGE"}, id="without its tools"),
    ],
)
def test_a_file_that_does_not_tell_where_the_tool_is_leaves_every_module_imported(
    package: AuthorsPackage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, written: object
) -> None:
    # GIVEN a file beside the handler that cannot tell where stockLevel lives
    text = json.dumps(written).replace("PACKAGE", package.name)
    _built(package, tmp_path, monkeypatch, json.loads(text))
    # WHEN a call to stockLevel looks for its tool
    found = load_tools_for("stockLevel").find("stockLevel")
    # THEN it finds it, as a source checkout does: every module imported
    assert found is not None
    assert _imported(package) == ["_factory", "health", "refunds", "returns", "stock"]


def test_a_module_that_fails_names_itself_and_its_line_and_is_not_run_again(
    package: AuthorsPackage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN what the build wrote, and a refunds module that fails where it is deployed
    runs = (
        "import sys\n_package = sys.modules[__name__.rpartition('.')[0]]\n"
        "_package.runs = getattr(_package, 'runs', 0) + 1\n"
    )
    package.module("refunds", REFUNDS + runs + 'raise RuntimeError("no refunds desk")\n')
    written = {"package": package.name, "tools": {"issueRefund": f"{package.name}.refunds"}}
    _built(package, tmp_path, monkeypatch, written)
    # WHEN a call to issueRefund looks for its tool, twice
    failures = []
    for _ in range(2):
        with pytest.raises(ToolLoadError) as failed:
            load_tools_for("issueRefund")
        failures.append(failed.value)
    # THEN each time the error names that module and the author's line, the module run once
    assert [(failure.module, failure.lines) for failure in failures] == [
        (f"{package.name}.refunds", [f"{package.at('refunds', 18)}: RuntimeError: no refunds desk"])
    ] * 2
    assert sys.modules[package.name].runs == 1
