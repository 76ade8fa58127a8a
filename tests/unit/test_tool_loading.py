"""A tool module that fails to import is named in one line at the author's own file and line.

Each test writes a tools package of its own, under a name no other test uses, and serves it
through $MEDIAN_TOOLS_PACKAGE; the examples in tools/ play no part.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from devserver.inspector import route
from handler.manifest.build import build_manifest
from handler.testing import TEST_KEY, dev_key
from tests.authored_package import MODEL, AuthorsPackage, serving_authors_package

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from handler.authoring.registry import Registry
    from handler.testing import MedianTestClient
    from tests.conftest import LogCapture

# A tool declared at line 11 of a module that starts with MODEL.
LOOK_UP = """

@tool(risk="low")
def look_up(args: NoteInput) -> dict:
    \"\"\"Look it up.\"\"\"
"""


@pytest.fixture
def authors_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scratch_registry: Registry
) -> Iterator[AuthorsPackage]:
    with serving_authors_package(tmp_path, monkeypatch) as package:
        yield package


# (what the author wrote in broken.py, the line it fails on, what the line says is wrong)
FAILURES = {
    "a syntax error": ("x = 1\ndef lookup(:\n    pass\n", 2, "SyntaxError: invalid syntax"),
    "an indentation error": (
        "def lookup():\nreturn 1\n",
        2,
        "IndentationError: expected an indented block after function definition on line 1",
    ),
    "a name that does not exist": (
        'account = find_account("ada@example.com")\n',
        1,
        "NameError: name 'find_account' is not defined",
    ),
    "a module that is not installed": (
        "import loyalty_sdk_xyz\n",
        1,
        "ModuleNotFoundError: No module named 'loyalty_sdk_xyz'",
    ),
    "an exception raised at import": (
        'import os\n\nif "LOYALTY_URL" not in os.environ:\n    raise RuntimeError("set LOYALTY_URL")\n',
        4,
        "RuntimeError: set LOYALTY_URL",
    ),
    "an exception raised inside a library": (
        'import json\n\nSETTINGS = json.loads("{")\n',
        3,
        "JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
    ),
    "an annotation that names nothing, evaluated at def": (
        MODEL + "\n\n@tool(risk='low')\ndef lookup(args: NoteInputt) -> dict:\n    return {}\n",
        12,
        "NameError: name 'NoteInputt' is not defined",
    ),
    "a bare @tool": (
        MODEL + "\n\n@tool\ndef lookup(args: NoteInput) -> dict:\n    return {}\n",
        11,
        '@tool on lookup needs the tool\'s risk: write @tool(risk="low"), with one of low, medium, reviewed, high',
    ),
    "an annotation that names nothing, as a string": (
        "from __future__ import annotations\n"
        + MODEL
        + "\n\n@tool(risk='low')\ndef lookup(args: NoteInputt) -> dict:\n    return {}\n",
        12,
        "lookup: an annotation cannot be resolved (name 'NoteInputt' is not defined); import what it names",
    ),
    "a wrong annotation": (
        MODEL + "\n\n@tool(risk='low')\ndef lookup(args: str) -> dict:\n    return {}\n",
        11,
        "lookup: parameter 'args' must be annotated with a pydantic model "
        '(the input), ToolContext or a Settings subclass, or default to Secret("...") or Parameter("...")',
    ),
}


@pytest.mark.parametrize(("source", "line", "what"), list(FAILURES.values()), ids=list(FAILURES))
def test_a_module_that_fails_to_import_is_one_line_at_the_authors_file_and_line(
    authors_package: AuthorsPackage, source: str, line: int, what: str
) -> None:
    # GIVEN a tools package with one good module and one broken one
    authors_package.module(
        "good", MODEL + '\n\n@tool(risk=\'low\')\ndef fine(args: NoteInput) -> dict:\n    """Fine."""\n'
    )
    authors_package.module("broken", source)
    # WHEN the tools are loaded
    failure = authors_package.failure()
    # THEN the one line names the broken module's own file and line, and what is wrong, and never the framework
    assert failure.lines == [f"{authors_package.at('broken', line)}: {what}"]
    assert str(failure) == failure.lines[0]


def test_an_error_in_a_helper_module_points_at_the_helpers_line(authors_package: AuthorsPackage) -> None:
    # GIVEN a tool module that calls, at import, a helper of the author's that fails
    authors_package.module("_client", 'def connect():\n    return {}["LOYALTY_URL"]\n')
    authors_package.module("points", "from ._client import connect\n\nCLIENT = connect()\n")
    # WHEN the tools are loaded
    # THEN the line is the helper's, where the mistake is
    assert authors_package.failure().lines == [f"{authors_package.at('_client', 2)}: KeyError: 'LOYALTY_URL'"]


def test_every_broken_module_is_named_once(authors_package: AuthorsPackage) -> None:
    # GIVEN two broken modules, and a third that imports one of them
    authors_package.module("alpha", "x = undefined_alpha\n")
    authors_package.module("beta", "from . import alpha\n")
    authors_package.module("gamma", "\n\nraise ValueError('gamma is not configured')\n")
    # WHEN the tools are loaded
    # THEN each mistake is one line, in module order, and the module importing alpha adds no second one
    assert authors_package.failure().lines == [
        f"{authors_package.at('alpha', 1)}: NameError: name 'undefined_alpha' is not defined",
        f"{authors_package.at('gamma', 3)}: ValueError: gamma is not configured",
    ]


def test_a_broken_package_init_is_named_too(authors_package: AuthorsPackage) -> None:
    # GIVEN a package whose __init__.py fails
    authors_package.module("__init__", "import loyalty_sdk_xyz\n")
    # WHEN the tools are loaded
    # THEN its line is the one named
    assert authors_package.failure().lines == [
        f"{authors_package.at('__init__', 1)}: ModuleNotFoundError: No module named 'loyalty_sdk_xyz'"
    ]


def test_a_failed_load_is_not_retried_into_duplicate_tools(
    authors_package: AuthorsPackage, scratch_registry: Registry
) -> None:
    # GIVEN a module that registers one tool and then fails
    authors_package.module(
        "half", MODEL + '\n\n@tool(risk=\'low\')\ndef first(args: NoteInput) -> dict:\n    """First."""\n\nboom()\n'
    )
    # WHEN the tools are asked for twice, as two requests to one container would
    first, second = authors_package.failure(), authors_package.failure()
    # THEN both get the same line, and the module ran once: its first tool is not registered twice
    assert first.lines == second.lines == [f"{authors_package.at('half', 15)}: NameError: name 'boom' is not defined"]
    assert [tool.name for tool in scratch_registry.tools].count("first") == 1


def test_two_tools_with_one_name_stop_the_load_naming_both_places(
    authors_package: AuthorsPackage, scratch_registry: Registry
) -> None:
    # GIVEN two modules that each declare a tool called lookUp, and a third with another name
    for module in ("orders", "returns", "stock"):
        authors_package.module(
            module, MODEL + LOOK_UP.replace("look_up", "look_up" if module != "stock" else "in_stock")
        )
    # WHEN the tools are loaded
    failure = authors_package.failure()
    # THEN the load fails at the second, naming the first: which of the two a call reached was the modules' order's
    assert failure.lines == [
        f"{authors_package.at('returns', 11)}: two tools are named lookUp, here and at "
        f'{authors_package.at("orders", 11)}: a call reaches only one; rename one (@tool(name="..."))'
    ]


def test_two_diagnostics_functions_are_named_at_both_places(
    authors_package: AuthorsPackage, scratch_registry: Registry
) -> None:
    # GIVEN two modules that each mark a @diagnostics function
    for module in ("health", "status"):
        authors_package.module(
            module, f"from handler import diagnostics\n\n\n@diagnostics\ndef {module}():\n    return 1\n"
        )
    # WHEN the manifest is checked
    _, problems = build_manifest(authors_package.registered())
    # THEN the problem names both, where each is
    assert [str(problem) for problem in problems] == [
        "manifest: diagnostics: has 2 @diagnostics functions "
        f"(health at {authors_package.at('health', 4)}, status at {authors_package.at('status', 4)}); at most one"
    ]


def broken(authors_package: AuthorsPackage) -> str:
    authors_package.module("points", "\n\naccount = find_account('ada@example.com')\n")
    return f"{authors_package.at('points', 3)}: NameError: name 'find_account' is not defined"


def test_get_on_tools_that_fail_to_import_answers_500_invalid_manifest_with_the_line(
    authors_package: AuthorsPackage, client: MedianTestClient, logs: LogCapture
) -> None:
    # GIVEN served tools whose module fails to import
    line = broken(authors_package)
    # WHEN Median GETs the manifest
    answer = client.manifest()
    # THEN it is 500 invalid_manifest with the author's line, and the log names it without a traceback
    assert answer.status == 500
    assert answer.body == {
        "error": {"code": "invalid_manifest", "message": f"The endpoint's tools failed to import: {line}"}
    }
    [record] = [record for record in logs.records() if record["level"] == "ERROR"]
    assert record["problems"] == [line]
    assert "Traceback" not in logs.text()
    assert "handler/" not in logs.text()


def test_post_on_tools_that_fail_to_import_answers_a_clear_500(
    authors_package: AuthorsPackage, client: MedianTestClient, logs: LogCapture
) -> None:
    # GIVEN served tools whose module fails to import
    line = broken(authors_package)
    # WHEN Median calls a tool
    answer = client.call("points", {"note": "x"})
    # THEN it is 500 with a message that says so and a reference, which the log line carries with the author's line
    assert answer.status == 500
    error = answer.body["error"]
    assert error["code"] == "internal_error"
    assert error["message"].startswith("The endpoint's tools failed to import, so no tool can run; reference ")
    [record] = [record for record in logs.records() if record["level"] == "ERROR"]
    assert record["message"] == "The tools failed to import; no tool can run"
    assert record["problems"] == [line]
    assert record["reference"] in error["message"]
    assert "Traceback" not in logs.text()


def test_the_inspector_shows_the_line_of_a_module_that_fails_to_import(authors_package: AuthorsPackage) -> None:
    # GIVEN served tools whose module fails to import
    line = broken(authors_package)
    # WHEN the inspector page asks for the manifest
    with dev_key(TEST_KEY):
        reply = route(
            "GET",
            "/_inspector/api/manifest",
            {"host": "127.0.0.1:3000", "x-inspector-token": "t"},
            b"",
            port=3000,
            token="t",
        )
    # THEN it gets GET's code and the lines to show
    assert reply.status == 500
    error = json.loads(reply.body)["error"]
    assert error["code"] == "invalid_manifest"
    assert error["lines"] == [line]
