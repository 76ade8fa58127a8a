"""`async def` tools and diagnostics: awaited with their ToolContext, under the same time limit as plain ones."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda import ToolContext, diagnostics, tool
from median_lambda.calls.dispatch import STORE_CALL_SECONDS
from median_lambda.calls.idempotency import table_name
from median_lambda.protocol import TOOL_TIME_MARGIN_SECONDS
from median_lambda.testing import FakeLambdaContext, call_body, signed_event
from pydantic import BaseModel

if TYPE_CHECKING:
    from collections.abc import Iterator

    from median_lambda.authoring.registry import Registry
    from median_lambda.testing import MedianTestClient, TestAnswer

# A Lambda this close to its timeout leaves a tool a fraction of a second.
SHORT_LAMBDA_SECONDS = TOOL_TIME_MARGIN_SECONDS + 0.3
# Far past any deadline here: a tool still waiting this long was not stopped.
NEVER_SECONDS = 10.0


class NoteInput(BaseModel):
    note: str = ""


@pytest.fixture
def client(client_as_median: MedianTestClient) -> MedianTestClient:
    """Every call with a callId of its own, served as deployed: through the idempotency table."""
    return client_as_median


def short_lambda_seconds() -> float:
    """A Lambda's timeout that leaves a tool a fraction of a second: as deployed, beside the table's two requests."""
    return SHORT_LAMBDA_SECONDS + (2 * STORE_CALL_SECONDS if table_name() else 0.0)


def call_in_short_lambda(client: MedianTestClient, name: str) -> TestAnswer:
    return client.send(
        signed_event("POST", call_body(name, {}, callId=f"call_{name}")),
        FakeLambdaContext(timeout_seconds=short_lambda_seconds()),
    )


def assert_timed_out(answer: TestAnswer) -> None:
    assert answer.status == 504, answer.body
    assert answer.body["error"]["code"] == "timeout"
    assert "unknown whether it did its work" in answer.body["error"]["message"]


def test_an_async_tool_is_awaited_with_its_context(scratch_registry: Registry, client: MedianTestClient) -> None:
    # GIVEN an async tool that awaits, then reports what its context holds
    @tool(risk="low")
    async def async_echo(args: NoteInput, ctx: ToolContext) -> dict[str, Any]:
        """Echo the note after a pause."""
        await asyncio.sleep(0)
        remaining = ctx.remaining_seconds()
        return {
            "note": args.note,
            "callId": ctx.call_id,
            "conversation": ctx.conversation,
            "remainingOk": remaining is not None and 0 < remaining <= 30 - TOOL_TIME_MARGIN_SECONDS,
        }

    body = call_body("asyncEcho", {"note": "hi"}, callId="call_async", conversation={"id": "conv_1"})
    # WHEN Median calls it
    answer = client.send(signed_event("POST", body), FakeLambdaContext(timeout_seconds=30))
    # THEN its result is the output, as a plain tool's would be
    assert answer.status == 200, answer.body
    assert answer.body["output"] == {
        "note": "hi",
        "callId": "call_async",
        "conversation": {"id": "conv_1"},
        "remainingOk": True,
    }


def test_async_diagnostics_are_awaited_with_their_context(scratch_registry: Registry, client: MedianTestClient) -> None:
    # GIVEN async diagnostics
    scratch_registry.diagnostics[:] = []

    @diagnostics
    async def health(ctx: ToolContext) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"status": "ok", "hasRequestId": bool(ctx.request_id)}

    # WHEN Median asks for diagnostics
    answer = client.diagnostics()
    # THEN they ran
    assert answer.status == 200, answer.body
    assert answer.body["output"] == {"status": "ok", "hasRequestId": True}


def test_an_async_tool_past_its_deadline_is_cancelled_and_answered_504(
    scratch_registry: Registry, client: MedianTestClient
) -> None:
    # GIVEN an async tool that waits longer than the Lambda has left, and notes how it ended
    seen: list[str] = []

    @tool(risk="low")
    async def slow_lookup(args: NoteInput) -> str:
        """Wait on a slow service."""
        try:
            await asyncio.sleep(NEVER_SECONDS)
            seen.append("finished")
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        finally:
            seen.append("cleaned up")
        return "done"

    # WHEN Median calls it
    started = time.monotonic()
    answer = call_in_short_lambda(client, "slowLookup")
    # THEN it is answered 504 timeout before the Lambda's own end, the tool having been cancelled at its await
    assert_timed_out(answer)
    assert time.monotonic() - started < short_lambda_seconds()
    assert seen == ["cancelled", "cleaned up"]


def test_an_async_tool_raising_its_own_timeout_error_in_time_is_a_crash_not_a_timeout(
    scratch_registry: Registry, client: MedianTestClient
) -> None:
    # GIVEN an async tool whose client gives up on its own, well before the deadline
    @tool(risk="low")
    async def impatient(args: NoteInput) -> str:
        """Call a service with a short timeout of its own."""
        await asyncio.wait_for(asyncio.sleep(NEVER_SECONDS), timeout=0.01)
        return "never"

    # WHEN Median calls it with time to spare
    answer = client.call("impatient", {})
    # THEN it is the tool's failure (500), not the endpoint's deadline (504)
    assert answer.status == 500
    assert answer.body["error"]["code"] == "internal_error"


@pytest.mark.parametrize("misbehaviour", ["catches its cancellation", "blocks the event loop"])
def test_an_async_tool_that_will_not_stop_is_still_answered_504(
    scratch_registry: Registry, client: MedianTestClient, misbehaviour: str
) -> None:
    # GIVEN an async tool that ignores its cancellation, or runs sync code that never yields to the loop
    @tool(risk="low")
    async def stubborn(args: NoteInput) -> str:
        """Refuse to stop."""
        if misbehaviour == "blocks the event loop":
            time.sleep(NEVER_SECONDS)
        for _ in range(3):
            try:
                await asyncio.sleep(NEVER_SECONDS)
            except asyncio.CancelledError:
                continue
        return "made it"

    @tool(risk="low")
    async def quick(args: NoteInput) -> str:
        """Answer at once."""
        await asyncio.sleep(0)
        return "quick"

    # WHEN Median calls it
    started = time.monotonic()
    answer = call_in_short_lambda(client, "stubborn")
    # THEN it is answered 504 all the same, before the Lambda's own end, and the next async call is served
    assert_timed_out(answer)
    assert time.monotonic() - started < short_lambda_seconds()
    assert client.call("quick", {}).body["output"] == "quick"


def test_an_async_tool_called_off_the_main_thread_times_out_too(
    scratch_registry: Registry, client: MedianTestClient
) -> None:
    # GIVEN an async tool that overruns, called from a thread other than the main one (a threaded server's)
    @tool(risk="low")
    async def slow_off_main(args: NoteInput) -> str:
        """Wait on a slow service."""
        await asyncio.sleep(NEVER_SECONDS)
        return "done"

    answers: list[TestAnswer] = []
    worker = threading.Thread(target=lambda: answers.append(call_in_short_lambda(client, "slowOffMain")), daemon=True)
    # WHEN it runs past its deadline
    worker.start()
    worker.join(NEVER_SECONDS)
    # THEN it is answered 504
    assert answers
    assert_timed_out(answers[0])


def test_an_async_tool_is_served_to_a_caller_already_running_an_event_loop(
    scratch_registry: Registry, client: MedianTestClient
) -> None:
    # GIVEN an async tool, and a caller inside an event loop of its own (an async test, say)
    @tool(risk="low")
    async def async_lookup(args: NoteInput) -> str:
        """Look the note up."""
        await asyncio.sleep(0)
        return f"found {args.note}"

    def calls() -> tuple[TestAnswer, TestAnswer]:
        return client.call("asyncLookup", {"note": "ada"}), call_in_short_lambda(client, "asyncLookup")

    async def caller() -> tuple[TestAnswer, TestAnswer]:
        return calls()

    # WHEN it calls the tool, with time to spare and with little, from inside a running loop
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        found, found_quickly = asyncio.run(caller())
    else:  # one runs in this thread already (Playwright's sync API, earlier in the session)
        found, found_quickly = calls()
    # THEN the tool runs all the same
    assert found.body == {"version": 1, "ok": True, "output": "found ada"}
    assert found_quickly.body == {"version": 1, "ok": True, "output": "found "}


@pytest.fixture
def echo_server() -> Iterator[tuple[int, list[socket.socket]]]:
    """A loopback TCP server that echoes each line back, and the connections it accepted."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            accepted.append(connection)
            threading.Thread(target=echo, args=(connection,), daemon=True).start()

    def echo(connection: socket.socket) -> None:
        with connection, connection.makefile("rwb") as stream:
            for line in stream:
                stream.write(line)
                stream.flush()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield listener.getsockname()[1], accepted
    finally:
        listener.close()


def test_an_async_client_kept_between_calls_keeps_its_connection(
    scratch_registry: Registry, client: MedianTestClient, echo_server: tuple[int, list[socket.socket]]
) -> None:
    # GIVEN an async tool that opens its connection once and keeps it for later calls, as a tool
    # keeps an aiohttp or httpx client: that needs the same event loop from call to call
    port, accepted = echo_server
    kept: dict[str, Any] = {}

    @tool(risk="low")
    async def echo_over_kept_connection(args: NoteInput) -> str:
        """Send the note to the echo service over the one connection."""
        if "stream" not in kept:
            kept["stream"] = await asyncio.open_connection("127.0.0.1", port)
        reader, writer = kept["stream"]
        writer.write(f"{args.note}\n".encode())
        await writer.drain()
        return (await asyncio.wait_for(reader.readline(), timeout=NEVER_SECONDS)).decode().strip()

    @tool(risk="low")
    async def overrun(args: NoteInput) -> str:
        """Wait past the deadline."""
        await asyncio.sleep(NEVER_SECONDS)
        return "done"

    # WHEN it is called, another async tool times out, and it is called again
    first = client.call("echoOverKeptConnection", {"note": "one"})
    timed_out = call_in_short_lambda(client, "overrun")
    second = client.call("echoOverKeptConnection", {"note": "two"})
    # THEN both calls are answered over the one connection, the timeout notwithstanding
    assert (first.body.get("output"), second.body.get("output")) == ("one", "two"), (first.body, second.body)
    assert_timed_out(timed_out)
    assert len(accepted) == 1
