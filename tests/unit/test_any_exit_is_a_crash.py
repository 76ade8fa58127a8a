"""Whatever a tool raises, a SystemExit or a KeyboardInterrupt included, is answered as its crash, in JSON.

Libraries exit: argparse and click raise SystemExit when their arguments are wrong, and code calls
`sys.exit()`. Such an exception is no `Exception`, and once escaped the Lambda handler's runtime
exits: no answer, and with the idempotency table on, a retry meets `409 in_progress` until the
record lapses. Any BaseException a tool's code raises (its own, its dependencies' setup, its input
model's validators, the diagnostics function's), other than the time limit's own, is a `500
internal_error` counted as that tool's crash, its record released so a retry runs it again; an
async tool's loop serves the next call as before. Whatever still escapes is the handler's last
resort: a JSON 500.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING

import click
import pytest
from median_lambda import diagnostics, tool
from median_lambda.app import lambda_handler
from median_lambda.testing import FakeLambdaContext, answer_of, call_body, dev_key, signed_event
from pydantic import BaseModel, field_validator

if TYPE_CHECKING:
    from collections.abc import Callable

    from median_lambda.authoring.registry import Registry
    from median_lambda.testing import MedianTestClient

    from tests.conftest import LogCapture


class OwnStop(BaseException):
    """A BaseException of a library's own, as some define to get past `except Exception`."""


def argparse_refusing() -> None:
    argparse.ArgumentParser(prog="carrier-cli", exit_on_error=True).parse_args(["--no-such-flag"])


def click_refusing() -> None:
    @click.command()
    @click.option("--count", type=int)
    def cli(count: int) -> None:
        """A carrier's command line."""

    cli.main(["--count", "many"], standalone_mode=True)


def calls_sys_exit() -> None:
    sys.exit("carrier down")


def interrupted() -> None:
    raise KeyboardInterrupt


def own_stop() -> None:
    raise OwnStop


EXITS: dict[str, Callable[[], None]] = {
    "argparse refusing its arguments": argparse_refusing,
    "click refusing its arguments": click_refusing,
    "sys.exit()": calls_sys_exit,
    "KeyboardInterrupt": interrupted,
    "a BaseException of its own": own_stop,
}


class NoteInput(BaseModel):
    note: str = ""


@pytest.fixture
def client(client_as_median: MedianTestClient) -> MedianTestClient:
    """Every call with a callId of its own, served as deployed: through the idempotency table."""
    return client_as_median


def crashes_counted(logs: LogCapture) -> list[str]:
    return [line["tool"] for line in logs.metrics() if "ToolCrashes" in line]


@pytest.mark.parametrize("how", list(EXITS))
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_tool_whose_library_exits_is_answered_500_as_its_crash_and_runs_again_on_a_retry(
    scratch_registry: Registry, client: MedianTestClient, logs: LogCapture, how: str, kind: str
) -> None:
    # GIVEN a tool, plain or async, whose library exits (or raises another BaseException) the first time
    runs: list[str] = []
    exits = EXITS[how]

    def book_pickup(args: NoteInput) -> str:
        runs.append("bookPickup")
        if len(runs) == 1:
            exits()
        return "booked"

    async def book_pickup_async(args: NoteInput) -> str:
        await asyncio.sleep(0)
        return book_pickup(args)

    function = book_pickup if kind == "sync" else book_pickup_async
    function.__name__ = function.__qualname__ = "book_pickup"
    function.__doc__ = "Book a pickup."
    tool(risk="high")(function)
    # WHEN Median calls it, and retries the call
    first = client.call("bookPickup", {})
    retried = client.retry()
    # THEN the first is a JSON 500, counted as the tool's crash, and its record was released: the retry ran it
    assert first.status == 500
    assert first.body["error"]["code"] == "internal_error"
    assert first.body["error"]["message"].startswith("The tool failed on the server; reference ")
    assert crashes_counted(logs) == ["bookPickup"]
    assert (retried.status, retried.body["output"]) == (200, "booked")
    assert runs == ["bookPickup", "bookPickup"]


class ExitingNote(BaseModel):
    note: str = ""

    @field_validator("note")
    @classmethod
    def carrier_code(cls, value: str) -> str:
        if value == "exit":
            sys.exit("no such carrier")
        return {"dhl": "DHL"}[value]  # a KeyError for any other: the author's bug


@pytest.mark.parametrize("note", ["exit", "ups"], ids=["SystemExit", "KeyError"])
def test_an_input_model_whose_validator_raises_is_that_tools_crash_not_the_handlers(
    scratch_registry: Registry, client: MedianTestClient, logs: LogCapture, note: str
) -> None:
    # GIVEN a tool whose input model's validator raises what no validation error is
    ran: list[str] = []

    @tool(risk="low")
    def carrier_eta(args: ExitingNote) -> str:
        """Say when the carrier comes."""
        ran.append("carrierEta")
        return "soon"

    # WHEN Median calls it
    answer = client.call("carrierEta", {"note": note})
    # THEN it is that tool's crash before it ran: a JSON 500 saying so, counted in its ToolCrashes
    assert answer.status == 500
    assert answer.body["error"]["message"].startswith(
        "The tool failed on the server before it ran, checking its input; reference "
    )
    assert crashes_counted(logs) == ["carrierEta"]
    assert ran == []
    crashed = [record for record in logs.records() if record["message"].startswith("Tool carrierEta crashed")]
    assert [(record["level"], record["error_type"]) for record in crashed] == [
        ("ERROR", "SystemExit" if note == "exit" else "KeyError")
    ]


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_diagnostics_that_exit_are_answered_500(
    scratch_registry: Registry, client: MedianTestClient, kind: str
) -> None:
    # GIVEN diagnostics whose check of the carrier's command line exits
    if kind == "sync":

        @diagnostics
        def health() -> dict[str, str]:
            argparse_refusing()
            return {}

    else:

        @diagnostics
        async def health_async() -> dict[str, str]:
            argparse_refusing()
            return {}

    # WHEN Median asks for them
    answer = client.diagnostics()
    # THEN the answer is a JSON 500, the diagnostics' crash (not the handler's last resort)
    assert answer.status == 500
    assert answer.body["error"]["message"].startswith("The tool failed on the server; reference ")


def test_an_async_tool_that_exits_leaves_its_loop_serving_the_next_call(
    scratch_registry: Registry, client: MedianTestClient
) -> None:
    # GIVEN an async tool that exits while another task of its own waits (asyncio lets SystemExit out of
    # its loop), and another async tool
    @tool(risk="low", idempotent=False)
    async def exits_mid_flight(args: NoteInput) -> str:
        """Exit mid-flight."""
        asyncio.get_running_loop().create_task(asyncio.sleep(5))
        await asyncio.sleep(0)
        sys.exit(3)

    @tool(risk="low", idempotent=False)
    async def answers_at_once(args: NoteInput) -> str:
        """Answer."""
        await asyncio.sleep(0.01)
        return "here"

    # WHEN the first is called, then the second
    exited = client.call("exitsMidFlight", {})
    after = client.call("answersAtOnce", {})
    # THEN the first is a JSON 500, and the second is served as ever
    assert exited.status == 500
    assert (after.status, after.body["output"]) == (200, "here")


class _ContextThatExits(FakeLambdaContext):
    def get_remaining_time_in_millis(self) -> int:
        raise SystemExit("the runtime is going away")


def test_a_base_exception_that_escapes_everything_is_still_a_json_500(scratch_registry: Registry) -> None:
    # GIVEN a tool, and a Lambda context whose clock raises SystemExit in the handler's own code
    @tool(risk="low")
    def plain(args: NoteInput) -> str:
        """Answer."""
        return "here"

    # WHEN a call arrives
    with dev_key("mk_test_exit"):
        response = lambda_handler(
            signed_event("POST", call_body("plain", {}), key="mk_test_exit"),
            _ContextThatExits(),  # type: ignore[arg-type]
        )
    # THEN the handler's last resort answers JSON
    answer = answer_of(response)
    assert answer.status == 500
    assert answer.body["error"]["message"].startswith("The server failed; reference ")
