"""JSON read as strictly as a request body: no NaN or infinities, no repeated member, no deep nesting.

A call's body (median_lambda/calls/dispatch.py), a tool's JSON secret (`Secret(field=...)`,
median_lambda/authoring/dependencies.py) and the Median key's JSON secret (median_lambda/key/source.py) are read
by these same rules, so that nothing the endpoint reads takes what a body would be refused for:
- `NaN`, `Infinity` and `-Infinity`, which are no JSON, and a number too large for a double
  (`1e999`), which Python would read as an infinity;
- a member repeated in one object: two parsers that keep different copies of it disagree;
- objects and arrays nested more than MAX_NESTING_DEPTH deep.

A secret's numbers are given as they are written (`loads_as_written`): `1e2` is the text `1e2`,
where a float would make it `100.0`. No reason a document is refused quotes it: a secret's value
never reaches a log through its error.
"""

from __future__ import annotations

import json
from typing import Any

from median_lambda.protocol import MAX_NESTING_DEPTH

TOO_DEEP = f"it nests objects and arrays more than {MAX_NESTING_DEPTH} deep"
TOO_LARGE_FOR_A_DOUBLE = "a number too large for a double"


def refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Two parsers that keep different copies of a repeated key can be made to disagree.
    document = dict(pairs)
    if len(document) != len(pairs):
        raise ValueError("an object repeats a key")
    return document


def nests_deeper_than(document: Any, limit: int) -> bool:
    """Whether objects and arrays nest more than `limit` deep in `document`, itself counting as one.

    A loop over one level at a time, not a recursion: the document may be as deep as the parser's limit.
    """
    level = [document]
    for _ in range(limit):
        deeper: list[Any] = []
        for container in level:
            for value in container.values() if isinstance(container, dict) else container:
                if isinstance(value, (dict, list)):
                    deeper.append(value)
        if not deeper:
            return False
        level = deeper
    return True


class NumberText(str):
    """A JSON number as it is written in the document: `1e2`, `0.10`, `5432`."""

    __slots__ = ()


def _integer_as_written(text: str) -> NumberText:
    int(text)  # a body's integer is read as an int: one Python will not read (over 4,300 digits) is refused alike
    return NumberText(text)


def _float_as_written(text: str) -> NumberText:
    if float(text) in (float("inf"), float("-inf")):
        raise ValueError(TOO_LARGE_FOR_A_DOUBLE)
    return NumberText(text)


# Built once, as the body's decoder is: json.loads with hooks builds a decoder on every call.
_AS_WRITTEN = json.JSONDecoder(
    parse_constant=refuse_constant,
    parse_float=_float_as_written,
    parse_int=_integer_as_written,
    object_pairs_hook=object_without_duplicates,
)


def loads_as_written(text: str) -> Any:
    """`text` as JSON by a body's rules, each number a NumberText as it is written.

    Raises json.JSONDecodeError for text that is no JSON (its message gives a line and column,
    never the text), and ValueError, its message the rule broken, for JSON these rules refuse.
    """
    try:
        document = _AS_WRITTEN.decode(text)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None
    if isinstance(document, (dict, list)) and nests_deeper_than(document, MAX_NESTING_DEPTH):
        raise ValueError(TOO_DEEP)
    return document
