"""GET (docs/protocol.md §5): the manifest your tools make, in the shape of Median's GET page, within
Median's sync rules, alike on each event shape the function is reached by.

Read against your tools as they are registered: each tool's name, risk and description, and the
fields pydantic finds in its input model. With no tool at all, the manifest is the empty one, which
Median accepts. test_artifact.py holds the build's prebuilt manifest to this same answer.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from median_lambda.authoring.registry import load_tools
from median_lambda.cli.deployment import deployment
from median_lambda.contract.deployed import your_tools
from median_lambda.manifest.build import build_manifest
from median_lambda.protocol import STAGE_ENV
from median_lambda.rules import check_manifest
from median_lambda.testing import PAYLOAD_FORMATS, forget_what_a_container_keeps, signed_event

if TYPE_CHECKING:
    from median_lambda.contract.deployed import Endpoint


@pytest.mark.parametrize("shape", PAYLOAD_FORMATS)
def test_get_answers_the_manifest_of_your_tools_in_the_seed_pages_shape(
    shape: str, contract_endpoint: Endpoint
) -> None:
    # GIVEN your tools, as tools/ registers them
    tools = your_tools()
    # WHEN Median GETs the manifest, reaching the function by this event shape
    answer = contract_endpoint.get(payload_format=shape)
    # THEN 200, JSON, with exactly the page's members, and one entry per tool, in order
    assert answer.status == 200, answer.body
    assert answer.headers["Content-Type"] == "application/json"
    manifest = answer.body
    assert set(manifest) == {"version", "tools", "diagnostics"}
    assert manifest["version"] == 1
    assert manifest["diagnostics"] is bool(load_tools().diagnostics)
    assert [entry["name"] for entry in manifest["tools"]] == [served.name for served in tools]
    for entry, served in zip(manifest["tools"], tools, strict=True):
        # AND each entry says what its tool's declaration says, and lists its model's fields, no more, no less
        assert set(entry) == {"name", "description", "risk", "inputSchema"}
        assert (entry["description"], entry["risk"]) == (served.description, served.risk), served.name
        fields = served.input_model.model_json_schema(by_alias=True, mode="validation")
        schema = entry["inputSchema"]
        assert schema["type"] == "object"
        assert set(schema["properties"]) == set(fields.get("properties", {})), served.name
        assert set(schema.get("required", [])) == set(fields.get("required", [])), served.name
        assert schema["additionalProperties"] is False, served.name


def test_the_manifest_keeps_every_sync_rule_median_checks(contract_endpoint: Endpoint) -> None:
    # GIVEN your tools
    # WHEN the manifest is built from them, and Median GETs it
    _, problems = build_manifest(load_tools())
    manifest = contract_endpoint.get().body
    # THEN neither the builder nor Median's sync rules (median_lambda.rules) find a problem: Median would sync it
    assert [str(problem) for problem in problems] == []
    assert [str(problem) for problem in check_manifest(manifest)] == []


def test_the_manifest_is_compact_json_and_alike_on_every_event_shape(contract_endpoint: Endpoint) -> None:
    # WHEN Median GETs the manifest through each event shape
    bodies = {
        shape: contract_endpoint.invoke(signed_event("GET", payload_format=shape))["body"] for shape in PAYLOAD_FORMATS
    }
    # THEN every answer is the same bytes, and they carry no whitespace between tokens
    assert len(set(bodies.values())) == 1, bodies
    raw = bodies["2.0"]
    assert raw == json.dumps(json.loads(raw), separators=(",", ":"), ensure_ascii=False)


def test_a_function_deployed_as_each_of_your_stages_answers_get(
    contract_endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN each stage this project deploys: template.yaml's default Stage, and samconfig.toml's config-envs'
    stages = sorted({stage.name for stage in deployment().stages})
    assert stages, "template.yaml names no Stage the function is deployed as"
    answers = {}
    for stage in stages:
        # WHEN Median GETs the manifest from a function deployed as that stage
        monkeypatch.setenv(STAGE_ENV, stage)
        forget_what_a_container_keeps()
        answers[stage] = contract_endpoint.get()
    # THEN every stage answers it: tools/settings.toml has a table for each, or a container would refuse all
    refused = {stage: answer.body.get("error") for stage, answer in answers.items() if answer.status != 200}
    assert refused == {}
    assert all(answer.body == answers[stages[0]].body for answer in answers.values())
