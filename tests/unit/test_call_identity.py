"""What identifies a call for its callId, and what the handler's parser makes: properties over any JSON.

A reused callId is matched against the call's identity (median_lambda/calls/idempotency.py, call_identity).
The property: two calls get one identity exactly when they name the same tool, carry the same
input, and come from the same conversation: known by its `id` when it names one, by all it
holds otherwise. "The same" is judged here by an oracle of its own, which tells every JSON type
apart (1, 1.0 and true are three values; so are 0.0 and -0.0), not by Python's `==`.

Every value is made as the handler makes it: JSON text through its strict parser, so whole
numbers written as floats arrive as median_lambda/calls/whole_numbers.py's WholeFloat.
"""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st
from median_lambda.calls.dispatch import parse_body
from median_lambda.calls.idempotency import call_identity
from median_lambda.calls.whole_numbers import WholeFloat, as_identified
from pydantic import BaseModel

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0, 1, 1.0, -0.0, 0.0, True, False, "", "1", "id", "conversation"])
    | st.text(max_size=8)
)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=8,
)
# What a conversation's `id` may be, the odd ones often: empty values name no conversation.
ids = st.sampled_from([None, False, "", [], {}, 0, "conv_9", "conv_10"]) | json_values
conversations = st.one_of(
    st.dictionaries(st.text(max_size=4), json_values, max_size=3),
    st.builds(lambda named, rest: {**rest, "id": named}, ids, st.dictionaries(st.text(max_size=4), json_values)),
)
tools = st.sampled_from(["refund", "refundOrder", "", "id"])


def parsed(value: Any) -> Any:
    """`value` as the handler's parser gives it back from JSON text: what a call really carries."""
    return parse_body(json.dumps({"value": value}).encode())["value"]


def strict(value: Any) -> Any:
    """The oracle's form of a JSON value: every type apart, floats by their bits, objects by their members."""
    if isinstance(value, bool) or value is None:
        return ("literal", value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("float", float(value).hex())
    if isinstance(value, str):
        return ("str", value)
    if isinstance(value, list):
        return ("list", tuple(strict(item) for item in value))
    return ("object", frozenset((name, strict(item)) for name, item in value.items()))


def names_the_conversation(named: Any) -> bool:
    return named not in (None, "") and named is not False and named != [] and named != {}


def same_call(first: tuple[str, Any, dict[str, Any]], second: tuple[str, Any, dict[str, Any]]) -> bool:
    """The oracle: the same tool, the same input, the same conversation by its id, or whole when it has none."""

    def conversation_key(conversation: dict[str, Any]) -> Any:
        named = conversation.get("id")
        return ("id", strict(named)) if names_the_conversation(named) else ("whole", strict(conversation))

    return (
        first[0] == second[0]
        and strict(first[1]) == strict(second[1])
        and conversation_key(first[2]) == conversation_key(second[2])
    )


@st.composite
def pairs_of_calls(draw: st.DrawFn) -> tuple[tuple[str, Any, dict[str, Any]], tuple[str, Any, dict[str, Any]]]:
    """Two calls, often alike: one changed a little, or the id and what it holds swapped about."""
    first = (draw(tools), parsed(draw(json_values)), parsed(draw(conversations)))
    how = draw(st.sampled_from(["independent", "same", "new tool", "new input", "conversation", "swapped"]))
    if how == "independent":
        second = (draw(tools), parsed(draw(json_values)), parsed(draw(conversations)))
    elif how == "same":
        second = (first[0], parsed(first[1]), parsed({**first[2], **draw(st.dictionaries(st.just("more"), scalars))}))
    elif how == "new tool":
        second = (draw(tools), first[1], first[2])
    elif how == "new input":
        second = (first[0], parsed(draw(json_values)), first[2])
    elif how == "conversation":
        second = (first[0], first[1], parsed(draw(conversations)))
    else:  # the pair and its kin: {"id": X} beside X, or {"id": ["id", X]} beside {"id": X}
        named = first[2].get("id")
        swapped = named if isinstance(named, dict) else {"id": ["id", named]}
        second = (first[0], first[1], parsed(swapped))
    return first, second


@given(pairs_of_calls())
@example((("refund", {}, {"id": {"thread": "t1"}}), ("refund", {}, {"thread": "t1"})))
@example((("refund", {}, {"id": ["id", "conv_9"]}), ("refund", {}, {"id": "conv_9"})))
@example((("refund", {"amount": 1}, {}), ("refund", {"amount": WholeFloat(1.0, "1.0")}, {})))
@example((("refund", {"amount": 0.0}, {}), ("refund", {"amount": -0.0}, {})))
@example((("refund", {"flag": True}, {}), ("refund", {"flag": 1}, {})))
# JSON's empty values name no conversation, so all of each is compared; `true` names one, as `0` does.
@example((("refund", {}, {"id": "", "thread": "t1"}), ("refund", {}, {"id": "", "thread": "t2"})))
@example((("refund", {}, {"id": False, "thread": "t1"}), ("refund", {}, {"id": False, "thread": "t2"})))
@example((("refund", {}, {"id": True, "thread": "t1"}), ("refund", {}, {"id": True, "thread": "t2"})))
def test_two_calls_share_an_identity_exactly_when_they_are_the_same_call(
    pair: tuple[tuple[str, Any, dict[str, Any]], tuple[str, Any, dict[str, Any]]],
) -> None:
    # GIVEN two calls: tool, input and conversation, as the handler's parser makes them
    first, second = pair
    # WHEN each is given its identity, as a reused callId is matched against
    identities = call_identity(*first), call_identity(*second)
    # THEN the identities are equal exactly when the oracle calls them the same call
    assert (identities[0] == identities[1]) == same_call(first, second), pair


@given(json_values)
@example(WholeFloat(25.0, "25.0"))
@example({"score": WholeFloat(1.0, "1e0"), "turns": [WholeFloat(9007199254740992.0, "9007199254740993.0")]})
def test_what_the_parser_makes_survives_copying_pickling_and_json(value: Any) -> None:
    # GIVEN any JSON value as the handler's parser makes it, whole floats with their literals
    made = parsed(value)
    # WHEN it is copied, deep-copied, pickled and written back as JSON, as Powertools or a tool may do
    copies = [copy.copy(made), copy.deepcopy(made), pickle.loads(pickle.dumps(made))]  # noqa: S301 - our own bytes
    written = json.loads(json.dumps(made))
    # THEN each copy is the same value, of the same types, and whole floats keep what was written
    for copied in copies:
        assert strict(copied) == strict(made)
        assert literals(copied) == literals(made)
    assert strict(parsed(written)) == strict(made)


def literals(value: Any) -> list[str]:
    """The literals of the WholeFloats in `value`, in a fixed order."""
    if isinstance(value, WholeFloat):
        return [value.literal]
    if isinstance(value, list):
        return [literal for item in value for literal in literals(item)]
    if isinstance(value, dict):
        return [literal for name in sorted(value) for literal in literals(value[name])]
    return []


# --- Never coarser than the tool: the input as its model sees it ---------------------------------------------------


class _Refund(BaseModel):
    cents: int = 0
    rate: float = 0.0


# Integers near where a double stops holding each one, and far past it, written every way JSON allows.
_near_the_edge = st.integers(min_value=2**53 - 3, max_value=2**53 + 3)
_far_past_it = st.integers(min_value=2**60, max_value=2**60 + 9)
_integers = st.integers(min_value=-4, max_value=4) | _near_the_edge | _far_past_it | _near_the_edge.map(lambda n: -n)


@st.composite
def written_numbers(draw: st.DrawFn) -> str:
    """A JSON number as a model may write an integer: plainly, with `.0`, with an exponent, or as a double."""
    number = draw(_integers)
    how = draw(st.sampled_from(["plain", "point zero", "exponent", "double"]))
    if how == "plain":
        return str(number)
    if how == "point zero":
        return f"{number}.0"
    if how == "exponent":
        digits = str(abs(number))
        return f"{'-' if number < 0 else ''}{digits[0]}.{digits[1:] or '0'}e{len(digits) - 1}"
    return repr(float(number))


def _as_the_tool_sees(written: str, field: str) -> tuple[Any, Any]:
    """The call's input as the handler parses it, and the value its tool gets for `field` (None if refused)."""
    from median_lambda.calls.whole_numbers import whole_floats_as_integers
    from pydantic import ValidationError

    document = parse_body(f'{{"input": {{"{field}": {written}}}}}'.encode())["input"]
    try:
        model = _Refund.model_validate_json(json.dumps(whole_floats_as_integers(_Refund, document)), strict=True)
    except ValidationError:
        return document, None
    value = getattr(model, field)
    return document, (type(value), value.hex() if isinstance(value, float) else value)


@given(written_numbers(), written_numbers(), st.sampled_from(["cents", "rate"]))
@example("9007199254740993.0", "9007199254740992.0", "cents")
@example("9007199254740993", "9007199254740992.0", "cents")
@example("1e2", "100", "cents")
def test_two_inputs_share_an_identity_only_when_the_tool_sees_the_same_value(
    first: str, second: str, field: str
) -> None:
    # GIVEN two inputs, each a number written as a model may write it, in an integer or a float field
    (document_a, seen_a), (document_b, seen_b) = _as_the_tool_sees(first, field), _as_the_tool_sees(second, field)
    if seen_a is None or seen_b is None:
        return  # refused 422 before any record is made
    # WHEN each is identified as dispatch identifies it
    identity_a = call_identity("refund", as_identified(_Refund, document_a), {})
    identity_b = call_identity("refund", as_identified(_Refund, document_b), {})
    # THEN one identity means one value for the tool: a retry is never answered with another call's result
    if identity_a == identity_b:
        assert seen_a == seen_b, (first, second)


@given(json_values)
def test_an_input_a_double_can_tell_keeps_the_identity_records_were_stored_under(value: Any) -> None:
    # GIVEN any input without a whole float past 2**53 in an integer field (whole floats elsewhere included)
    document = parsed({"cents": value, "rate": value})
    # WHEN it is identified as dispatch identifies it
    # THEN it is identified as before this rule: a record stored by the earlier version still answers its retry
    if not (isinstance(value, float) and value.is_integer() and abs(value) >= 2**53):
        assert as_identified(_Refund, document) is document


@given(json_values)
@example(3.0)
@example(2**60)
@example("9007199254740993")
def test_beside_a_whole_float_past_2_53_every_other_integer_field_keeps_its_value(value: Any) -> None:
    # GIVEN an integer field holding any value but a whole float past 2**53, beside a field that holds one
    document = parsed({"cents": value, "rate": 9007199254740993.0})
    # WHEN it is identified as dispatch identifies it
    identified = as_identified(_Refund, document)
    # THEN that field is identified as the earlier version identified it: only the rule's own numbers change
    if not (isinstance(value, float) and value.is_integer() and abs(value) >= 2**53):
        assert strict(identified["cents"]) == strict(document["cents"])
