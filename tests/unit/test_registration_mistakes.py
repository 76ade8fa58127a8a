"""Mistakes that show only once a tool is registered still name the author's own file and line.

A postponed annotation that names nothing (`amountCents: itn` under `from __future__ import
annotations`, which the scaffold uses), a model pydantic refuses, a schema that cannot be built,
a tool without a description, two tools with one name:
each is one `tools/<file>.py:<line>: <what is wrong>` line, the same in `make check`, GET's 500
`invalid_manifest` and the inspector, never a pydantic traceback or a 500 `internal_error`.
"""

from __future__ import annotations

import json
import textwrap
from typing import TYPE_CHECKING

import pytest

from devserver.inspector import route
from handler.cli.commands import main
from handler.testing import TEST_KEY, dev_key
from tests.authored_package import AuthorsPackage, serving_authors_package

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from handler.authoring.registry import Registry
    from handler.testing import MedianTestClient
    from tests.conftest import LogCapture

POSTPONED = "from __future__ import annotations\n"
# Lines 1-5 of a module: its imports. A model follows at line 8.
IMPORTS = """
from typing import Callable, Optional

from pydantic import BaseModel, ConfigDict, Field

from handler import tool
"""
REFUND = """

@tool(risk="high")
def refund(args: RefundInput) -> dict[str, object]:
    \"\"\"Refund an order.\"\"\"
    return {}
"""

# (what the author wrote, what the line it is named at begins with, what the line says is wrong)
MISTAKES = {
    "a misspelt field type, postponed": (
        POSTPONED
        + IMPORTS
        + """
class RefundInput(BaseModel):
    orderNumber: str = Field(description="The order number.")
    amountCents: itn = Field(description="The amount, in cents.")
"""
        + REFUND,
        "amountCents: itn",
        "RefundInput.amountCents: the annotation names 'itn', which is not defined or imported in this module; "
        "fix its spelling, or import it",
    ),
    "a misspelt type in a Settings field, postponed": (
        POSTPONED
        + IMPORTS
        + """
from handler import Settings
class RefundInput(BaseModel):
    orderNumber: str = Field(description="The order number.")
class RefundSettings(Settings):
    refund_limit_cents: itn = 5000


@tool(risk="high")
def refund(args: RefundInput, settings: RefundSettings) -> dict[str, object]:
    \"\"\"Refund an order.\"\"\"
    return {}
""",
        "refund_limit_cents: itn",
        "RefundSettings.refund_limit_cents: the annotation names 'itn', which is not defined or imported in this "
        "module; fix its spelling, or import it (taken by refund)",
    ),
    "a misspelt field type, not postponed": (
        IMPORTS
        + """
class RefundInput(BaseModel):
    orderNumber: str = Field(description="The order number.")
    amountCents: itn = Field(description="The amount, in cents.")
"""
        + REFUND,
        "amountCents: itn",
        "NameError: name 'itn' is not defined",
    ),
    "a misspelt type in an inherited field": (
        POSTPONED
        + IMPORTS
        + """
class OrderInput(BaseModel):
    orderNumber: Optionl[str] = Field(default=None, description="The order number.")


class RefundInput(OrderInput):
    amountCents: int = Field(description="The amount, in cents.")
"""
        + REFUND,
        "orderNumber: Optionl",
        "OrderInput.orderNumber: the annotation names 'Optionl', which is not defined or imported in this module; "
        "fix its spelling, or import it",
    ),
    "a field type with no JSON schema": (
        POSTPONED
        + IMPORTS
        + """
class RefundInput(BaseModel):
    orderNumber: str = Field(description="The order number.")
    notify: Callable[[], None]
"""
        + REFUND,
        "notify: Callable",
        "RefundInput.notify: Median's input schema cannot be built for this field (Cannot generate a JsonSchema "
        "for core_schema.CallableSchema); a field is one of str, float, int, bool, a Literal or an Enum",
    ),
    "a class of the author's as a field type, allowed": (
        IMPORTS
        + """
class Carrier:
    pass
class RefundInput(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    carrier: Carrier
"""
        + REFUND,
        "carrier: Carrier",
        "RefundInput.carrier: Median's input schema cannot be built for this field (Cannot generate a JsonSchema "
        "for core_schema.IsInstanceSchema (<class '{package}.refunds.Carrier'>)); a field is one of str, float, "
        "int, bool, a Literal or an Enum",
    ),
    "a field without an annotation": (
        IMPORTS
        + """
class RefundInput(BaseModel):
    orderNumber = Field(description="The order number.")
"""
        + REFUND,
        "orderNumber =",
        'RefundInput.orderNumber: a field needs a type annotation, as in `orderNumber: str = Field(description="...")`',
    ),
    "a class of the author's as a field type": (
        POSTPONED
        + IMPORTS
        + """
class Carrier:
    pass
class RefundInput(BaseModel):
    orderNumber: str
    carrier: Carrier
"""
        + REFUND,
        "carrier: Carrier",
        "RefundInput.carrier: pydantic cannot validate Carrier, a class it does not know; a field is one of str, "
        "float, int, bool, a Literal or an Enum",
    ),
    "a validator naming no field": (
        IMPORTS
        + """
from pydantic import field_validator
class RefundInput(BaseModel):
    orderNumber: str
    @field_validator("orderNumbr")
    @classmethod
    def upper(cls, value: str) -> str:
        return value.upper()
"""
        + REFUND,
        "@field_validator",
        "RefundInput.upper: the validator names 'orderNumbr', which is no field of RefundInput; name one of its "
        "fields: orderNumber",
    ),
    "a refusal the loader does not know by its code, on one line": (
        IMPORTS
        + """
class RefundInput(BaseModel):
    orderNumber: str
    class Config:
        frozen = True
    model_config = ConfigDict(frozen=True)
"""
        + REFUND,
        "class RefundInput",
        'PydanticUserError: "Config" and "model_config" cannot be used together '
        "(see https://errors.pydantic.dev/{pydantic}/u/config-both)",
    ),
    "a misspelt attribute in the tool's annotation, postponed": (
        POSTPONED
        + IMPORTS
        + """
import pydantic

@tool(risk="high")
def refund(args: pydantic.BaseModle) -> dict[str, object]:
    return {}
""",
        "@tool",
        "refund: an annotation cannot be resolved (AttributeError: module 'pydantic' has no attribute "
        "'BaseModle'); correct what it names",
    ),
    "a tool without a docstring": (
        IMPORTS
        + """
class RefundInput(BaseModel):
    orderNumber: str = Field(description="The order number.")


@tool(risk="high")
def refund(args: RefundInput) -> dict[str, object]:
    return {}
""",
        "@tool",
        "@tool on refund has no description: write a docstring saying what the tool does (the agent reads it to "
        'decide when to call the tool), or give @tool(description="...")',
    ),
    "two tools with one name": (
        IMPORTS
        + """
class RefundInput(BaseModel):
    orderNumber: str = Field(description="The order number.")
"""
        + REFUND
        + """

@tool(risk="high", name="refund")
def refund_again(args: RefundInput) -> dict[str, object]:
    \"\"\"Refund an order, as another module's copy would.\"\"\"
    return {}
""",
        '@tool(risk="high", name="refund")',
        "two tools are named refund, here and at {package}/refunds.py:12: a call reaches only one; rename one "
        '(@tool(name="..."))',
    ),
}


@pytest.fixture
def authors_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scratch_registry: Registry
) -> Iterator[AuthorsPackage]:
    with serving_authors_package(tmp_path, monkeypatch) as package:
        yield package


def expected(authors_package: AuthorsPackage, source: str, starts: str, what: str) -> str:
    import pydantic

    written = textwrap.dedent(source).splitlines()
    line = 1 + next(number for number, text in enumerate(written) if text.strip().startswith(starts))
    version = ".".join(pydantic.VERSION.split(".")[:2])
    return f"{authors_package.at('refunds', line)}: {what.format(package=authors_package.name, pydantic=version)}"


@pytest.fixture(params=list(MISTAKES.values()), ids=list(MISTAKES))
def mistake(request: pytest.FixtureRequest, authors_package: AuthorsPackage) -> str:
    """The mistake, written in the served package's refunds.py; the line that must name it."""
    source, starts, what = request.param
    authors_package.module("refunds", source)
    return expected(authors_package, source, starts, what)


def test_the_loader_names_the_authors_line(authors_package: AuthorsPackage, mistake: str) -> None:
    # GIVEN a tools package with the mistake
    # WHEN the tools are loaded
    failure = authors_package.failure()
    # THEN it is one line, at the author's file and line, saying what is wrong
    assert failure.lines == [mistake]


def test_make_check_prints_the_line_and_no_traceback(
    authors_package: AuthorsPackage, mistake: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a tools package with the mistake
    # WHEN `make check` runs
    status = main(["check"])
    # THEN it fails with the line, and no traceback
    printed = capsys.readouterr()
    assert status == 1
    assert printed.err.splitlines() == [mistake, "1 problem(s): Median would refuse this manifest."]
    assert "Traceback" not in printed.out + printed.err


def test_the_builds_manifest_step_prints_the_line(
    authors_package: AuthorsPackage, mistake: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a tools package with the mistake
    # WHEN the build writes the manifest (`python -m handler manifest`, which sam build runs)
    status = main(["manifest"])
    # THEN it fails with the line alone, and no manifest
    printed = capsys.readouterr()
    assert status == 1
    assert printed.err.splitlines() == [mistake]
    assert printed.out == ""


def test_get_answers_500_invalid_manifest_with_the_line(
    authors_package: AuthorsPackage, mistake: str, client: MedianTestClient, logs: LogCapture
) -> None:
    # GIVEN served tools with the mistake
    # WHEN Median GETs the manifest
    answer = client.manifest()
    # THEN it is 500 invalid_manifest naming the line, not internal_error
    assert (answer.status, answer.body) == (
        500,
        {"error": {"code": "invalid_manifest", "message": f"The endpoint's tools failed to import: {mistake}"}},
    )
    assert "Traceback" not in logs.text()


# The token make serve would print: without it the inspector's API answers nothing.
INSPECTOR_TOKEN = "the-token-make-serve-printed"


def test_the_inspector_shows_the_line(authors_package: AuthorsPackage, mistake: str) -> None:
    # GIVEN served tools with the mistake
    # WHEN the inspector page asks for the manifest
    with dev_key(TEST_KEY):
        headers = {"host": "127.0.0.1:3000", "x-inspector-token": INSPECTOR_TOKEN}
        reply = route("GET", "/_inspector/api/manifest", headers, b"", port=3000, token=INSPECTOR_TOKEN)
    # THEN it gets GET's code and the line to show
    error = json.loads(reply.body)["error"]
    assert (reply.status, error["code"], error["lines"]) == (500, "invalid_manifest", [mistake])


def test_a_type_defined_later_in_the_module_is_no_mistake(
    authors_package: AuthorsPackage, client: MedianTestClient
) -> None:
    # GIVEN a postponed annotation naming an Enum the module defines after the tool
    authors_package.module(
        "refunds",
        POSTPONED
        + IMPORTS
        + """
class RefundInput(BaseModel):
    reason: Reason = Field(description="Why the customer wants a refund.")
"""
        + REFUND.replace("return {}", "return {'reason': args.reason}")
        + """
from enum import StrEnum


class Reason(StrEnum):
    LATE = "late"
""",
    )
    # WHEN the manifest is asked for, and the tool called
    manifest, call = client.manifest(), client.call("refund", {"reason": "late"})
    # THEN both are served: pydantic finishes the model once the module has run
    assert manifest.status == 200
    assert manifest.body["tools"][0]["inputSchema"]["properties"]["reason"]["enum"] == ["late"]
    assert (call.status, call.body["output"]) == (200, {"reason": "late"})
