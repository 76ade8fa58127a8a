"""What keeps a POST near the floor (bench/README.md), held as facts rather than timings."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from median_lambda import tool
from median_lambda.testing import FakeLambdaContext, call_body, signed_event
from pydantic import BaseModel

if TYPE_CHECKING:
    from collections.abc import ItemsView

    import pytest
    from median_lambda.authoring.registry import Registry
    from median_lambda.testing import MedianTestClient, TestAnswer


class NoteInput(BaseModel):
    """An author's model that leaves extra fields open, so the handler closes it in a subclass."""

    note: str = ""


class CountedOutput(dict[str, Any]):
    """A tool's output that counts how often it is serialised (json reads a dict subclass by .items())."""

    serialised = 0

    def items(self) -> ItemsView[str, Any]:
        CountedOutput.serialised += 1
        return super().items()


def test_a_tools_input_validator_is_built_at_its_first_call_not_when_it_is_registered(
    scratch_registry: Registry, client: MedianTestClient
) -> None:
    # GIVEN a tool whose input model the handler closes to extra fields
    @tool(risk="low", name="noteTaker")
    def take_note(args: NoteInput) -> dict[str, str]:
        """Take a note."""
        return {"note": args.note}

    closed = scratch_registry.find("noteTaker")
    assert closed is not None and closed.input_model is not NoteInput
    # WHEN it is registered, and nothing has called it yet
    # THEN its validator is not built: a cold POST builds the called tool's validator only
    assert closed.input_model.__pydantic_complete__ is False
    # AND its first call builds it, and validates as the closed model must
    assert client.call("noteTaker", {"note": "hi"}).body["output"] == {"note": "hi"}
    assert closed.input_model.__pydantic_complete__ is True
    assert client.call("noteTaker", {"note": "hi", "extra": 1}).status == 422


def test_a_tools_output_is_serialised_once_and_sent_as_it_was_checked(
    scratch_registry: Registry, client: MedianTestClient
) -> None:
    # GIVEN a tool whose output counts its serialisations
    @tool(risk="low", name="countedOutput")
    def counted(args: NoteInput) -> dict[str, Any]:
        """Answer with a counted output."""
        return CountedOutput(note=args.note)

    CountedOutput.serialised = 0
    # WHEN it is called
    answer = client.call("countedOutput", {"note": "once"})
    # THEN the check that the output is JSON produced the very text that was sent
    assert answer.body == {"version": 1, "ok": True, "output": {"note": "once"}}
    assert CountedOutput.serialised == 1


def warm_call_in_lambda(client: MedianTestClient) -> TestAnswer:
    """A ticketStatus call with a Lambda context (so the tool's time limit is armed), after a first one."""
    body = call_body("ticketStatus", {"ticketNumber": "TCK-1042"}, callId="call_warm")
    client.send(signed_event("POST", body), FakeLambdaContext())
    return client.send(signed_event("POST", body), FakeLambdaContext())


def test_a_warm_call_builds_no_json_encoder_or_decoder(
    sample_tools: Registry, client: MedianTestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a container that has served its first call (whose metrics carry Powertools' ColdStart line, which
    # Powertools prints with a json.dumps of its own, once)
    client.send(signed_event("POST", call_body("ticketStatus", {"ticketNumber": "TCK-1042"})), FakeLambdaContext())
    # AND a count of every JSON encoder and decoder built (json.dumps and json.loads with options build one a call)
    built: list[str] = []
    for codec in (json.JSONEncoder, json.JSONDecoder):
        original = codec.__init__

        def counting_init(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> None:
            built.append(type(self).__name__)
            _original(self, *args, **kwargs)

        monkeypatch.setattr(codec, "__init__", counting_init)
    # WHEN a warm call is served, its metrics flushed
    answer = warm_call_in_lambda(client)
    # THEN it parsed, checked, answered and printed its EMF line with codecs built once per container
    assert answer.status == 200
    assert built == []
