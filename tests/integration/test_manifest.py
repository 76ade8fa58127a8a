"""GET: the manifest Median syncs, exactly in the seed page's shape; and what a broken tool set gets instead."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest
from pydantic import BaseModel, Field, create_model

from handler import ToolContext, diagnostics, tool
from handler.manifest.rules import check_manifest
from handler.protocol import TOOLS_PACKAGE_ENV
from tests.integration.conftest import REPO_ROOT
from tests.scratch_tools import EMPTY_TOOLS, SAMPLE_TOOLS

if TYPE_CHECKING:
    from collections.abc import Callable

    from handler.authoring.registry import Registry
    from handler.testing import TestAnswer
    from tests.conftest import EventBuilder
    from tests.integration.conftest import ToolsPackage


@pytest.fixture
def get_manifest(
    key_in_secrets_manager: str, make_event: EventBuilder, invoke: Callable[..., TestAnswer]
) -> Callable[..., TestAnswer]:
    def get(shape: str = "http_api_v2") -> TestAnswer:
        return invoke(make_event(shape, "GET"))

    return get


def test_the_seed_pages_example_tool_is_served_as_the_page_shows_it(
    shape: str, scratch_registry: Registry, get_manifest: Callable[..., TestAnswer], seed_manifest: dict[str, Any]
) -> None:
    # GIVEN the example answer on Median's GET page, and its one tool written as an author writes a
    # tool (a model with one described string field, a docstring), beside a diagnostics function
    [entry] = seed_manifest["tools"]
    [(field, node)] = entry["inputSchema"]["properties"].items()
    seed_input = create_model("SeedInput", **{field: (str, Field(description=node["description"]))})

    def seed_tool(args: BaseModel) -> dict[str, object]:
        return {}

    seed_tool.__annotations__["args"] = seed_input  # the model is built from the page, so named at run time
    seed_tool.__doc__ = entry["description"]
    tool(risk=entry["risk"], name=entry["name"])(seed_tool)

    @diagnostics
    def health(ctx: ToolContext) -> str:
        return "ok"

    # WHEN Median GETs the manifest
    answer = get_manifest(shape)
    # THEN the whole answer equals the page's, as JSON: entry, version and diagnostics
    assert answer.status == 200
    assert answer.body == seed_manifest


def test_the_manifest_carries_every_risk_and_field_kind(
    sample_tools: Registry, get_manifest: Callable[..., TestAnswer]
) -> None:
    # GIVEN the sample tools (tests/sample_tools/), a tool of each risk and a field of each kind
    tools = get_manifest().body["tools"]
    properties = [node for entry in tools for node in entry["inputSchema"]["properties"].values()]
    optional = [
        name
        for entry in tools
        for name in entry["inputSchema"]["properties"]
        if name not in entry["inputSchema"].get("required", [])
    ]
    # THEN the manifest carries each risk; string, number, integer, boolean, enum and optional fields
    assert {entry["risk"] for entry in tools} == {"low", "medium", "reviewed", "high"}
    assert {node["type"] for node in properties} == {"string", "number", "integer", "boolean"}
    assert any("enum" in node for node in properties)
    assert optional


class _LateInput(BaseModel):
    ticketNumber: str


def test_the_manifest_is_built_once_per_container(
    sample_tools: Registry, get_manifest: Callable[..., TestAnswer]
) -> None:
    # GIVEN a container that has answered one GET
    first = get_manifest()

    # WHEN a tool is registered afterwards (as no deployed code does) and Median GETs again
    @tool(risk="low")
    def late_tool(args: _LateInput) -> str:
        """Registered after the first GET."""
        return "late"

    second = get_manifest()
    # THEN the second answer is the first, built once, not per request
    assert second.body == first.body
    assert "lateTool" not in [entry["name"] for entry in second.body["tools"]]


BROKEN_TOOLS = """
    from pydantic import BaseModel, Field

    from handler import tool


    class HandoffInput(BaseModel):
        ticketNumber: str = Field(description="The ticket number.")
        tags: list[str]


    @tool(risk="urgent")
    def request_handoff(args: HandoffInput) -> str:
        \"\"\"Hand the ticket to a person.\"\"\"
        return "handed off"
"""

BROKEN_TOOLS_PROBLEMS = [
    "requestHandoff: inputSchema.properties.tags: is a list; a field must be one scalar "
    "(string, number, integer or boolean)",
    "requestHandoff: name: is reserved by Median; choose another name",
    "requestHandoff: risk: must be one of low, medium, reviewed, high",
]


@pytest.fixture
def broken_tools(tools_package: ToolsPackage) -> ToolsPackage:
    """A tools package that breaks three sync rules in one tool, and holds a private module that must not load."""
    tools_package.module("handoff", BROKEN_TOOLS)
    tools_package.module("_scratch", "raise RuntimeError('modules starting with _ are not tools')")
    return tools_package


def test_make_check_fails_on_a_broken_tool_set_one_line_per_problem(broken_tools: ToolsPackage) -> None:
    # GIVEN a tool set that breaks Median's sync rules
    # WHEN `python -m handler check` runs on it (what `make check` runs)
    finished = broken_tools.run("-m", "handler", "check")
    # THEN it exits 1, printing one line per problem naming tool, field and rule, then a count
    assert finished.returncode == 1, finished.stderr
    assert finished.stderr.splitlines() == [
        *BROKEN_TOOLS_PROBLEMS,
        "3 problem(s): Median would refuse this manifest.",
    ]


def test_make_check_names_a_tool_module_that_fails_to_import(tools_package: ToolsPackage) -> None:
    # GIVEN a tool whose signature the handler could not call (no pydantic model parameter)
    tools_package.module(
        "lookup",
        """
        from handler import tool


        @tool(risk="low")
        def lookup(ticket_number: str) -> str:
            \"\"\"Look a ticket up.\"\"\"
            return ticket_number
        """,
    )
    # WHEN `python -m handler check` runs
    finished = tools_package.run("-m", "handler", "check")
    # THEN it exits 1 with one line at the author's file and line saying what to change, not a traceback
    assert finished.returncode == 1
    first, count = finished.stderr.splitlines()
    assert first == (
        "tools/lookup.py:5: lookup: parameter 'ticket_number' must be annotated with a pydantic model "
        '(the input), ToolContext or a Settings subclass, or default to Secret("...") or Parameter("...")'
    )
    assert count == "1 problem(s): Median would refuse this manifest."


def test_make_check_names_every_module_that_fails_to_import_at_its_line(tools_package: ToolsPackage) -> None:
    # GIVEN a bare @tool in one module and a name that does not exist in another
    tools_package.module(
        "points",
        """
        from pydantic import BaseModel

        from handler import tool


        class PointsInput(BaseModel):
            email: str


        @tool
        def points_balance(args: PointsInput) -> dict:
            \"\"\"Tell how many points the customer has.\"\"\"
            return {}
        """,
    )
    tools_package.module("rewards", "\n\naccount = find_account('ada@example.com')\n")
    # WHEN `python -m handler check` runs
    finished = tools_package.run("-m", "handler", "check")
    # THEN each is one line at its own file and line, and the check fails
    assert finished.returncode == 1
    assert finished.stderr.splitlines()[:2] == [
        'tools/points.py:11: @tool on points_balance needs the tool\'s risk: write @tool(risk="low"), '
        "with one of low, medium, reviewed, high",
        "tools/rewards.py:3: NameError: name 'find_account' is not defined",
    ]
    assert "Traceback" not in finished.stderr


def run_handler_cli(tools_package: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    """`python -m handler ...` in this repository, serving the named tools package."""
    env = {**os.environ, TOOLS_PACKAGE_ENV: tools_package}
    return subprocess.run(  # noqa: S603 - our own interpreter, our own arguments
        [sys.executable, "-m", "handler", *arguments],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_make_check_passes_a_tool_set_median_accepts() -> None:
    # GIVEN a full tool set that keeps every rule: four tools and a diagnostics function
    # WHEN `python -m handler check` runs on it
    finished = run_handler_cli(SAMPLE_TOOLS, "check")
    # THEN it exits 0, and says in one line what it counted and that Median would accept the manifest
    assert finished.returncode == 0, finished.stderr
    [line] = finished.stdout.splitlines()
    assert line.startswith("OK: 4/20 tools, ")
    assert line.endswith("diagnostics on. Median would accept this manifest.")
    assert finished.stderr == ""


def test_make_check_passes_an_endpoint_with_no_tools_saying_so() -> None:
    # GIVEN a tools package with no tool in it, as tools/ is once the examples are deleted
    # WHEN `python -m handler check` runs (what `make check` and `make build` run)
    finished = run_handler_cli(EMPTY_TOOLS, "check")
    # THEN it exits 0, saying in one line that there are no tools yet
    assert finished.returncode == 0, finished.stderr
    [line] = finished.stdout.splitlines()
    assert line.startswith("OK: no tools yet")
    assert finished.stderr == ""


def test_an_endpoint_with_no_tools_serves_an_empty_manifest_median_accepts(
    scratch_registry: Registry, get_manifest: Callable[..., TestAnswer]
) -> None:
    # GIVEN no tools at all
    # WHEN the build prints the manifest (`python -m handler manifest`), and Median GETs it
    printed = run_handler_cli(EMPTY_TOOLS, "manifest")
    answer = get_manifest()
    # THEN both are the empty manifest, byte for byte, and it keeps every sync rule
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == '{"version":1,"tools":[],"diagnostics":false}\n'
    assert answer.status == 200
    assert answer.body == {"version": 1, "tools": [], "diagnostics": False}
    assert check_manifest(answer.body) == []


def test_a_broken_tool_set_is_served_as_500_invalid_manifest(broken_tools: ToolsPackage) -> None:
    # GIVEN the same broken tool set, deployed anyway
    # WHEN Median GETs the manifest
    answer = broken_tools.send("manifest()")
    # THEN 500 invalid_manifest, listing every broken rule, rather than a manifest Median would refuse
    assert answer.status == 500
    assert answer.headers["Content-Type"] == "application/json"
    error = answer.body["error"]
    assert error["code"] == "invalid_manifest"
    for problem in BROKEN_TOOLS_PROBLEMS:
        assert problem in error["message"]


NO_DIAGNOSTICS_TOOLS = """
    from pydantic import BaseModel

    from handler import tool


    class PingInput(BaseModel):
        echo: str


    @tool(risk="low")
    def ping(args: PingInput) -> str:
        \"\"\"Answer with what was sent.\"\"\"
        return args.echo
"""


def test_diagnostics_without_a_diagnostics_function_is_404_no_diagnostics(tools_package: ToolsPackage) -> None:
    # GIVEN a tool set with no @diagnostics function
    tools_package.module("ping", NO_DIAGNOSTICS_TOOLS)
    # WHEN Median asks for diagnostics
    answer = tools_package.send("diagnostics()")
    # THEN 404 no_diagnostics
    assert answer.status == 404
    assert answer.body["version"] == 1
    assert answer.body["ok"] is False
    assert answer.body["error"]["code"] == "no_diagnostics"


def test_a_tool_set_without_diagnostics_says_so_in_the_manifest(tools_package: ToolsPackage) -> None:
    # GIVEN the same tool set
    tools_package.module("ping", NO_DIAGNOSTICS_TOOLS)
    # WHEN Median GETs the manifest
    answer = tools_package.send("manifest()")
    # THEN diagnostics is false, and its one tool is there
    assert answer.status == 200
    assert answer.body["diagnostics"] is False
    assert [entry["name"] for entry in answer.body["tools"]] == ["ping"]
