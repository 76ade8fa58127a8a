"""A cold GET: the manifest the build prebuilt, and what a new container must not import to serve it
(and a cold POST: what its tools do not take, it does not import).

Median sends a GET before the agent's first reply in every new conversation, so a cold GET
stands between a customer and that reply. These tests hold the design that keeps it near the
floor (bench/README.md): each one runs the handler in a fresh Python process, as a new Lambda
container runs it, from an artifact laid out as `sam build` lays it out.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from typing import TYPE_CHECKING

import pytest
from median_lambda import app
from median_lambda.protocol import (
    IDEMPOTENCY_TABLE_ENV,
    KEY_SECRET_ENV,
    PREBUILT_MANIFEST_FILE,
    PREBUILT_STAGES_FILE,
    STAGE_ENV,
    TOOLS_PACKAGE_ENV,
)
from median_lambda.testing import TEST_KEY, FakeLambdaContext, dev_key, signed_event

from tests.scratch_tools import SAMPLE_TOOLS
from tests.support.cold_start import cold_start, lay_out_artifact

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from median_lambda.authoring.registry import Registry
    from mypy_boto3_secretsmanager import SecretsManagerClient


@pytest.fixture(autouse=True)
def _serving_the_sample_tools(sample_tools: Registry) -> None:
    """tests/sample_tools/ here, in every artifact laid out, and in every cold process."""


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(TOOLS_PACKAGE_ENV, SAMPLE_TOOLS)
        yield lay_out_artifact(tmp_path_factory.mktemp("artifact"), prebuilt_manifest=True)


@pytest.fixture
def lambda_env(secrets: SecretsManagerClient) -> dict[str, str]:
    """A deployed function's environment: the key in Secrets Manager (moto's server), no dev key,
    and an idempotency table named (template.yaml always names one; GET never touches it). The
    tools served are the sample tools, copied into the artifact at their own import path."""
    secret_name = f"median/cold-get-{uuid.uuid4().hex}"  # moto's server lives for the whole session
    secrets.create_secret(Name=secret_name, SecretString=TEST_KEY)
    env = {name: value for name, value in os.environ.items() if not name.startswith("MEDIAN_")}
    return {
        **env,
        KEY_SECRET_ENV: secret_name,
        IDEMPOTENCY_TABLE_ENV: "median-idempotency",
        "AWS_LAMBDA_FUNCTION_NAME": "median-tools",
        TOOLS_PACKAGE_ENV: SAMPLE_TOOLS,
    }


def test_the_prebuilt_manifest_is_byte_for_byte_the_one_get_builds_from_the_tools(
    artifact: Path, sample_tools: Registry
) -> None:
    # GIVEN the file `python -m median_lambda manifest` wrote into the artifact, as sam build runs it
    prebuilt = (artifact / "median_lambda" / PREBUILT_MANIFEST_FILE).read_text(encoding="utf-8").strip()
    in_source = os.path.exists(app.PREBUILT_MANIFEST)  # noqa: PTH110 - a str, as app.py keeps it
    assert not in_source, "median_lambda/manifest.json is in the source tree: only the build writes it"
    # WHEN a GET is served from the source tree, where the manifest is built from the tools
    with dev_key(TEST_KEY):
        served = app.lambda_handler(signed_event("GET"), FakeLambdaContext())  # type: ignore[arg-type]
    # THEN both are the same bytes, and a manifest with the sample tools
    assert served["statusCode"] == 200
    assert served["body"] == prebuilt
    assert [tool["name"] for tool in json.loads(prebuilt)["tools"]] == [tool.name for tool in sample_tools.tools]


def test_a_cold_get_imports_neither_pydantic_nor_the_tools_nor_powertools(
    artifact: Path, lambda_env: dict[str, str]
) -> None:
    # GIVEN a new container, the key in Secrets Manager and the prebuilt manifest in the artifact
    # WHEN it answers its first request, a signed GET
    started = cold_start(signed_event("GET"), artifact, lambda_env)
    # THEN it serves the manifest having imported none of what only POST needs
    assert started.answer.status == 200
    assert started.response["body"] == (artifact / "median_lambda" / PREBUILT_MANIFEST_FILE).read_text().strip()
    packages = {module.split(".")[0] for module in started.modules}
    assert "pydantic" not in packages, "GET imported pydantic: the prebuilt manifest should need none"
    tool_modules = [name for name in started.modules if name == SAMPLE_TOOLS or name.startswith(f"{SAMPLE_TOOLS}.")]
    assert not tool_modules, "GET imported the tool modules: the prebuilt manifest should need none"
    assert "aws_lambda_powertools" not in packages, "GET imported Powertools: its package import costs a cold GET"
    assert "boto3" in packages  # the key came from Secrets Manager, over HTTP


def test_a_cold_post_to_tools_that_take_no_settings_never_loads_the_settings_reader(
    artifact: Path, lambda_env: dict[str, str]
) -> None:
    # GIVEN a new container whose tools take no Settings, Secret or Parameter
    # WHEN it answers its first request, a signed call
    body = json.dumps({"version": 1, "op": "call", "tool": "ticketStatus", "input": {"ticketNumber": "TCK-1042"}})
    started = cold_start(signed_event("POST", body.encode()), artifact, lambda_env)
    # THEN it answers without importing what reads settings.toml or a tool's secrets
    assert started.answer.status == 200, started.answer.body
    assert "tomllib" not in started.modules
    assert "median_lambda.authoring.settings" not in started.modules
    assert "median_lambda.authoring.dependencies" not in started.modules


def test_a_cold_get_serves_the_prebuilt_file_rather_than_the_tools(tmp_path: Path, lambda_env: dict[str, str]) -> None:
    # GIVEN an artifact whose prebuilt manifest differs from what the tools would build
    artifact = lay_out_artifact(tmp_path, prebuilt_manifest=False)
    prebuilt = '{"version":1,"tools":[],"diagnostics":false}'
    (artifact / "median_lambda" / PREBUILT_MANIFEST_FILE).write_text(prebuilt + "\n", encoding="utf-8")
    # WHEN a new container answers a signed GET
    started = cold_start(signed_event("GET"), artifact, lambda_env)
    # THEN the answer is that file, as written
    assert started.answer.status == 200
    assert started.response["body"] == prebuilt


def test_an_empty_prebuilt_file_is_ignored_and_the_manifest_built_from_the_tools(
    tmp_path: Path, lambda_env: dict[str, str], sample_tools: Registry
) -> None:
    # GIVEN an artifact whose manifest.json is empty (a build that redirected a failed command)
    artifact = lay_out_artifact(tmp_path, prebuilt_manifest=False)
    (artifact / "median_lambda" / PREBUILT_MANIFEST_FILE).write_text("", encoding="utf-8")
    # WHEN a new container answers a signed GET
    started = cold_start(signed_event("GET"), artifact, lambda_env)
    # THEN it serves the manifest built from the tools, not an empty body
    assert started.answer.status == 200
    assert [tool["name"] for tool in started.answer.body["tools"]] == [tool.name for tool in sample_tools.tools]


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_container_whose_stage_the_build_never_saw_refuses_the_request_and_counts_it(
    artifact: Path, lambda_env: dict[str, str], method: str, tmp_path: Path
) -> None:
    # GIVEN an artifact whose build wrote its stages from a settings.toml holding [default] alone, deployed with a typo
    stages = tmp_path / "artifact"
    shutil.copytree(artifact, stages)
    (stages / "median_lambda" / PREBUILT_STAGES_FILE).write_text("default\n", encoding="utf-8")
    artifact = stages
    body = json.dumps({"version": 1, "op": "call", "tool": "ticketStatus", "input": {"ticketNumber": "TCK-1042"}})
    event = signed_event(method, body.encode() if method == "POST" else b"")
    # WHEN a new container answers its first request
    started = cold_start(event, artifact, {**lambda_env, STAGE_ENV: "prodution"})
    # THEN it is a 500 that names only the reference, whatever the method
    assert started.answer.status == 500
    assert started.answer.body["error"] == {
        "code": "internal_error",
        "message": (
            "This endpoint's deployment is misconfigured, so it serves no request; reference cold-start-request."
        ),
    }
    # AND its log says why and what to do, and its metrics count a crash of every tool
    records = [json.loads(line) for line in started.output.splitlines() if line.startswith("{")]
    [refused] = [record for record in records if record.get("level") == "ERROR"]
    assert refused["message"].startswith(
        "This function refuses every request: MEDIAN_STAGE=prodution names no stage of"
    )
    assert "whose stages are default: check its spelling, or add a [prodution] table" in refused["message"]
    [metrics] = [record for record in records if "ToolCrashes" in record]
    assert (metrics["tool"], metrics["ToolCrashes"]) == ("(every tool)", [1.0])
    # AND its 500 counts once among the version's 5XX answers
    assert [record["ServerErrors"] for record in records if "ServerErrors" in record] == [[1.0]]


@pytest.mark.parametrize("stage", ["staging", "production", "eu-prod"])
def test_a_project_without_settings_serves_as_any_stage_it_is_deployed_as(
    artifact: Path, lambda_env: dict[str, str], stage: str
) -> None:
    # GIVEN an artifact built from tools with no settings.toml at all (the sample tools), whose build wrote so
    written = (artifact / "median_lambda" / PREBUILT_STAGES_FILE).read_text(encoding="utf-8").split()
    assert written == ["default", "*"]
    # WHEN a new container deployed as a stage samconfig.toml names answers a call
    body = json.dumps({"version": 1, "op": "call", "tool": "ticketStatus", "input": {"ticketNumber": "TCK-1042"}})
    started = cold_start(signed_event("POST", body.encode()), artifact, {**lambda_env, STAGE_ENV: stage})
    # THEN it serves: no stage has a value of its own that it could miss
    assert started.answer.status == 200, started.answer.body
    assert "tomllib" not in started.modules


def test_a_container_of_a_stage_the_build_wrote_serves_without_reading_settings_toml(
    tmp_path: Path, lambda_env: dict[str, str]
) -> None:
    # GIVEN an artifact whose build wrote a staging stage, deployed as staging
    artifact = lay_out_artifact(tmp_path, prebuilt_manifest=True)
    (artifact / "median_lambda" / PREBUILT_STAGES_FILE).write_text("default\nstaging\n", encoding="utf-8")
    # WHEN a new container answers a call
    body = json.dumps({"version": 1, "op": "call", "tool": "ticketStatus", "input": {"ticketNumber": "TCK-1042"}})
    started = cold_start(signed_event("POST", body.encode()), artifact, {**lambda_env, STAGE_ENV: "staging"})
    # THEN it serves, having read neither settings.toml nor anything that parses TOML to know its stage
    assert started.answer.status == 200, started.answer.body
    assert "tomllib" not in started.modules
    assert "median_lambda.authoring.settings" not in started.modules
