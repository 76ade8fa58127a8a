"""Saved CloudWatch Logs Insights queries, evaluated on real log records as far as their commands go.

A query that reads a field no line carries returns nothing, and says nothing about it: the tests
apply each saved query's `filter` and `parse` commands to the records the handler really wrote,
then hold the fields the rest reads to the lines kept. Only the commands and conditions the
template's queries use are understood; any other fails the test that meets it, naming it, rather
than being skipped (teach it here, or write the query so).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_WORDS = {"filter", "parse", "fields", "stats", "sort", "by", "as", "and", "or", "not", "desc", "asc", "in", "limit"}
# A field's name: not inside a longer word or number (the `d` of `bin(1d)`), and not a function's (`latest(`).
_NAME = re.compile(r"(?<![\w.@])(@?[A-Za-z_][\w.]*)\s*(\(?)")


def commands(query_string: str) -> list[str]:
    """The query's commands, each with its continuation lines, without the pipes between them."""
    return [" ".join(command.split()) for command in re.split(r"\n\s*\|", query_string.strip())]


def parse_patterns(query_string: str) -> list[re.Pattern[str]]:
    """The query's `parse field /regex/` patterns, in Python's syntax for named groups."""
    found = [re.fullmatch(r"parse @?\w+ /(.+)/", command) for command in commands(query_string)]
    return [re.compile(each[1].replace("(?<", "(?P<")) for each in found if each is not None]


def _holds(condition: str, record: dict[str, Any]) -> bool:
    verdicts = []
    for term in condition.split(" and "):
        if present := re.fullmatch(r"ispresent\((@?\w+)\)", term):
            verdicts.append(present[1] in record)
        elif equal := re.fullmatch(r'(@?\w+) = "([^"]*)"', term):
            verdicts.append(record.get(equal[1]) == equal[2])
        else:
            raise AssertionError(f"a filter the test cannot evaluate: {term!r}")
    return all(verdicts)


def selected(query_string: str, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records the query's filter and parse commands keep, each with the fields its parse commands add."""
    rows = [dict(record) for record in records]
    for command in commands(query_string):
        verb, _, rest = command.partition(" ")
        if verb == "filter":
            rows = [row for row in rows if _holds(rest, row)]
        elif verb == "parse":
            parsed = re.fullmatch(r"(@?\w+) /(.+)/", rest)
            assert parsed is not None, command
            pattern = re.compile(parsed[2].replace("(?<", "(?P<"))
            for row in rows:
                if (found := pattern.search(str(row.get(parsed[1], "")))) is not None:
                    row.update({name: value for name, value in found.groupdict().items() if value is not None})
        elif verb not in ("stats", "sort", "fields"):
            raise AssertionError(f"a command the test cannot evaluate: {command!r}")
    return rows


@dataclass(frozen=True)
class FieldsRead:
    """What a query reads of each line it keeps."""

    # Filtered or grouped on (`filter`, `stats ... by`): a line without one is dropped or grouped apart.
    on_every_line: frozenset[str]
    # Aggregated (`latest(x)`, `fields coalesce(x, y)`): each must be on some line, or reads nothing.
    on_some_line: frozenset[str]


def _names(text: str) -> set[str]:
    return {word for word, call in _NAME.findall(text) if not call and word not in _WORDS}


def fields_read(query_string: str) -> FieldsRead:
    """The fields a query's commands read, less the names it gives its own results (`as x`)."""
    every: set[str] = set()
    some: set[str] = set()
    named: set[str] = set()
    for command in commands(query_string):
        verb, _, rest = command.partition(" ")
        if verb == "parse":  # what it parses out is read like a field the line carries: it must match
            every |= _names(rest.split(" /", 1)[0])
            continue
        text = re.sub(r'"[^"]*"', " ", rest)
        named |= set(re.findall(r"\bas (\w+)", text))
        if verb == "stats":
            aggregated, _, grouped = text.rpartition(" by ") if " by " in text else (text, "", "")
            some |= _names(aggregated)
            every |= _names(grouped)
        elif verb == "filter":
            every |= _names(text)
        else:
            some |= _names(text)
    return FieldsRead(frozenset(every - named), frozenset(some - named - every))
