"""A tool's secret or parameter is kept for the lifetime that tool declared, and read as strictly as a request.

- Two tools reading one secret (or parameter) with different `cache_seconds` each get their own
  lifetime: the one that asked for 0 s never keeps, for another's 300 s, a token rotated away.
- `Secret(field=...)` reads a JSON secret as the request body is read: no NaN or infinities, no
  repeated member (two parsers that keep different copies disagree), no nesting past the body's
  bound; a number member is given as it is written (`1e2`, not `100.0`). A secret that breaks a
  rule is refused with a cause naming the secret, never its value.

On moto's Secrets Manager and Parameter Store, over HTTP; the store's clock is the test's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from pydantic import BaseModel

from handler import Parameter, Secret, tool
from handler.authoring import dependencies as tool_values
from tests.clock import SteppedClock

if TYPE_CHECKING:
    from collections.abc import Callable

    from handler.authoring.registry import Registry
    from handler.testing import MedianAWS, MedianTestClient

SECRET_NAME = "median-tools/carrier-token"
PARAMETER_NAME = "/median-tools/carrier/token"
SHORT, LONG = 0, 300
FLOOR = tool_values.MIN_REFRESH_SECONDS


class NoInput(BaseModel):
    pass


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> SteppedClock:
    stepped = SteppedClock()
    monkeypatch.setattr(tool_values.stores, "clock", stepped)
    return stepped


def _secret(aws: MedianAWS) -> tuple[Callable[[float], Any], Callable[[str], None]]:
    aws.create_secret(SECRET_NAME, "token-1")

    def rotate(value: str) -> None:
        aws.client("secretsmanager").put_secret_value(SecretId=SECRET_NAME, SecretString=value)

    return (lambda seconds: Secret(SECRET_NAME, cache_seconds=seconds)), rotate


def _parameter(aws: MedianAWS) -> tuple[Callable[[float], Any], Callable[[str], None]]:
    aws.put_parameter(PARAMETER_NAME, "token-1")
    return (lambda seconds: Parameter(PARAMETER_NAME, cache_seconds=seconds)), (
        lambda value: aws.put_parameter(PARAMETER_NAME, value)
    )


@pytest.mark.parametrize("kind", [_secret, _parameter], ids=["Secret", "Parameter"])
def test_two_tools_reading_one_value_each_keep_it_for_the_lifetime_they_declared(
    median_aws: MedianAWS,
    clock: SteppedClock,
    scratch_registry: Registry,
    client: MedianTestClient,
    kind: Callable[[MedianAWS], tuple[Callable[[float], Any], Callable[[str], None]]],
) -> None:
    # GIVEN one value, read by a tool that keeps it 300 s and by one that asks for it fresh (0 s)
    declared, rotate = kind(median_aws)

    @tool(risk="low")
    def kept_long(args: NoInput, token: str = declared(LONG)) -> str:
        """Use the token, kept long."""
        return token

    @tool(risk="low")
    def kept_short(args: NoInput, token: str = declared(SHORT)) -> str:
        """Use the token, fresh."""
        return token

    assert client.call("keptLong", {}).body["output"] == "token-1"
    # WHEN it is rotated, and each tool is called past the refresh floor, well within the long lifetime
    rotate("token-2")
    clock.advance(FLOOR + 1)
    short = client.call("keptShort", {}).body["output"]
    long = client.call("keptLong", {}).body["output"]
    # THEN the tool that asked for it fresh has the new value; the other keeps its own for its lifetime
    assert (short, long) == ("token-2", "token-1")
    # AND rotated again, the short-lived one follows each rotation past the floor, the long one only past its lifetime
    rotate("token-3")
    clock.advance(FLOOR + 1)
    assert [client.call(name, {}).body["output"] for name in ("keptShort", "keptLong")] == ["token-3", "token-1"]
    clock.advance(LONG)
    assert client.call("keptLong", {}).body["output"] == "token-3"

