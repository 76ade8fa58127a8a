"""An authoring mistake is refused at import, naming the function, the author's file and line, and the fix."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda import ToolContext, diagnostics, tool
from median_lambda.authoring.registry import Registry
from median_lambda.manifest.build import build_manifest
from median_lambda.runtime.env import shown_path
from pydantic import BaseModel

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

THIS_FILE = shown_path(__file__)


class PointsInput(BaseModel):
    email: str


def decorator_line() -> int:
    """Where the decorator under test is written: after the caller's line and a blank one."""
    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return frame.f_back.f_lineno + 2


@pytest.fixture
def unchanged(scratch_registry: Registry) -> Iterator[None]:
    """Asserts, after the test, that nothing it refused was registered."""
    before = (list(scratch_registry.tools), list(scratch_registry.diagnostics))
    yield
    assert (scratch_registry.tools, scratch_registry.diagnostics) == before


@pytest.mark.usefixtures("unchanged")
def test_a_bare_tool_decorator_is_refused_naming_the_function_its_line_and_the_fix() -> None:
    # GIVEN @tool written without parentheses, as @diagnostics is
    # WHEN the module defining it is imported
    # THEN it is a TypeError, not a tool that silently vanishes from the manifest
    with pytest.raises(TypeError) as refused:
        line = decorator_line()

        @tool
        def points_balance(args: PointsInput) -> dict[str, Any]:
            """Tell how many points the customer has."""
            return {}

    assert str(refused.value) == (
        f"{THIS_FILE}:{line}: @tool on points_balance needs the tool's risk: "
        'write @tool(risk="low"), with one of low, medium, reviewed, high'
    )


@pytest.mark.usefixtures("unchanged")
def test_empty_parentheses_are_refused_the_same_way() -> None:
    # GIVEN @tool() with no risk
    with pytest.raises(TypeError) as refused:
        line = decorator_line()

        @tool()
        def points_balance(args: PointsInput) -> dict[str, Any]:
            """Tell how many points the customer has."""
            return {}

    # THEN the author is told which function, where, and what to write
    assert str(refused.value) == (
        f"{THIS_FILE}:{line}: @tool on points_balance needs the tool's risk: "
        'write @tool(risk="low"), with one of low, medium, reviewed, high'
    )


@pytest.mark.usefixtures("unchanged")
@pytest.mark.parametrize("risk", [3, None, ["low"], b"low", 0.5], ids=repr)
def test_a_risk_that_is_not_a_string_is_refused(risk: object) -> None:
    # GIVEN a risk of another type than str
    with pytest.raises(TypeError) as refused:
        line = decorator_line()

        @tool(risk)  # type: ignore[arg-type]
        def points_balance(args: PointsInput) -> dict[str, Any]:
            """Tell how many points the customer has."""
            return {}

    # THEN the message quotes what was given and says what to write instead
    assert str(refused.value) == (
        f"{THIS_FILE}:{line}: @tool on points_balance was given risk={risk!r}, which is not a string; "
        'write @tool(risk="low"), with one of low, medium, reviewed, high'
    )


@pytest.mark.usefixtures("unchanged")
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"name": 5}, "was given name=5; name is a string, or left out"),
        ({"description": ["Points."]}, "was given description=['Points.']; description is a string, or left out"),
        ({"idempotent": "no"}, "was given idempotent='no'; write idempotent=True or idempotent=False"),
    ],
    ids=["name", "description", "idempotent"],
)
def test_options_of_the_wrong_type_are_refused(options: dict[str, Any], message: str) -> None:
    # GIVEN an option given a value of the wrong type (a truthy "no" would make a refund run every time)
    with pytest.raises(TypeError) as refused:
        line = decorator_line()

        @tool("low", **options)
        def points_balance(args: PointsInput) -> dict[str, Any]:
            """Tell how many points the customer has."""
            return {}

    # THEN the author is told which option, and what it takes
    assert str(refused.value) == f"{THIS_FILE}:{line}: @tool on points_balance {message}"


def test_an_unknown_risk_string_is_a_sync_rule_problem_naming_the_tool(scratch_registry: Registry) -> None:
    # GIVEN a risk that is a string, but not one Median knows (a typo)
    @tool(risk="lo")
    def points_balance(args: PointsInput) -> dict[str, Any]:
        """Tell how many points the customer has."""
        return {}

    # WHEN the manifest is checked, as make check, make serve and the build do
    _, problems = build_manifest(Registry(tools=[scratch_registry.tools[-1]]))
    # THEN it is reported with every other sync-rule problem, naming the tool and the known risks
    assert [str(problem) for problem in problems] == ["pointsBalance: risk: must be one of low, medium, reviewed, high"]


@pytest.mark.usefixtures("unchanged")
@pytest.mark.parametrize("kind", ["generator", "async generator"])
def test_a_tool_that_yields_is_refused(kind: str) -> None:
    # GIVEN a tool written as a generator, whose body would never run when called
    def points_balance(args: PointsInput) -> Iterator[int]:
        """Tell how many points the customer has."""
        yield 1

    async def points_stream(args: PointsInput) -> Any:
        """Tell how many points the customer has."""
        yield 1

    function: Callable[..., Any] = points_balance if kind == "generator" else points_stream
    # WHEN it is declared a tool
    # THEN the author is told to return the answer
    with pytest.raises(TypeError, match=rf"{function.__name__} yields; a tool returns its answer once: use return"):
        tool(risk="low")(function)


@pytest.mark.usefixtures("unchanged")
def test_an_annotation_naming_nothing_is_refused_with_the_name() -> None:
    # GIVEN a tool whose annotation names a class the module never imported (a string annotation,
    # as `from __future__ import annotations` makes every one)
    def points_balance(args: PointsInputt) -> dict[str, Any]:  # type: ignore[name-defined]  # noqa: F821
        """Tell how many points the customer has."""
        return {}

    # WHEN it is declared a tool
    # THEN the author is told which name cannot be resolved, and where
    with pytest.raises(TypeError) as refused:
        tool(risk="low")(points_balance)
    assert str(refused.value).startswith(f"{THIS_FILE}:")
    assert "points_balance: an annotation cannot be resolved (name 'PointsInputt' is not defined)" in str(refused.value)


@pytest.mark.usefixtures("unchanged")
@pytest.mark.parametrize("given", ["()", "('health')"])
def test_diagnostics_with_parentheses_is_refused_naming_the_function_and_its_line(given: str) -> None:
    # GIVEN @diagnostics written with parentheses, as @tool(...) is
    # WHEN the module defining it is imported
    # THEN the author is told to write it bare, where they wrote it, naming the function
    with pytest.raises(TypeError) as refused:
        line = decorator_line()

        @(diagnostics() if given == "()" else diagnostics("health"))  # type: ignore[arg-type]
        def health(ctx: ToolContext) -> dict[str, str]:
            return {"status": "ok"}

    assert str(refused.value) == (
        f"{THIS_FILE}:{line}: @diagnostics({'' if given == '()' else repr('health')}) on health: "
        "write @diagnostics, without parentheses"
    )


@pytest.mark.usefixtures("unchanged")
def test_a_diagnostics_function_that_yields_is_refused() -> None:
    # GIVEN diagnostics written as a generator
    def health() -> Iterator[str]:
        yield "ok"

    # WHEN it is marked @diagnostics
    # THEN the author is told to return the answer
    with pytest.raises(TypeError, match=r"health yields; a diagnostics function returns its answer once"):
        diagnostics(health)


@pytest.mark.usefixtures("unchanged")
def test_a_parameter_mistake_names_the_authors_line_too() -> None:
    # GIVEN a tool whose only parameter is not a model (a mistake found only by looking at the signature)
    with pytest.raises(TypeError) as refused:
        line = decorator_line()

        @tool(risk="low")
        def points_balance(email: str) -> dict[str, Any]:
            """Tell how many points the customer has."""
            return {}

    # THEN the message starts at the decorator's line and names the function
    assert str(refused.value) == (
        f"{THIS_FILE}:{line}: points_balance: parameter 'email' must be annotated with a pydantic model "
        '(the input), ToolContext or a Settings subclass, or default to Secret("...") or Parameter("...")'
    )
