"""`make serve`'s reload, in process: the tools are imported anew, helpers too, and GET serves what was saved."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from devserver.inspector import route
from devserver.reloader import ToolsReloader
from handler.testing import TEST_KEY, dev_key
from tests.authored_package import MODEL, AuthorsPackage, serving_authors_package

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from handler.authoring.registry import Registry
    from handler.testing import MedianTestClient

TOKEN = "the-token-make-serve-printed"
LOCAL = {"host": "127.0.0.1:3000", "x-inspector-token": TOKEN}
# A tool whose description comes from a helper module of the author's, as shared wording might.
POINTS = (
    MODEL
    + """
from ._wording import POINTS_DESCRIPTION


@tool(risk="low", description=POINTS_DESCRIPTION)
def points_balance(args: NoteInput) -> dict:
    return {}
"""
)


@pytest.fixture
def authors_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scratch_registry: Registry
) -> Iterator[AuthorsPackage]:
    with serving_authors_package(tmp_path, monkeypatch) as package:
        yield package


def test_a_reload_imports_every_module_anew_helpers_included(
    authors_package: AuthorsPackage, client: MedianTestClient
) -> None:
    # GIVEN the tools loaded once, as make serve does at startup
    said: list[str] = []
    authors_package.module("_wording", 'POINTS_DESCRIPTION = "Tell the points."\n')
    authors_package.module("points", POINTS)
    reloader = ToolsReloader(authors_package.name, say=said.append)
    assert reloader.load() is True
    assert said == [f"Serving 1 tool from {authors_package.name}/; saving a file there reloads them."]
    assert client.manifest().body["tools"][0]["description"] == "Tell the points."
    # WHEN only the helper module changes, and the reloader is told
    authors_package.module("_wording", 'POINTS_DESCRIPTION = "Tell how many points the customer has."\n')
    reloader.load([str(authors_package.folder / "_wording.py")])
    # THEN GET serves the new text: the tool module was imported again, and the helper with it
    assert (
        said[-1]
        == f"_wording.py changed: serving 1 tool from {authors_package.name}/; saving a file there reloads them."
    )
    assert [tool["description"] for tool in client.manifest().body["tools"]] == [
        "Tell how many points the customer has."
    ]


def test_a_broken_reload_is_said_served_as_500_and_shown_until_fixed(
    authors_package: AuthorsPackage, client: MedianTestClient
) -> None:
    # GIVEN tools that load
    said: list[str] = []
    authors_package.module("_wording", 'POINTS_DESCRIPTION = "Tell the points."\n')
    authors_package.module("points", POINTS)
    reloader = ToolsReloader(authors_package.name, say=said.append)
    reloader.load()
    # WHEN a save breaks the helper
    authors_package.module("_wording", "POINTS_DESCRIPTION = undefined_wording\n")
    # THEN the reload says the line, GET answers 500 with it, and the inspector is told to look again
    with dev_key(TEST_KEY):
        revision = json.loads(route("GET", "/_inspector/api/revision", LOCAL, b"", port=3000, token=TOKEN).body)[
            "revision"
        ]
        assert reloader.load([str(authors_package.folder / "_wording.py")]) is False
        line = f"{authors_package.at('_wording', 1)}: NameError: name 'undefined_wording' is not defined"
        assert said[-2:] == [
            f"_wording.py changed: the tools in {authors_package.name}/ failed to import:\n  {line}",
            "GET answers 500 invalid_manifest until this is fixed; saving the file reloads the tools.",
        ]
        assert client.manifest().body["error"]["message"] == f"The endpoint's tools failed to import: {line}"
        after = json.loads(route("GET", "/_inspector/api/revision", LOCAL, b"", port=3000, token=TOKEN).body)[
            "revision"
        ]
        assert after > revision
        # WHEN it is fixed
        authors_package.module("_wording", 'POINTS_DESCRIPTION = "Tell the points, again."\n')
        assert reloader.load([str(authors_package.folder / "_wording.py")]) is True
    # THEN the tools are served again
    assert [tool["description"] for tool in client.manifest().body["tools"]] == ["Tell the points, again."]


def test_a_reload_that_breaks_a_sync_rule_says_which(authors_package: AuthorsPackage) -> None:
    # GIVEN a tool saved under a name Median keeps for itself
    said: list[str] = []
    authors_package.module("_wording", 'POINTS_DESCRIPTION = "Tell the points."\n')
    authors_package.module("points", POINTS.replace('@tool(risk="low",', '@tool(risk="low", name="reportBug",'))
    # WHEN the tools load
    ToolsReloader(authors_package.name, say=said.append).load()
    # THEN the terminal lists the problem as make check words it
    assert said == [
        f"Serving 1 tool from {authors_package.name}/, with 1 problem(s) Median would refuse:\n"
        "  reportBug: name: is reserved by Median; choose another name"
    ]


def test_a_reload_of_a_tool_without_a_description_names_its_line(authors_package: AuthorsPackage) -> None:
    # GIVEN a tool saved without a docstring or description
    said: list[str] = []
    authors_package.module("_wording", 'POINTS_DESCRIPTION = ""\n')
    authors_package.module("points", POINTS)
    # WHEN the tools load
    ToolsReloader(authors_package.name, say=said.append).load()
    # THEN the terminal names the tool's file and line, and what to write
    assert said == [
        f"The tools in {authors_package.name}/ failed to import:\n"
        f"  {authors_package.at('points', 13)}: @tool on points_balance has no description: write a docstring "
        "saying what the tool does (the agent reads it to decide when to call the tool), or give "
        '@tool(description="...")',
        "GET answers 500 invalid_manifest until this is fixed; saving the file reloads the tools.",
    ]
