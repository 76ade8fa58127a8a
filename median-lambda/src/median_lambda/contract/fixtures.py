"""The contract suite's machinery: your endpoint as template.yaml deploys it, your tools kept from
running, and the suite's own tools for what must run one.

- `endpoint`: `lambda_handler` in the function's deployed configuration, read from template.yaml
  as CloudFormation gets it (median_lambda.testing.translated): the function's environment, its Median
  key in Secrets Manager (TEST_KEY, under the secret name the template passes), its idempotency
  table shaped as the template declares it, and a Lambda context with the function's timeout, all
  on moto's server (the `median_aws` fixture). One difference, said here: the Parameters and
  Secrets extension is not on this machine, so the key is read through boto3, the same
  GetSecretValue the extension would make.
- Your tools are served as they are, but each one's function is swapped for one that fails the
  test: your tools reach real systems, and every request this suite sends to them is one Median's
  contract refuses before a tool runs.
- `contract_tools`: the endpoint serving median_lambda/contract/contract_tools/ instead, for a retried call.

It relies on nothing in tests/ outside this folder (a generated project has no tests/conftest.py).
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

import pytest

from median_lambda.contract.deployed import (
    CONTRACT_TOOLS,
    NO_TOOLS_YET,
    DeployedFunction,
    Endpoint,
    GuardedTools,
    create_table,
    deployed_function_of_template,
    your_tools,
)
from median_lambda.project.lock import FOLDER_SOURCES, locked_library
from median_lambda.protocol import SECRETS_EXTENSION_PORT_ENV, TOOLS_PACKAGE_ENV
from median_lambda.testing import TEST_KEY, forget_what_a_container_keeps

if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import ModuleType

    from median_lambda.authoring.registry import Tool
    from median_lambda.testing import MedianAWS


@pytest.fixture(scope="session")
def contract_deployed_function() -> DeployedFunction:
    """template.yaml's function, as SAM translates it with every parameter at its default."""
    # The entry point imported first, in the run's own environment: what it reads once, at import (the
    # cold start's line on idempotency, the tracer), is the process's, as in any other test of the run.
    import median_lambda.app  # noqa: F401

    return deployed_function_of_template()


@pytest.fixture
def contract_endpoint(
    median_aws: MedianAWS, contract_deployed_function: DeployedFunction, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Endpoint]:
    """Your tools served by `lambda_handler` as template.yaml deploys it, on a fresh moto; none of them can run."""
    from median_lambda.app import forget_manifest
    from median_lambda.authoring.registry import load_tools

    for name in (SECRETS_EXTENSION_PORT_ENV, TOOLS_PACKAGE_ENV, "AWS_SAM_LOCAL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in contract_deployed_function.environment.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", contract_deployed_function.function_name)
    contract_endpoint = Endpoint(contract_deployed_function, median_aws)
    median_aws.create_secret(contract_deployed_function.key_secret, TEST_KEY)
    create_table(median_aws, contract_endpoint.table_name, contract_deployed_function.table)

    registry = load_tools()
    guard = GuardedTools()
    guarded: list[Tool] = [
        dataclasses.replace(served, function=guard.stand_in(served.name), is_async=False, dependencies=())
        for served in registry.tools
    ]
    monkeypatch.setattr(registry, "tools", guarded)
    monkeypatch.setattr(registry, "diagnostics", [guard.stand_in("your diagnostics") for _ in registry.diagnostics])
    # A fresh container: the environment above read anew, and GET's manifest built from the tools served.
    forget_what_a_container_keeps()
    forget_manifest()
    yield contract_endpoint
    forget_manifest()
    assert not guard.ran, f"the contract suite ran {', '.join(guard.ran)}, which it must never do"


@pytest.fixture
def contract_tools(contract_endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The endpoint serving the suite's contract_tools/ in place of your tools, imported afresh: its ledger."""
    from median_lambda.app import forget_manifest
    from median_lambda.authoring.registry import registry, reload_tools

    monkeypatch.setattr(registry, "tools", registry.tools)  # put back after the test, as are the diagnostics
    monkeypatch.setattr(registry, "diagnostics", registry.diagnostics)
    monkeypatch.setenv(TOOLS_PACKAGE_ENV, CONTRACT_TOOLS)
    forget_what_a_container_keeps()  # the tools package is one of the settings a container reads once
    reload_tools(CONTRACT_TOOLS)
    forget_manifest()
    yield importlib.import_module(f"{CONTRACT_TOOLS}.ledger")
    forget_manifest()


@pytest.fixture
def contract_endpoint_without_key(contract_endpoint: Endpoint) -> Endpoint:
    """The key's secret, named by template.yaml, deleted: a check that needs the key cannot get one."""
    contract_endpoint.aws.client("secretsmanager").delete_secret(
        SecretId=contract_endpoint.deployed.key_secret, ForceDeleteWithoutRecovery=True
    )
    return contract_endpoint


# What the build reads: the Makefile and what its recipe runs, and what it copies.
BUILD_INPUTS = (
    "Makefile",
    "pyproject.toml",
    "uv.lock",
    "template.yaml",
    "samconfig.toml",
    "handler",
    "tools",
)
# Your machine's values, and what editors leave beside them: none may reach the function.
LOCAL_FILES = (
    "settings.local.toml",
    "settings.local.toml~",
    ".settings.local.toml.swp",
    "#settings.local.toml#",
    "settings.local.toml.bak",
)
# Set by make, or by a test of the framework's: a user's `make build` has neither.
_NOT_IN_A_BUILD = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", TOOLS_PACKAGE_ENV, "AWS_LAMBDA_FUNCTION_NAME")
_CACHES = shutil.ignore_patterns("__pycache__", "manifest.json")


@pytest.fixture(scope="module")
def contract_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The function's artifact as this project's Makefile builds it, from a copy with local files in tools/."""
    copy = tmp_path_factory.mktemp("project")
    for name in BUILD_INPUTS:
        source = Path.cwd() / name
        if source.is_dir():
            shutil.copytree(source, copy / name, ignore=_CACHES)
        elif source.is_file():
            shutil.copy2(source, copy / name)  # its time kept: make sees the venv as up to date
    library = locked_library(Path.cwd() / "uv.lock")
    folder = library.source.get(library.kind) if library.kind in FOLDER_SOURCES else None
    if folder is not None and not Path(folder).is_absolute():
        # The build installs median-lambda as uv.lock pins it: from a folder of the project (the template
        # repository's own median-lambda/, a workspace member), the copy needs that folder too.
        shutil.copytree(Path.cwd() / folder, copy / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / ".venv").symlink_to(sys.prefix, target_is_directory=True)
    for name in LOCAL_FILES:
        if not (copy / "tools" / name).exists():
            (copy / "tools" / name).write_text('CARRIER_BASE_URL = "http://127.0.0.1:8081"\n', encoding="utf-8")
    artifact = copy / "artifact"
    environment = {name: value for name, value in os.environ.items() if name not in _NOT_IN_A_BUILD}
    # -o: the venv counts as installed, as it is (it is the one running this test).
    make = ["make", "--no-print-directory", "-o", ".venv/.installed", "build-MedianToolsFunction"]
    built = subprocess.run(  # noqa: S603 - make, on the project's own target, with our own arguments
        [*make, f"ARTIFACTS_DIR={artifact}"],
        cwd=copy,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    return artifact


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """`your_tool`: each of your tools, by name; `your_tool_requiring_fields`: each that requires a field.
    Where there is none, one test is skipped, saying why."""
    if "your_tool" in metafunc.fixturenames:
        names = [served.name for served in your_tools()]
        metafunc.parametrize("your_tool", names or [_none(NO_TOOLS_YET)])
    if "your_tool_requiring_fields" in metafunc.fixturenames:
        tools = your_tools()
        requiring = [
            served.name
            for served in tools
            if served.input_model.model_json_schema(by_alias=True, mode="validation").get("required")
        ]
        reason = NO_TOOLS_YET if not tools else "none of your tools requires a field: nothing to leave out"
        metafunc.parametrize("your_tool_requiring_fields", requiring or [_none(reason)])


def _none(reason: str) -> Any:
    return pytest.param(None, id="none", marks=pytest.mark.skip(reason=reason))


# What each module of the suite proves, as its summary line says it.
CHECKED = {
    "test_signature.py": "the signature: the published vectors, 405, each 401 family, 500 no_key",
    "test_manifest.py": "GET: your manifest, Median's sync rules, the three event shapes, each stage you deploy",
    "test_post.py": "POST's refusals: 400, 404, 413, and 422 naming the field, for each of your tools",
    "test_idempotency.py": "a retried callId answered from the idempotency table, a reused one refused",
    "test_artifact.py": "the build: handler/, your tools, median-lambda's runtime, the manifest, nothing local",
    "test_permissions_boundary.py": "the pipeline's permissions boundary holds every right your stack's roles have",
    "test_pipeline_role.py": "the pipeline's roles may deploy every resource your template declares, and no more",
    "test_iam_patterns_own_stack.py": "every IAM pattern reaches your stack's own resources, and no neighbour stack's",
}


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """What the contract suite checked, module by module, where a person reads it at the end of `make test`."""
    tallies: dict[str, dict[str, int]] = {}
    for outcome in ("passed", "failed", "error", "skipped"):
        for report in terminalreporter.stats.get(outcome, []):
            module = _contract_module(report)
            if module is not None:
                tally = tallies.setdefault(module, {})
                tally[outcome] = tally.get(outcome, 0) + 1
    if not tallies:
        return
    names = [served.name for served in your_tools()]
    terminalreporter.write_sep("-", "Median contract (median-lambda's contract suite)")
    terminalreporter.write_line(
        f"on your {len(names)} tool(s): {', '.join(names)}" if names else "on no tool of yours: tools/ has none yet"
    )
    for module, tally in tallies.items():
        counts = ", ".join(f"{count} {outcome}" for outcome, count in tally.items())
        terminalreporter.write_line(f"  {CHECKED.get(module, module)} ({counts})")


def _contract_module(report: Any) -> str | None:
    """The suite's module that defines the test `report` is about (wherever a project's file imported it from)."""
    location = getattr(report, "location", None)
    path = PurePath(str(location[0])) if location else None
    return path.name if path is not None and path.parent.parts[-2:] == ("median_lambda", "contract") else None
