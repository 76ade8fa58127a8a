"""A tool's crash, off Lambda, is printed with its message and the author's frames; the answer never carries it.

Under the test client and `sam local` (AWS_SAM_LOCAL=true), the exception goes to stderr, which
pytest shows with a failing test and sam local shows on its terminal. `make serve`'s terminal is
tests/integration/test_devserver_crashes.py's; a deployed function's log,
tests/integration/test_deployed_logs_hold_no_secrets.py's.
"""

from __future__ import annotations

import inspect
import json
import threading
import time
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda import ToolContext, diagnostics, tool
from median_lambda.testing import FakeLambdaContext, call_body, signed_event
from pydantic import BaseModel, Field, field_validator

if TYPE_CHECKING:
    from collections.abc import Callable

    from median_lambda.authoring.registry import Registry
    from median_lambda.testing import MedianTestClient, TestAnswer

CUSTOMER_NOTE = "Ada Lovelace, card 4242"
# The token make serve would print: the inspector runs nothing for a page without it.
INSPECTOR_TOKEN = "the-token-make-serve-printed"


class NoteInput(BaseModel):
    note: str = Field(description="Any text.")


class StrictNote(BaseModel):
    note: str

    @field_validator("note")
    @classmethod
    def looked_up(cls, value: str) -> str:
        raise RuntimeError(f"lookup service down for {value}")


def _find_carrier(note: str) -> str:
    carriers = {"express": "DHL"}
    return carriers[note]  # the line the crash is at


def _register_crashing_tools() -> None:
    @tool(risk="low", name="syncCrash")
    def sync_crash(args: NoteInput) -> dict[str, object]:
        """Crash in a helper, with the customer's note in the message."""
        return {"carrier": _find_carrier(args.note)}

    @tool(risk="low", name="asyncCrash")
    async def async_crash(args: NoteInput) -> dict[str, object]:
        """Crash as an async tool."""
        return {"carrier": _find_carrier(args.note)}

    @tool(risk="low", name="unsendable")
    def unsendable(args: NoteInput) -> dict[str, object]:
        """Return what no JSON can carry."""
        return {"note": {args.note}}

    @diagnostics
    def health(ctx: ToolContext) -> dict[str, object]:
        return {"carrier": _find_carrier(CUSTOMER_NOTE)}


def _call(tool_name: str) -> Callable[[MedianTestClient], TestAnswer]:
    return lambda client: client.call(tool_name, {"note": CUSTOMER_NOTE})


# (how it is asked, what the printout names as crashed, its last line, the author's line it passes)
_HELPER_LINE = f"line {inspect.getsourcelines(_find_carrier)[1] + 2}, in _find_carrier"
CRASHES = {
    "a sync tool": (_call("syncCrash"), "Tool syncCrash", f"KeyError: '{CUSTOMER_NOTE}'", _HELPER_LINE),
    "an async tool": (_call("asyncCrash"), "Tool asyncCrash", f"KeyError: '{CUSTOMER_NOTE}'", _HELPER_LINE),
    "diagnostics": (lambda client: client.diagnostics(), "Diagnostics", f"KeyError: '{CUSTOMER_NOTE}'", _HELPER_LINE),
    "an answer that is no JSON": (
        _call("unsendable"),
        "Tool unsendable (its return value is not JSON)",
        "TypeError: Object of type set is not JSON serializable",
        "",
    ),
}


@pytest.fixture
def crashing_tools(scratch_registry: Registry) -> None:
    _register_crashing_tools()


@pytest.fixture(params=["the test client", "sam local"])
def local_run(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Off Lambda: pytest's own environment, or the one sam local gives the function's container."""
    if request.param == "sam local":
        monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "MedianToolsFunction")
        monkeypatch.setenv("AWS_SAM_LOCAL", "true")
    return str(request.param)


@pytest.mark.usefixtures("crashing_tools")
@pytest.mark.parametrize(("ask", "what", "last_line", "authors_line"), list(CRASHES.values()), ids=list(CRASHES))
def test_a_crash_is_printed_with_its_message_and_the_authors_frames(
    client: MedianTestClient,
    capsys: pytest.CaptureFixture[str],
    local_run: str,
    ask: Callable[[MedianTestClient], TestAnswer],
    what: str,
    last_line: str,
    authors_line: str,
) -> None:
    # GIVEN a tool that crashes with the customer's input in its message, run off Lambda
    # WHEN it is called
    answer = ask(client)
    printed = capsys.readouterr().err
    # THEN the answer is a 500 internal_error with a reference, and never the message
    assert answer.status == 500
    error = answer.body["error"]
    assert error["code"] == "internal_error"
    assert CUSTOMER_NOTE not in str(answer.body)
    # AND stderr says what crashed, under that reference, with the exception and its message
    reference = error["message"].rsplit("reference ", 1)[-1].rstrip(".").removeprefix("Reference ")
    assert f"{what} crashed; its answer is 500 internal_error, reference {reference}." in printed
    assert printed.rstrip().endswith(last_line)
    # AND any traceback starts in the author's code, at this file's lines, never in the framework's
    if authors_line:
        traceback_lines = printed.split("Traceback (most recent call last):\n", 1)[1].splitlines()
        assert traceback_lines[0].startswith('  File "tests/unit/test_crashes_explained_locally.py", line ')
        assert authors_line in printed
    else:
        assert "Traceback" not in printed
    assert "handler/" not in printed


@pytest.mark.usefixtures("crashing_tools")
def test_the_inspector_shows_the_crash_beside_an_answer_that_does_not_carry_it() -> None:
    # GIVEN the inspector, signing with the dev key, and a tool that crashes
    from median_lambda.devserver.inspector import route
    from median_lambda.testing import TEST_KEY, dev_key

    document = {"tool": "syncCrash", "input": {"note": CUSTOMER_NOTE}}
    headers = {
        "host": "127.0.0.1:3000",
        "content-type": "application/json",
        "origin": "http://127.0.0.1:3000",
        "x-inspector-token": INSPECTOR_TOKEN,
    }
    # WHEN the page calls it
    with dev_key(TEST_KEY):
        reply = route(
            "POST", "/_inspector/api/call", headers, json.dumps(document).encode(), port=3000, token=INSPECTOR_TOKEN
        )
    view = json.loads(reply.body)
    # THEN the answer is the handler's, without the message
    assert (view["status"], view["errorCode"]) == (500, "internal_error")
    assert CUSTOMER_NOTE not in json.dumps(view["answer"])
    # AND beside it, the traceback printed on the terminal: the author's frames and the message
    assert view["crash"].startswith('Traceback (most recent call last):\n  File "tests/unit/')
    assert view["crash"].rstrip().endswith(f"KeyError: '{CUSTOMER_NOTE}'")


@pytest.mark.usefixtures("crashing_tools")
def test_the_inspector_shows_no_crash_for_an_answer_that_is_no_crash() -> None:
    # GIVEN the inspector and a tool called with input it refuses
    from median_lambda.devserver.inspector import route
    from median_lambda.testing import TEST_KEY, dev_key

    headers = {
        "host": "127.0.0.1:3000",
        "content-type": "application/json",
        "origin": "http://127.0.0.1:3000",
        "x-inspector-token": INSPECTOR_TOKEN,
    }
    # WHEN the page calls it
    with dev_key(TEST_KEY):
        reply = route(
            "POST",
            "/_inspector/api/call",
            headers,
            b'{"tool": "syncCrash", "input": {}}',
            port=3000,
            token=INSPECTOR_TOKEN,
        )
    # THEN it is the 422, with no crash beside it
    view = json.loads(reply.body)
    assert (view["status"], view["crash"]) == (422, None)


def test_a_validator_that_crashes_is_the_tools_crash_printed_from_the_authors_frames(
    client: MedianTestClient, capsys: pytest.CaptureFixture[str], scratch_registry: Registry
) -> None:
    # GIVEN a model whose validator raises what pydantic does not turn into a 422 (not a ValueError)
    @tool(risk="low", name="strictNote")
    def strict_note(args: StrictNote) -> dict[str, object]:
        """Take a strict note."""
        return {}

    # WHEN it is called
    answer = client.call("strictNote", {"note": CUSTOMER_NOTE})
    printed = capsys.readouterr().err
    # THEN it is that tool's crash, before it ran: a 500 without the message, and stderr has it, from the
    # author's validator on
    assert answer.status == 500
    assert answer.body["error"]["code"] == "internal_error"
    assert answer.body["error"]["message"].startswith("The tool failed on the server before it ran, checking its input")
    assert CUSTOMER_NOTE not in str(answer.body)
    assert "Tool strictNote's input model crashed; its answer is 500 internal_error, reference " in printed
    assert f"RuntimeError: lookup service down for {CUSTOMER_NOTE}" in printed
    assert "in looked_up" in printed and "median_lambda/app.py" not in printed


class _ContextThatCannotTellItsTime(FakeLambdaContext):
    def get_remaining_time_in_millis(self) -> int:
        raise RuntimeError(f"no clock for {CUSTOMER_NOTE}")


def test_a_crash_outside_the_tool_is_printed_whole(
    client: MedianTestClient, capsys: pytest.CaptureFixture[str], scratch_registry: Registry
) -> None:
    # GIVEN a tool, and a Lambda context that fails the handler itself when asked for its time
    @tool(risk="low", name="plainNote")
    def plain_note(args: NoteInput) -> dict[str, object]:
        """Take a note."""
        return {}

    # WHEN it is called
    answer = client.send(signed_event("POST", call_body("plainNote", {"note": "x"})), _ContextThatCannotTellItsTime())
    printed = capsys.readouterr().err
    # THEN the handler's last defence answers 500 without the message, and stderr has it, with every frame
    assert (answer.status, answer.body["error"]["code"]) == (500, "internal_error")
    assert CUSTOMER_NOTE not in str(answer.body)
    assert "The request crashed; its answer is 500 internal_error, reference " in printed
    assert f"RuntimeError: no clock for {CUSTOMER_NOTE}" in printed
    assert "in get_remaining_time_in_millis" in printed and "median_lambda/app.py" in printed


def test_a_tool_that_declines_prints_nothing(
    client: MedianTestClient, capsys: pytest.CaptureFixture[str], scratch_registry: Registry
) -> None:
    # GIVEN a tool that declines with a ToolError, as it should
    from median_lambda import ToolError

    @tool(risk="low", name="declines")
    def declines(args: NoteInput) -> dict[str, object]:
        """Decline, always."""
        raise ToolError("No such order.")

    # WHEN it is called
    answer = client.call("declines", {"note": CUSTOMER_NOTE})
    # THEN the agent gets the message, and nothing is printed as a crash
    assert answer.body["error"] == {"code": "tool_error", "message": "No such order."}
    assert "crashed" not in capsys.readouterr().err


def _declining_tools() -> None:
    from median_lambda import ToolError

    @tool(risk="low", name="carrierOf")
    def carrier_of(args: NoteInput) -> dict[str, object]:
        """Name a parcel's carrier, declining from the lookup's failure."""
        try:
            return {"carrier": _find_carrier(args.note)}
        except KeyError as error:
            raise ToolError("No carrier goes by that name.") from error

    @tool(risk="low", name="declinesPlainly")
    def declines_plainly(args: NoteInput) -> dict[str, object]:
        """Decline with nothing behind it."""
        raise ToolError("No carrier goes by that name.")


def _inspector_call(tool_name: str) -> dict[str, Any]:
    from median_lambda.devserver.inspector import route
    from median_lambda.testing import TEST_KEY, dev_key

    headers = {
        "host": "127.0.0.1:3000",
        "content-type": "application/json",
        "origin": "http://127.0.0.1:3000",
        "x-inspector-token": INSPECTOR_TOKEN,
    }
    document = {"tool": tool_name, "input": {"note": CUSTOMER_NOTE}}
    with dev_key(TEST_KEY):
        reply = route(
            "POST", "/_inspector/api/call", headers, json.dumps(document).encode(), port=3000, token=INSPECTOR_TOKEN
        )
    view: dict[str, Any] = json.loads(reply.body)
    return view


def test_the_inspector_shows_the_cause_behind_a_tool_error_beside_an_answer_that_does_not_carry_it(
    scratch_registry: Registry,
) -> None:
    # GIVEN the inspector, and a tool that declines with a ToolError raised from a KeyError quoting the input
    _declining_tools()
    # WHEN the page calls it
    view = _inspector_call("carrierOf")
    # THEN the answer is the ToolError's message, without the KeyError
    assert (view["status"], view["errorCode"]) == (200, "tool_error")
    assert view["answer"]["error"]["message"] == "No carrier goes by that name."
    assert CUSTOMER_NOTE not in json.dumps(view["answer"])
    # AND beside it, the cause as the terminal printed it: the author's line, its message, then the ToolError
    cause = view["cause"]
    assert cause.startswith('Traceback (most recent call last):\n  File "tests/unit/test_crashes_explained_locally.py"')
    assert f"KeyError: '{CUSTOMER_NOTE}'" in cause
    assert "The above exception was the direct cause of the following exception:" in cause
    assert cause.rstrip().endswith("ToolError: No carrier goes by that name.")
    assert view["crash"] is None


def test_the_inspector_shows_no_cause_for_a_tool_error_without_one(scratch_registry: Registry) -> None:
    # GIVEN the inspector, and a tool that declines with nothing behind it
    _declining_tools()
    # WHEN the page calls it
    view = _inspector_call("declinesPlainly")
    # THEN the answer stands alone
    assert (view["errorCode"], view["cause"], view["crash"]) == ("tool_error", None, None)


def _wait_for_the_carrier(seconds: float) -> None:
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        time.sleep(0.01)  # the line a slow tool is stuck at


_STUCK_LINE = f"line {inspect.getsourcelines(_wait_for_the_carrier)[1] + 3}, in _wait_for_the_carrier"


@pytest.fixture
def slow_tool(scratch_registry: Registry) -> None:
    @tool(risk="low", name="slowCarrier", idempotent=False)
    def slow_carrier(args: NoteInput) -> dict[str, object]:
        """Ask a carrier that is slow today."""
        _wait_for_the_carrier(5.0)
        return {}


def _called_with_a_second(client: MedianTestClient) -> TestAnswer:
    return client.send(
        signed_event("POST", call_body("slowCarrier", {"note": CUSTOMER_NOTE})), FakeLambdaContext(timeout_seconds=1.0)
    )


@pytest.mark.usefixtures("slow_tool")
@pytest.mark.parametrize("thread", ["main", "a thread of its own"])
def test_a_tool_stopped_at_its_deadline_shows_where_it_was_off_lambda(
    client: MedianTestClient, capsys: pytest.CaptureFixture[str], local_run: str, thread: str
) -> None:
    # GIVEN a tool stuck in a helper of its author's, called off Lambda: on the main thread (a test), where it is
    # stopped, or on a thread of its own (make serve's), where it is left running in a worker thread
    # WHEN its time runs out
    if thread == "main":
        answer = _called_with_a_second(client)
    else:
        answers: list[TestAnswer] = []
        caller = threading.Thread(target=lambda: answers.append(_called_with_a_second(client)), daemon=True)
        caller.start()
        caller.join(10)
        [answer] = answers
    printed = capsys.readouterr().err
    # THEN it is answered 504, and stderr says where it was, under that reference: the author's file and line
    assert answer.status == 504
    reference = answer.body["error"]["message"].rsplit("Reference ", 1)[-1].rstrip(".")
    said = f"Tool slowCarrier timed out; its answer is 504 timeout, reference {reference}. Here, not deployed"
    assert said in printed
    traceback_lines = printed.split("Traceback (most recent call last):\n", 1)[1].splitlines()
    assert traceback_lines[0].startswith('  File "tests/unit/test_crashes_explained_locally.py", line ')
    assert _STUCK_LINE in printed
    assert "median_lambda" not in printed
