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

import json
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda import Parameter, Secret, tool
from median_lambda.authoring import dependencies as tool_values
from pydantic import BaseModel

from tests.clock import SteppedClock

if TYPE_CHECKING:
    from collections.abc import Callable

    from median_lambda.authoring.registry import Registry
    from median_lambda.testing import MedianAWS, MedianTestClient

    from tests.conftest import LogCapture

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


# --- Secret(field=...) read as strictly as a request body ------------------------------------------------------------

WAREHOUSE = "median-tools/warehouse"
VALUE_MARK = "s3cr3t-never-logged"  # in every secret below: no answer or log line may carry it


def register_field_reader(runs: list[str], field: str = "port") -> None:
    @tool(risk="low")
    def warehouse_port(args: NoInput, port: str = Secret(WAREHOUSE, field=field)) -> str:
        """Tell the warehouse's port."""
        runs.append(port)
        return port


@pytest.mark.parametrize(
    ("written", "given"),
    [
        pytest.param("5432", "5432", id="an integer"),
        pytest.param("1e2", "1e2", id="a whole number with an exponent"),
        pytest.param("0.10", "0.10", id="a fraction with its trailing zero"),
        pytest.param("-0", "-0", id="minus zero"),
        pytest.param("123456789012345678901234567890", "123456789012345678901234567890", id="past a double's digits"),
        pytest.param('"5432"', "5432", id="text"),
    ],
)
def test_a_number_member_is_given_as_it_is_written(
    median_aws: MedianAWS, scratch_registry: Registry, client: MedianTestClient, written: str, given: str
) -> None:
    # GIVEN a JSON secret whose `port` member is written so
    median_aws.create_secret(WAREHOUSE, f'{{"user": "{VALUE_MARK}", "port": {written}}}')
    runs: list[str] = []
    register_field_reader(runs)
    # WHEN the tool is called
    answer = client.call("warehousePort", {})
    # THEN it gets the member's text as the secret holds it, not a float's rendering of it
    assert answer.status == 200, answer.body
    assert runs == [given]


@pytest.mark.parametrize(
    ("stored", "rule"),
    [
        pytest.param('{"port": 1e999, "user": "%s"}', "a number too large for a double", id="1e999"),
        pytest.param('{"port": NaN, "user": "%s"}', "NaN is not JSON", id="NaN"),
        pytest.param('{"port": -Infinity, "user": "%s"}', "-Infinity is not JSON", id="-Infinity"),
        pytest.param('{"port": "5432", "port": "6543", "user": "%s"}', "an object repeats a key", id="repeated"),
        pytest.param(
            '{"port": "5432", "user": "%s", "deep": ' + "[" * 70 + "]" * 70 + "}",
            "it nests objects and arrays more than 64 deep",
            id="nested too deep",
        ),
    ],
)
def test_a_secret_a_request_body_would_be_refused_for_is_refused_naming_the_secret_never_its_value(
    median_aws: MedianAWS,
    scratch_registry: Registry,
    client: MedianTestClient,
    logs: LogCapture,
    stored: str,
    rule: str,
) -> None:
    # GIVEN a JSON secret that breaks one of the rules a request body is held to
    median_aws.create_secret(WAREHOUSE, stored % VALUE_MARK)
    runs: list[str] = []
    register_field_reader(runs)
    # WHEN the tool is called
    answer = client.call("warehousePort", {})
    # THEN it did not run, and Median is told to retry
    assert answer.status == 500
    assert "could not read its configuration or secrets, so it did not run; retry" in answer.body["error"]["message"]
    assert runs == []
    # AND the log names the secret and the rule it breaks, and nothing of its value
    [record] = [record for record in logs.records() if "did not run" in record["message"]]
    assert record["cause"] == f"secret {WAREHOUSE!r} is not JSON this endpoint accepts: {rule}"
    assert VALUE_MARK not in logs.text()
    assert VALUE_MARK not in json.dumps(answer.body)


def test_a_secret_that_is_no_json_at_all_says_where_without_quoting_it(
    median_aws: MedianAWS, scratch_registry: Registry, client: MedianTestClient, logs: LogCapture
) -> None:
    # GIVEN a secret of plain text, read for one of its members
    median_aws.create_secret(WAREHOUSE, f"port={VALUE_MARK}")
    register_field_reader([])
    # WHEN the tool is called
    assert client.call("warehousePort", {}).status == 500
    # THEN the log says it is not JSON and where, and quotes none of it
    [record] = [record for record in logs.records() if "did not run" in record["message"]]
    assert record["cause"] == f"secret {WAREHOUSE!r} is not valid JSON (line 1, column 1), so it has no 'port' member"
    assert VALUE_MARK not in logs.text()
