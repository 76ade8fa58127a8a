"""A body nested as deep as the parser allows is answered with a contract status, never a 500.

The body may nest objects and arrays MAX_NESTING_DEPTH deep, its own object counting as one.
Deeper is `400 bad_request`, whether Python's parser itself gives up (about a thousand levels
on 3.11, more on 3.13) or not; at the limit, every later step (validation, the call's identity,
the idempotency table's copy and hash, the tool, the recorded answer) takes it. Each test runs
as deployed (the table on moto's DynamoDB) and as `make serve` runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from median_lambda import ToolContext, tool
from median_lambda.protocol import MAX_NESTING_DEPTH
from median_lambda.testing import signed_event
from pydantic import BaseModel, Field

from tests.conftest import BOTH

if TYPE_CHECKING:
    from median_lambda.authoring.registry import Registry
    from median_lambda.testing import MedianTestClient, TestAnswer

pytestmark = [
    pytest.mark.parametrize("configuration", BOTH, indirect=True),
    pytest.mark.usefixtures("configuration", "quote_tool"),
]


class _QuoteInput(BaseModel):
    note: str = Field(default="", description="Any text.")


@pytest.fixture
def quote_tool(scratch_registry: Registry) -> None:
    @tool(risk="low", name="quoteConversation")
    def quote_conversation(args: _QuoteInput, ctx: ToolContext) -> dict[str, object]:
        """Echo the conversation, as a tool that hands it on to a service does."""
        return {"conversation": ctx.conversation}


def _nested(levels: int, innermost: str = "1.0") -> str:
    """JSON text nesting `levels` arrays and objects (alternately, an array outermost), around `innermost`."""
    pairs, odd = divmod(levels, 2)
    inside = f"[{innermost}]" if odd else innermost
    return '[{"next": ' * pairs + inside + "}]" * pairs


# Where the nesting sits, and the body's text around it: the body's own object is one level,
# and the member holding the nesting is inside it.
PLACES = {
    "conversation": (
        '{{"version":1,"op":"call","tool":"quoteConversation","callId":"{call_id}",'
        '"input":{{}},"conversation":{{"history":{nested}}}}}',
        200,
    ),
    "an unknown input field": (
        '{{"version":1,"op":"call","tool":"quoteConversation","callId":"{call_id}","input":{{"extra":{nested}}}}}',
        422,
    ),
    "a member the protocol ignores": (
        '{{"version":1,"op":"call","tool":"quoteConversation","callId":"{call_id}","trace":{{"spans":{nested}}}}}',
        200,
    ),
}


def _send(client: MedianTestClient, place: str, levels_inside: int, call_id: str) -> TestAnswer:
    template, _ = PLACES[place]
    body = template.format(call_id=call_id, nested=_nested(levels_inside)).encode()
    return client.send(signed_event("POST", body))


@pytest.mark.parametrize("place", list(PLACES))
def test_a_body_nested_to_the_limit_is_served_and_its_retry_answered_alike(
    place: str, client: MedianTestClient
) -> None:
    # GIVEN a body whose deepest point is exactly the limit: the body's object, the member, and the rest
    levels_inside = MAX_NESTING_DEPTH - 2
    # WHEN it arrives, and again as a retry with the same callId
    first = _send(client, place, levels_inside, "call_at_the_limit")
    retry = _send(client, place, levels_inside, "call_at_the_limit")
    # THEN it is answered as any body would be there (the tool runs, or the extra field is refused),
    # and the retry gets the same answer
    _, status = PLACES[place]
    assert first.status == status, first.body
    assert retry.status == status
    assert retry.body == first.body


@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize(
    "levels_over",
    [1, 900, 1_000, 9_900, 100_000],
    ids=["one over", "near 3.11's parser limit", "past it", "near 3.13's parser limit", "far past any limit"],
)
def test_a_body_nested_past_the_limit_is_400_bad_request_naming_it(
    place: str, levels_over: int, client: MedianTestClient
) -> None:
    # GIVEN a body nested deeper than the limit, by one level or by many
    levels_inside = MAX_NESTING_DEPTH - 2 + levels_over
    # WHEN it arrives
    answer = _send(client, place, levels_inside, f"call_over_{levels_over}")
    # THEN it is refused 400 bad_request, saying how deep a body may nest: never a 500
    assert answer.status == 400, answer.body
    assert answer.body["error"]["code"] == "bad_request"
    assert f"more than {MAX_NESTING_DEPTH} deep" in answer.body["error"]["message"]


def test_brackets_inside_strings_do_not_count_as_nesting(client: MedianTestClient) -> None:
    # GIVEN a shallow conversation whose text holds many more brackets than the limit
    text = "[{" * (MAX_NESTING_DEPTH * 4)
    body = (
        '{"version":1,"op":"call","tool":"quoteConversation","callId":"call_brackets",'
        f'"input":{{}},"conversation":{{"note":"{text}"}}}}'
    ).encode()
    # WHEN it arrives
    answer = client.send(signed_event("POST", body))
    # THEN it is served: only objects and arrays nest
    assert answer.status == 200, answer.body
    assert answer.body["output"] == {"conversation": {"note": text}}


def test_the_shortest_body_nested_one_level_too_deep_is_refused(client: MedianTestClient) -> None:
    # GIVEN the fewest bytes that nest past the limit: the body's object, one member, and arrays inside it
    body = ('{"":' + "[" * MAX_NESTING_DEPTH + "]" * MAX_NESTING_DEPTH + "}").encode()
    assert len(body) == 2 * (MAX_NESTING_DEPTH + 1) + 3
    # WHEN it arrives
    answer = client.send(signed_event("POST", body))
    # THEN it is refused for its depth, before anything reads its members: no byte count lets it past
    assert answer.status == 400
    assert answer.body["error"]["message"] == (
        f"The body is not JSON this endpoint accepts: it nests objects and arrays more than {MAX_NESTING_DEPTH} deep."
    )
