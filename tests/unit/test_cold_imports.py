"""The build imports each module it recorded alone, from the artifact, as a cold POST does: a module that holds, so
imported, other than after every module's import (because another adds to it as it is imported) stops the build.

Each test lays out an artifact as the build does (median-lambda's runtime, a `tools` package, the
tool_modules.json the build writes) and runs median_lambda.build.cold_imports on it: a new process per
recorded module, on the artifact's own files.
"""

from __future__ import annotations

import json
import textwrap
from typing import TYPE_CHECKING

from median_lambda.build.cold_imports import cold_import_problems
from median_lambda.build.sources import copy_library_runtime

if TYPE_CHECKING:
    from pathlib import Path

HEADER = """
from pydantic import BaseModel, Field

from median_lambda import diagnostics, tool


class Note(BaseModel):
    note: str = Field(default="", description="Anything.")
"""
# The diagnostics run every check registered in CHECKS; other modules add theirs as they are imported.
HEALTH = (
    HEADER
    + """
CHECKS = []
SETTINGS = type("Settings", (), {})()


@diagnostics
def health() -> dict:
    return {name: check() for name, check in CHECKS}
"""
)
ORDERS_ADDS_A_CHECK = (
    HEADER
    + '''
from tools.health import CHECKS

CHECKS.append(("orders", lambda: "ok"))


@tool(risk="low")
def parcel_status(args: Note) -> dict:
    """Where an order is."""
    return {"status": "shipped"}
'''
)
ORDERS_SETS_AN_ATTRIBUTE = (
    HEADER
    + '''
from tools import health

health.SETTINGS.timeout = 5


@tool(risk="low")
def parcel_status(args: Note) -> dict:
    """Where an order is."""
    return {"status": "shipped"}
'''
)
ORDERS_ON_ITS_OWN = (
    HEADER
    + '''
@tool(risk="low")
def parcel_status(args: Note) -> dict:
    """Where an order is."""
    return {"status": "shipped"}
'''
)
# A tool whose module needs a name another module puts into it: it cannot be imported alone.
RETURNS_NEEDS_WHAT_ORDERS_PUTS = (
    HEADER
    + '''
from tools.health import order_check


@tool(risk="medium")
def start_return(args: Note) -> dict:
    """Start a return."""
    return {"started": order_check()}
'''
)
ORDERS_PUTS_A_NAME = (
    HEADER
    + '''
from tools import health

health.order_check = lambda: True


@tool(risk="low")
def parcel_status(args: Note) -> dict:
    """Where an order is."""
    return {"status": "shipped"}
'''
)
# An input model finished by another module (model_rebuild): its schema is not the same alone.
ORDERS_WITH_A_MODEL_TO_FINISH = '''
from __future__ import annotations

from pydantic import BaseModel, Field

from median_lambda import tool


class OrderInput(BaseModel):
    carrier: Carrier = Field(description="The carrier.")


@tool(risk="low")
def parcel_status(args: OrderInput) -> dict:
    """Where an order is."""
    return {"status": "shipped"}
'''
CARRIERS_FINISHES_IT = """
from pydantic import BaseModel

from tools import orders


class Carrier(BaseModel):
    name: str


orders.Carrier = Carrier
orders.OrderInput.model_rebuild()
"""
RECORDED = {"parcelStatus": "tools.orders"}


def artifact(root: Path, modules: dict[str, str], tools: dict[str, str], diagnostics: str | None) -> Path:
    """An artifact laid out as the build lays it: median-lambda's runtime, these modules of tools/, its record."""
    copy_library_runtime(root)
    (root / "tools").mkdir()
    (root / "tools" / "__init__.py").write_text("", encoding="utf-8")
    for name, source in modules.items():
        (root / "tools" / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    recorded = {"package": "tools", "tools": tools, "diagnostics": diagnostics}
    (root / "median_lambda" / "tool_modules.json").write_text(json.dumps(recorded), encoding="utf-8")
    return root


def test_modules_that_keep_to_themselves_pass(tmp_path: Path) -> None:
    # GIVEN tools that each register what they hold, and diagnostics with their own checks
    built = artifact(tmp_path, {"health": HEALTH, "orders": ORDERS_ON_ITS_OWN}, RECORDED, "tools.health")
    # WHEN each recorded module is imported alone
    # THEN nothing is named
    assert cold_import_problems(built) == []


def test_a_module_that_adds_to_anothers_list_as_it_is_imported_is_named(tmp_path: Path) -> None:
    # GIVEN orders.py appending a check to health.CHECKS as it is imported, which a diagnostics call never imports
    built = artifact(tmp_path, {"health": HEALTH, "orders": ORDERS_ADDS_A_CHECK}, RECORDED, "tools.health")
    # WHEN each recorded module is imported alone
    problems = cold_import_problems(built)
    # THEN the diagnostics' module is named with what changes, who changes it, and the two ways out
    assert problems == [
        "tools/health.py: CHECKS changes when tools/orders.py is imported, which a deployed function never does for "
        "a diagnostics call (it imports tools/health.py alone): make the change in tools/health.py itself, or import "
        "tools/orders.py from tools/health.py"
    ]


def test_a_module_that_sets_an_attribute_of_anothers_object_is_named(tmp_path: Path) -> None:
    # GIVEN orders.py setting an attribute of an object health.py holds
    built = artifact(tmp_path, {"health": HEALTH, "orders": ORDERS_SETS_AN_ATTRIBUTE}, RECORDED, "tools.health")
    # WHEN each recorded module is imported alone
    problems = cold_import_problems(built)
    # THEN the object's global is named
    assert len(problems) == 1
    assert problems[0].startswith("tools/health.py: SETTINGS changes when tools/orders.py is imported")


def test_a_module_that_cannot_be_imported_alone_is_named_at_its_line(tmp_path: Path) -> None:
    # GIVEN returns.py importing a name that only orders.py's import puts into health.py
    modules = {"health": HEALTH, "orders": ORDERS_PUTS_A_NAME, "returns": RETURNS_NEEDS_WHAT_ORDERS_PUTS}
    tools = {**RECORDED, "startReturn": "tools.returns"}
    built = artifact(tmp_path, modules, tools, "tools.health")
    # WHEN each recorded module is imported alone
    problems = cold_import_problems(built)
    # THEN a call of startReturn would fail to import its module: named at the line, with how it was imported;
    # and the name orders.py adds to health.py is named too, for the diagnostics
    lines = textwrap.dedent(RETURNS_NEEDS_WHAT_ORDERS_PUTS).splitlines()
    line = next(number for number, text in enumerate(lines, start=1) if "order_check" in text)
    assert problems[1].startswith(
        f"tools/returns.py:{line}: ImportError: cannot import name 'order_check' from 'tools.health' (tools/health.py)"
    )
    assert problems[1].endswith("(importing tools/returns.py alone, as a call of startReturn does deployed)")
    assert problems[0].startswith("tools/health.py: order_check changes when tools/orders.py is imported")
    assert len(problems) == 2


def test_a_tool_whose_input_model_another_module_finishes_is_named(tmp_path: Path) -> None:
    # GIVEN orders.py's input model naming a type carriers.py defines and rebuilds it with
    modules = {"orders": ORDERS_WITH_A_MODEL_TO_FINISH, "carriers": CARRIERS_FINISHES_IT}
    built = artifact(tmp_path, modules, RECORDED, None)
    # WHEN each recorded module is imported alone
    problems = cold_import_problems(built)
    # THEN the tool whose registration changes is named, with the module that changes it
    assert problems[-1] == (
        "tools/carriers.py: importing it changes parcelStatus as registered by tools/orders.py, which a deployed "
        "function imports alone for a call of parcelStatus"
    )


# A module whose second tool is registered only when another module has switched it on: the build, importing every
# module (a_setup.py first, by name), recorded both as orders.py's.
FLAGS = """
HISTORY = False
"""
A_SETUP = """
from tools import flags

flags.HISTORY = True
"""
ORDERS_WITH_A_SWITCHED_TOOL = (
    HEADER
    + '''
from tools import flags


@tool(risk="low")
def parcel_status(args: Note) -> dict:
    """Where an order is."""
    return {"status": "shipped"}


if flags.HISTORY:

    @tool(risk="low")
    def parcel_history(args: Note) -> dict:
        """What an order went through."""
        return {"events": []}
'''
)


def test_a_tool_its_module_registers_only_after_another_module_is_named(tmp_path: Path) -> None:
    # GIVEN orders.py registering parcelHistory only once a_setup.py has switched it on, as the build's import did
    modules = {"flags": FLAGS, "a_setup": A_SETUP, "orders": ORDERS_WITH_A_SWITCHED_TOOL}
    built = artifact(tmp_path, modules, {"parcelStatus": "tools.orders", "parcelHistory": "tools.orders"}, None)
    # WHEN each recorded module is imported alone
    # THEN the tool a deployed call of it would not find is named, with where it must be registered
    assert cold_import_problems(built) == [
        "tools/orders.py: imported alone, as a call of each of its tools does deployed, it does not register "
        "parcelHistory, which it holds once every module of tools/ is imported: register it there"
    ]


def test_nothing_recorded_runs_nothing(tmp_path: Path) -> None:
    # GIVEN a build that recorded no tool and no diagnostics
    built = artifact(tmp_path, {}, {}, None)
    # THEN there is nothing to import alone
    assert cold_import_problems(built) == []
