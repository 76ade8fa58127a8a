"""template.yaml with a line edited as its comment tells a user to: the tests of what the template writes out.

A value that does not differ per deployment (the memory, a threshold, reserved concurrency) is
written in the template, with a comment saying how to change it, rather than passed as a
parameter. A test of such a value edits the line as the comment says, on the template's text, and
reads the result as SAM translates it (median_lambda/testing/template.py): the edit the docs describe is
the one proven to work.
"""

from __future__ import annotations

from typing import Any

from median_lambda.project.architecture import set_architecture
from median_lambda.project.sam_config import TEMPLATE, parse_template

# The namespace's lines: the function's (Globals) and each alarm's and the dashboard's, as written.
# Each reader's line is a `Namespace:` of a query's variables, the dashboard's, or a metric's own.
NAMESPACE_LINES = ("POWERTOOLS_METRICS_NAMESPACE: !Ref AWS::StackName", "Namespace: !Ref AWS::StackName")


def template_text() -> str:
    return TEMPLATE.read_text(encoding="utf-8")


def edited_text(*replacements: tuple[str, str], text: str | None = None) -> str:
    """template.yaml's text with each (old, new) replaced; each old must be there exactly once."""
    text = template_text() if text is None else text
    for old, new in replacements:
        assert text.count(old) == 1, f"template.yaml holds {text.count(old)} of {old!r}, not one"
        text = text.replace(old, new)
    return text


def edited(*replacements: tuple[str, str]) -> dict[str, Any]:
    """template.yaml, parsed, with each (old, new) line replaced."""
    return parse_template(edited_text(*replacements))


def with_architecture(architecture: str) -> dict[str, Any]:
    """template.yaml set to another architecture, as `copier copy` and `make invoke LOCAL_ARCH=` set it."""
    text, _ = set_architecture(template_text(), architecture)
    return parse_template(text)


def with_namespace(namespace: str) -> dict[str, Any]:
    """template.yaml with a metrics namespace named on each of its lines, as a user shares one between stacks."""
    text = template_text()
    for line in NAMESPACE_LINES:
        assert text.count(line) >= 1, f"template.yaml holds no {line!r}"
        text = text.replace(line, line.replace("!Ref AWS::StackName", namespace))
    return parse_template(text)
