"""A mistake in declaring what the framework fills (settings, secrets, parameters) names the author's line."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda import Parameter, Secret, Settings, tool
from median_lambda.authoring.registry import ToolDefinitionError
from median_lambda.runtime.env import shown_path
from pydantic import BaseModel

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from median_lambda.authoring.registry import Registry
    from median_lambda.testing import MedianTestClient

    from tests.conftest import LogCapture

THIS_FILE = shown_path(__file__)


class ParcelInput(BaseModel):
    parcel: str


@pytest.fixture
def unchanged(scratch_registry: Registry) -> Iterator[None]:
    yield
    assert scratch_registry.tools == []


def _uncalled() -> None:
    @tool(risk="low")
    def parcel_status(args: ParcelInput, token: str = Secret) -> dict[str, Any]:
        return {}


def _not_text() -> None:
    @tool(risk="low")
    def parcel_status(args: ParcelInput, retries: int = Parameter("/median-tools/retries")) -> dict[str, Any]:
        return {}


def _nameless() -> None:
    @tool(risk="low")
    def parcel_status(args: ParcelInput, token: str = Secret()) -> dict[str, Any]:
        return {}


def _named_twice() -> None:
    @tool(risk="low")
    def parcel_status(args: ParcelInput, token: str = Secret("a", setting="A")) -> dict[str, Any]:
        return {}


def _negative_cache() -> None:
    @tool(risk="low")
    def parcel_status(args: ParcelInput, token: str = Secret("a", cache_seconds=-1)) -> dict[str, Any]:
        return {}


def _the_base_class() -> None:
    @tool(risk="low")
    def parcel_status(args: ParcelInput, settings: Settings) -> dict[str, Any]:
        return {}


def _unset_setting() -> None:
    @tool(risk="low")
    def parcel_status(args: ParcelInput, token: str = Secret(setting="NO_SUCH_SECRET_NAME")) -> dict[str, Any]:
        """Tell where a parcel is."""
        return {}


@pytest.mark.usefixtures("unchanged")
@pytest.mark.parametrize(
    ("declared", "expected"),
    [
        pytest.param(_uncalled, "parameter 'token' = Secret: call it, as Secret(\"name\")", id="Secret not called"),
        pytest.param(
            _not_text,
            "parameter 'retries' = Parameter('/median-tools/retries') must be annotated `str`: the value is text",
            id="not annotated str",
        ),
        pytest.param(
            _nameless,
            "parameter 'token': Secret(...) takes a name, or setting=\"VARIABLE\" naming the variable that holds it",
            id="no name",
        ),
        pytest.param(
            _named_twice,
            "parameter 'token': Secret(...) takes a name, or setting=\"VARIABLE\" naming the variable that holds it",
            id="a name and a setting",
        ),
        pytest.param(
            _negative_cache,
            "parameter 'token': Secret(cache_seconds=-1) is a number of seconds, 0 or more",
            id="a negative cache",
        ),
        pytest.param(
            _the_base_class,
            "parameter 'settings': annotate it with your own subclass of Settings, not Settings",
            id="Settings itself",
        ),
    ],
)
def test_a_dependency_mistake_names_the_authors_line_and_the_fix(declared: Callable[[], None], expected: str) -> None:
    # GIVEN a tool function declaring what the framework fills wrongly
    line = inspect.getsourcelines(declared)[1] + 1
    # WHEN it is declared a tool
    with pytest.raises(ToolDefinitionError) as refused:
        declared()
    # THEN the author reads their file and line, the parameter, and what to write instead
    message = str(refused.value)
    assert message.startswith(f"{THIS_FILE}:{line}: parcel_status: ")
    assert expected in message


def test_a_setting_that_names_no_secret_is_no_mistake_of_declaration_but_stops_that_tools_calls(
    scratch_registry: Registry, client: MedianTestClient, logs: LogCapture
) -> None:
    # GIVEN a tool whose secret's name comes from a setting that no file sets (one stage's value, missing)
    _unset_setting()
    # WHEN it is registered and called
    [registered] = scratch_registry.tools
    answer = client.call("parcelStatus", {"parcel": "P-1"})
    # THEN it is served (its stage's values are `make check`'s to hold), and its call did not run, saying why in the log
    assert registered.name == "parcelStatus"
    assert answer.status == 500
    assert "did not run; retry" in answer.body["error"]["message"]
    [record] = [each for each in logs.records() if each["message"].startswith("Tool parcelStatus did not run")]
    assert record["cause"].startswith(
        "Secret(setting='NO_SUCH_SECRET_NAME'): NO_SUCH_SECRET_NAME is not set, so the secret's name is unknown: "
        "add `NO_SUCH_SECRET_NAME = ...` to "
    )
