"""Median's rules across an organisation's endpoints: each tool name once, and 20 tools in all.

Median's GET page allows "up to 20 tools, and 20 across every endpoint in the organization",
and wants each name "unique across every endpoint in the organization". One endpoint's
check cannot see the others: `python -m median_lambda check --also SOURCE ...` reads their
manifests (saved files, or a signed GET of each endpoint) and checks them with this one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from median_lambda.manifest.rules import Problem
from median_lambda.protocol import MAX_TOOLS, PROTOCOL_VERSION

THIS_ENDPOINT = "this endpoint"


class NotAManifest(ValueError):
    """What a source holds is not a manifest; the message says what it is instead."""


@dataclass(frozen=True)
class Endpoint:
    label: str  # "this endpoint", or the SOURCE as given: a file's path or an endpoint's URL
    tool_names: tuple[str, ...]


def endpoint_of(label: str, document: Any) -> Endpoint:
    """The endpoint a manifest describes; NotAManifest if the document is none."""
    if not isinstance(document, dict):
        raise NotAManifest(f"holds JSON {type(document).__name__}, not a manifest object")
    if document.get("version") != PROTOCOL_VERSION:
        raise NotAManifest(f'has no "version": {PROTOCOL_VERSION}, so it is no manifest of this protocol')
    tools = document.get("tools")
    if not isinstance(tools, list):
        raise NotAManifest('has no "tools" list, so it is no manifest')
    names = []
    for index, entry in enumerate(tools):
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str):
            raise NotAManifest(f"has a tool without a name (tools[{index}]), so it is no manifest Median would sync")
        names.append(name)
    return Endpoint(label, tuple(names))


def _listed(labels: list[str]) -> str:
    return labels[0] if len(labels) == 1 else f"{', '.join(labels[:-1])} and {labels[-1]}"


def check_organisation(endpoints: list[Endpoint]) -> list[Problem]:
    """One problem per name two endpoints share (naming them), and one if they hold over 20 tools in all."""
    served_by: dict[str, list[str]] = {}
    for endpoint in endpoints:
        # A name repeated inside one endpoint is that endpoint's own problem: its own check names it.
        for name in dict.fromkeys(endpoint.tool_names):
            served_by.setdefault(name, []).append(endpoint.label)
    problems = [
        Problem(name, "name", f"is served by {_listed(labels)}; Median wants each name once across the organisation")
        for name, labels in served_by.items()
        if len(labels) > 1
    ]
    total = sum(len(endpoint.tool_names) for endpoint in endpoints)
    if total > MAX_TOOLS:
        counts = ", ".join(f"{endpoint.label} {len(endpoint.tool_names)}" for endpoint in endpoints)
        problems.append(
            Problem(
                "organisation",
                "tools",
                f"has {total} tools across {len(endpoints)} endpoints ({counts}); Median accepts at most {MAX_TOOLS}",
            )
        )
    return problems


def summary(endpoints: list[Endpoint]) -> str:
    total = sum(len(endpoint.tool_names) for endpoint in endpoints)
    return f"{total}/{MAX_TOOLS} tools across {len(endpoints)} endpoints, each name once"
