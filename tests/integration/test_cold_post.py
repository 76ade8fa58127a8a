"""A cold POST as deployed: it imports the module of the tool it runs and nothing else of the tools, and a
tool that may run twice (`idempotent=False`) pays nothing for the idempotency table.

Each test runs the handler in a fresh Python process, as a new Lambda container runs it, from an
artifact laid out as `sam build` lays it out: the prebuilt manifest, the stages, and which module
holds each tool (median_lambda/tool_modules.json). Its environment is a deployed function's: the
idempotency table named, the key read through the Parameters and Secrets extension.
"""

from __future__ import annotations

import json
import os
import textwrap
import uuid
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from median_lambda.protocol import (
    IDEMPOTENCY_TABLE_ENV,
    KEY_SECRET_ENV,
    PREBUILT_TOOL_MODULES_FILE,
    SECRETS_EXTENSION_PORT_ENV,
    SECRETS_EXTENSION_TOKEN_ENV,
    TOOLS_PACKAGE_ENV,
)
from median_lambda.testing import TEST_KEY, MedianAWS, call_body, signed_event

from tests.support.cold_start import ColdStart, cold_start, lay_out_artifact
from tests.support.secrets_extension import SecretsExtensionStandIn

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from mypy_boto3_secretsmanager import SecretsManagerClient

PACKAGE = f"cold_post_tools_{uuid.uuid4().hex[:8]}"
SESSION_TOKEN = "cold-post-session-token"
# The refunds module reads this at import: the build has it, a deployed container of the `broken` artifact not.
REFUND_DESK_ENV = "COLD_POST_REFUND_DESK"

MODULES = {
    "__init__": "",
    # A pure read: running it twice changes nothing, so it declares that it may.
    "stock": '''
        from pydantic import BaseModel, Field

        from median_lambda import tool


        class StockInput(BaseModel):
            sku: str = Field(description="The item's SKU, like SKU-1.")


        @tool(risk="low", idempotent=False)
        def stock_level(args: StockInput) -> dict[str, object]:
            """How many of an item are in stock."""
            return {"sku": args.sku, "inStock": 3}
        ''',
    # A write, at most once per callId; its module imports a library the stock module never needs, and
    # its tool takes settings (tools/settings.toml's reader, which the stock module never needs either).
    "refunds": f'''
        import os
        import xml.dom.minidom

        from pydantic import BaseModel, Field

        from median_lambda import Settings, tool

        DESK = os.environ[{REFUND_DESK_ENV!r}]


        class RefundSettings(Settings):
            refund_limit: int


        class RefundInput(BaseModel):
            order: str = Field(description="The order number, like ORD-1.")


        @tool(risk="reviewed")
        def issue_refund(args: RefundInput, settings: RefundSettings) -> dict[str, object]:
            """Refund an order."""
            return {{"order": args.order, "refunded": True, "desk": DESK, "limit": settings.refund_limit}}
        ''',
    "health": '''
        from median_lambda import diagnostics


        @diagnostics
        def health() -> dict[str, object]:
            """Whether the shop answers."""
            return {"shop": "ok"}
        ''',
}


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The package above, built as `sam build` builds the artifact (its refunds desk set for the build)."""
    source = tmp_path_factory.mktemp("source")
    (source / PACKAGE).mkdir()
    for name, text in MODULES.items():
        (source / PACKAGE / f"{name}.py").write_text(textwrap.dedent(text), encoding="utf-8")
    (source / PACKAGE / "settings.toml").write_text("[default]\nREFUND_LIMIT = 100\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(source))
        patch.setenv("PYTHONPATH", str(source))  # the build's `python -m median_lambda` commands import it too
        patch.setenv(TOOLS_PACKAGE_ENV, PACKAGE)
        patch.setenv(REFUND_DESK_ENV, "desk-1")
        yield lay_out_artifact(tmp_path_factory.mktemp("artifact"), prebuilt_manifest=True)


@pytest.fixture
def deployed(secrets: SecretsManagerClient, moto_endpoint: str) -> Iterator[dict[str, str]]:
    """A deployed function's environment: the key read through the extension, an idempotency table named
    (fresh, on moto's DynamoDB), the refunds desk set."""
    secret_id = f"median/cold-post-{uuid.uuid4().hex[:8]}"
    secrets.create_secret(Name=secret_id, SecretString=TEST_KEY)
    table = MedianAWS(moto_endpoint).create_idempotency_table(f"idempotency-{uuid.uuid4().hex[:12]}")
    env = {name: value for name, value in os.environ.items() if not name.startswith("MEDIAN_")}
    with SecretsExtensionStandIn(moto_endpoint, SESSION_TOKEN) as extension:
        yield {
            **env,
            KEY_SECRET_ENV: secret_id,
            SECRETS_EXTENSION_PORT_ENV: str(extension.port),
            SECRETS_EXTENSION_TOKEN_ENV: SESSION_TOKEN,
            IDEMPOTENCY_TABLE_ENV: table,
            "AWS_LAMBDA_FUNCTION_NAME": "median-tools",
            TOOLS_PACKAGE_ENV: PACKAGE,
            REFUND_DESK_ENV: "desk-1",
        }


def _post(artifact: Path, env: dict[str, str], tool: str, tool_input: dict[str, Any]) -> ColdStart:
    body = call_body(tool, tool_input, callId=f"call_{uuid.uuid4().hex}")
    return cold_start(signed_event("POST", body), artifact, env)


def _imported_tool_modules(started: ColdStart) -> list[str]:
    return sorted(name.removeprefix(f"{PACKAGE}.") for name in started.modules if name.startswith(f"{PACKAGE}."))


def _records(started: ColdStart) -> list[dict[str, Any]]:
    return [json.loads(line) for line in started.output.splitlines() if line.startswith("{")]


def _items(env: dict[str, str]) -> list[dict[str, Any]]:
    client = boto3.client("dynamodb")
    return client.scan(TableName=env[IDEMPOTENCY_TABLE_ENV])["Items"]  # type: ignore[return-value]


def test_the_build_writes_which_module_holds_each_tool_and_the_diagnostics(artifact: Path) -> None:
    # GIVEN the artifact as the build wrote it
    written = json.loads((artifact / "median_lambda" / PREBUILT_TOOL_MODULES_FILE).read_text(encoding="utf-8"))
    # THEN it names, for the package it served, the module of each tool and of the diagnostics
    assert written == {
        "package": PACKAGE,
        "tools": {"stockLevel": f"{PACKAGE}.stock", "issueRefund": f"{PACKAGE}.refunds"},
        "diagnostics": f"{PACKAGE}.health",
    }


def test_a_cold_post_imports_only_the_module_of_the_tool_it_runs(artifact: Path, deployed: dict[str, str]) -> None:
    # WHEN a new container's first request calls the tool of the stock module
    started = _post(artifact, deployed, "stockLevel", {"sku": "SKU-1"})
    # THEN it answers, having imported neither the other tools' modules nor what they import, nor the
    # settings reader another module's tool needs
    assert started.answer.status == 200, started.answer.body
    assert started.answer.body["output"] == {"sku": "SKU-1", "inStock": 3}
    assert _imported_tool_modules(started) == ["stock"]
    assert "xml.dom.minidom" not in started.modules
    assert "tomllib" not in started.modules
    assert "median_lambda.authoring.settings" not in started.modules


def test_a_cold_post_of_another_tool_imports_its_module_alone(artifact: Path, deployed: dict[str, str]) -> None:
    # WHEN a new container's first request calls the tool of the refunds module
    started = _post(artifact, deployed, "issueRefund", {"order": "ORD-1"})
    # THEN that module is the one imported, and its tool has its settings
    assert started.answer.status == 200, started.answer.body
    assert started.answer.body["output"] == {"order": "ORD-1", "refunded": True, "desk": "desk-1", "limit": 100}
    assert _imported_tool_modules(started) == ["refunds"]


def test_the_diagnostics_import_their_module_alone(artifact: Path, deployed: dict[str, str]) -> None:
    # WHEN a new container's first request asks for the diagnostics
    body = json.dumps({"version": 1, "op": "diagnostics"}).encode()
    started = cold_start(signed_event("POST", body), artifact, deployed)
    # THEN it answers them from their module alone
    assert started.answer.status == 200, started.answer.body
    assert started.answer.body["output"] == {"shop": "ok"}
    assert _imported_tool_modules(started) == ["health"]


def test_a_call_to_a_tool_the_build_never_saw_imports_no_tool_module(artifact: Path, deployed: dict[str, str]) -> None:
    # WHEN a new container's first request names no tool of the endpoint
    started = _post(artifact, deployed, "stockLevels", {"sku": "SKU-1"})
    # THEN it answers 404, having imported none of the tools
    assert started.answer.status == 404
    assert started.answer.body["error"]["code"] == "unknown_tool"
    assert _imported_tool_modules(started) == []


def test_without_the_builds_file_a_cold_post_imports_every_tool_module(
    artifact: Path, deployed: dict[str, str], tmp_path: Path
) -> None:
    # GIVEN an artifact without the file that says where each tool lives (a build of an earlier version)
    import shutil

    bare = tmp_path / "artifact"
    shutil.copytree(artifact, bare, ignore=shutil.ignore_patterns(PREBUILT_TOOL_MODULES_FILE))
    # WHEN a new container's first request calls a tool
    started = _post(bare, deployed, "stockLevel", {"sku": "SKU-1"})
    # THEN it answers, having imported the whole package, as a source checkout does (and with it the
    # settings reader another module's tool needs)
    assert started.answer.status == 200, started.answer.body
    assert _imported_tool_modules(started) == ["health", "refunds", "stock"]
    assert "tomllib" in started.modules


def test_a_module_that_fails_to_import_in_the_container_stops_only_its_own_tools(
    artifact: Path, deployed: dict[str, str]
) -> None:
    # GIVEN a container whose refunds module fails at import: what it reads was set for the build only
    env = {name: value for name, value in deployed.items() if name != REFUND_DESK_ENV}
    # WHEN it is called for the refund, and another container for the stock level
    refused = _post(artifact, env, "issueRefund", {"order": "ORD-1"})
    served = _post(artifact, env, "stockLevel", {"sku": "SKU-1"})
    # THEN the refund is a 500 that names only the reference, and the stock level is answered
    assert refused.answer.status == 500
    assert refused.answer.body["error"] == {
        "code": "internal_error",
        "message": "The module that holds this tool failed to import, so it did not run; reference cold-start-request.",
    }
    assert served.answer.status == 200, served.answer.body
    # AND the log names the author's line, and the metrics count that tool's crash
    records = _records(refused)
    [logged] = [record for record in records if record.get("level") == "ERROR"]
    assert logged["message"] == "The module of tool issueRefund failed to import; it did not run"
    assert logged["problems"] == [f"{PACKAGE}/refunds.py:9: KeyError: '{REFUND_DESK_ENV}'"]
    [metrics] = [record for record in records if "ToolCrashes" in record]
    assert (metrics["tool"], metrics["ToolCrashes"]) == ("issueRefund", [1.0])
    # AND its 500 counts once among the version's 5XX answers
    assert [record["ServerErrors"] for record in records if "ServerErrors" in record] == [[1.0]]


def test_a_tool_that_may_run_twice_pays_nothing_for_the_table(artifact: Path, deployed: dict[str, str]) -> None:
    # GIVEN a deployed container, its idempotency table named, the key read through the extension
    # WHEN its first request calls a tool that declares it may run twice, with a callId
    started = _post(artifact, deployed, "stockLevel", {"sku": "SKU-1"})
    # THEN it answers without importing boto3 or any of botocore's client machinery (Powertools' own
    # package imports botocore's bare package, for its user agent), and writes nothing to the table
    assert started.answer.status == 200, started.answer.body
    assert "boto3" not in started.modules
    assert sorted(name for name in started.modules if name.startswith("botocore.")) == []
    assert _items(deployed) == []


def test_a_tool_that_must_run_once_records_its_call_in_the_table(artifact: Path, deployed: dict[str, str]) -> None:
    # GIVEN the same container
    # WHEN its first request calls a tool that runs at most once per callId
    started = _post(artifact, deployed, "issueRefund", {"order": "ORD-1"})
    # THEN the table holds the call's record
    assert started.answer.status == 200, started.answer.body
    [record] = _items(deployed)
    assert record["status"] == {"S": "COMPLETED"}
