"""The stage a run plays on: the artifact that deploys, the production stage's environment, moto for
Secrets Manager and DynamoDB, the extension's stand-in, and the events.

- The artifact is what `median build-artifact` makes of this project (the build `sam build` runs,
  `build-MedianToolsFunction`): handler/, median-lambda's runtime, the example project's own tools/,
  the packages uv.lock pins as Linux wheels, their bytecode, the prebuilt manifest, stages and tool
  modules; built for this machine's architecture (template.yaml's is arm64; a wheel of another
  cannot be imported here), with the Python the build finds (make bench's, 3.13: the runtime's).
- The environment is every variable template.yaml gives the function of the production stage
  (samconfig.toml's [production] parameters, translated by SAM's own translator), with the
  variables Lambda's runtime sets; where this machine differs it says so in `differences`.
- Secrets Manager and DynamoDB are moto's server on a free loopback port, reached over HTTP; the
  Parameters and Secrets extension is tests/support/secrets_extension.py's stand-in.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from median_lambda.protocol import (
    KEY_SECRET_ENV,
    PREBUILT_MANIFEST_FILE,
    SECRETS_EXTENSION_PORT_ENV,
    SECRETS_EXTENSION_TOKEN_ENV,
    TOOLS_PACKAGE_ENV,
)
from median_lambda.testing import call_body, signed_event

from tests.support.secrets_extension import SecretsExtensionStandIn

if TYPE_CHECKING:
    from contextlib import ExitStack

ROOT = Path(__file__).resolve().parent.parent
FUNCTION = "MedianToolsFunction"
STAGE = "production"  # samconfig.toml's config-env whose environment the function runs with
REGION = "us-east-1"  # moto's
# The example project's read, which every row serves: tools/orders.py's orderStatus.
TOOL, TOOL_MODULE, TOOL_INPUT = "orderStatus", "tools/orders.py", {"orderNumber": "ORD-1042"}
# As tools/orders.py declares it (a pure read: no record), and declared back into the record, as the peer's is.
DECLARED_AS_A_READ, DECLARED_RECORDED = '@tool(risk="low", idempotent=False)', '@tool(risk="low")'
BENCH_KEY = "mk_bench_0123456789abcdef"  # made up for this run, served on loopback only
SESSION_TOKEN = "bench-session-token"  # noqa: S105 - what the extension's stand-in accepts, on loopback
# What API Gateway's HTTP API adds to each of Median's requests, so the loops pay for real events.
GATEWAY_HEADERS = {
    "accept": "application/json",
    "accept-encoding": "gzip, deflate",
    "user-agent": "Median",
    "x-amzn-trace-id": "Root=1-6745a1b2-0123456789abcdef01234567",
    "x-forwarded-for": "203.0.113.7",
    "x-forwarded-port": "443",
    "x-forwarded-proto": "https",
}
# The extension's own settings, which template.yaml gives the function with the extension's layer: what
# the function has when it is off (the template's ParametersSecretsExtensionLayerArn=none).
EXTENSION_OFF = "none"
# Lambda's names for this machine's instruction set.
ARCHITECTURES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "arm64", "arm64": "arm64"}


@dataclass(frozen=True)
class Stage:
    """What every process and loop of one run shares."""

    work: Path  # a temporary directory, gone after the run
    runtime_python: str  # the Python the processes run: the aws-sdk group (the runtime's boto3) beside the artifact
    artifact: Path  # as `median build-artifact` makes it: orderStatus declared a read (idempotent=False)
    recorded_artifact: Path  # the same, orderStatus declared back into the record, as the peer's is
    # The production stage's environment: as deployed (the table named, the key through the extension),
    # `_boto3` with the extension off; `serve`, without the table, as `make serve` runs.
    deployed: dict[str, str]
    deployed_boto3: dict[str, str]
    serve: dict[str, str]
    serve_boto3: dict[str, str]
    manifest_path: Path
    manifest: str  # the prebuilt manifest's text, which the floors answer
    served_manifest: Any  # the same, parsed: what every GET must answer
    measured: dict[str, Any]  # what the report says was measured: the artifact, the tools, the environment

    def peer_environment(self) -> dict[str, str]:
        """What bench/peer.py reads beside the function's environment: the manifest it serves."""
        return {"BENCH_MANIFEST": str(self.manifest_path)}

    def python_path(self, artifact: Path) -> str:
        """The PYTHONPATH of a process that runs bench's own code beside the artifact: the artifact first, then
        this repository (for `bench.peer` and `bench.container`, which are not in the artifact)."""
        return os.pathsep.join([str(artifact), str(ROOT)])


def set_the_stage(stack: ExitStack, runtime_python: str) -> Stage:
    """moto and the extension's stand-in started (stopped with `stack`), the artifacts built, the environments."""
    work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="median-bench-")))
    endpoint_url = start_moto(stack)
    # The stand-in reads Secrets Manager with boto3 in this process, as the extension reads it beside the function.
    os.environ.update(aws_credentials(endpoint_url))
    extension = stack.enter_context(SecretsExtensionStandIn(endpoint_url, SESSION_TOKEN))
    artifact, built = build_artifact(work / "artifact")
    recorded = shutil.copytree(artifact, work / "recorded-artifact")
    declare_recorded(recorded)
    deployed, template_variables, stack_name = production_environment(endpoint_url, extension.port)
    deployed_boto3 = production_environment(endpoint_url, None)[0]
    table, secret = deployed["IDEMPOTENCY_TABLE"], deployed[KEY_SECRET_ENV]
    create_resources(endpoint_url, table, secret)
    manifest_path = artifact / "median_lambda" / PREBUILT_MANIFEST_FILE
    manifest = manifest_path.read_text(encoding="utf-8").strip()
    without_table = {"IDEMPOTENCY_TABLE"}
    return Stage(
        work=work,
        runtime_python=runtime_python,
        artifact=artifact,
        recorded_artifact=recorded,
        deployed=deployed,
        deployed_boto3=deployed_boto3,
        serve=_without(deployed, without_table),
        serve_boto3=_without(deployed_boto3, without_table),
        manifest_path=manifest_path,
        manifest=manifest,
        served_manifest=json.loads(manifest),
        measured={
            "artifact": built,
            "tools": {
                "package": "tools (the example project's own)",
                "served": f"{TOOL} ({TOOL_MODULE}), declared {DECLARED_AS_A_READ}; the rows with the table "
                f"serve a copy of the artifact where it is declared {DECLARED_RECORDED}, as the peer records it",
                "modules": sorted(path.name for path in (artifact / "tools").glob("*.py")),
            },
            "environment": {
                "stage": f"{STAGE} (samconfig.toml's [{STAGE}] parameters), stack {stack_name}",
                "from_template": template_variables,
                "differences": {
                    SECRETS_EXTENSION_PORT_ENV: f"the stand-in's port, {extension.port}, for the extension's 2773",
                    "IDEMPOTENCY_TABLE, MEDIAN_KEY_SECRET_ID": "moto's table and secret of those names",
                    "AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN": (
                        "moto's endpoint and this run's credential, for the role's"
                    ),
                    "AWS_LAMBDA_*, AWS_REGION, AWS_EXECUTION_ENV, _HANDLER, TZ": ("set as Lambda's runtime sets them"),
                },
            },
        },
    )


def _without(environment: dict[str, str], names: set[str]) -> dict[str, str]:
    return {name: value for name, value in environment.items() if name not in names}


def lambda_architecture() -> str:
    machine = platform.machine().lower()
    if machine not in ARCHITECTURES:
        raise SystemExit(f"make bench runs on x86_64 or arm64, as Lambda does; this machine is {machine}")
    return ARCHITECTURES[machine]


def build_artifact(directory: Path) -> tuple[Path, dict[str, Any]]:
    """What `median build-artifact` (sam build's step) makes of this project, for this machine; and its description."""
    environment = {name: value for name, value in os.environ.items() if name != TOOLS_PACKAGE_ENV}
    environment["LAMBDA_ARCHITECTURE"] = lambda_architecture()
    built = subprocess.run(  # noqa: S603 - this venv's median, on this repository
        [sys.executable, "-m", "median_lambda", "build-artifact", str(directory)],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    if built.returncode != 0:
        raise SystemExit(f"median build-artifact failed, so there is nothing to measure:\n{built.stdout}{built.stderr}")
    if DECLARED_AS_A_READ not in (directory / TOOL_MODULE).read_text(encoding="utf-8"):
        raise SystemExit(f"{TOOL_MODULE} no longer declares {TOOL} as {DECLARED_AS_A_READ}: the bench serves that read")
    files = [path for path in directory.rglob("*") if path.is_file()]
    archive = shutil.make_archive(str(directory.parent / "artifact"), "zip", directory)
    return directory, {
        "built_by": "median build-artifact (sam build's build-MedianToolsFunction), from this repository",
        "architecture": environment["LAMBDA_ARCHITECTURE"],
        "files": len(files),
        "bytecode_files": sum(1 for path in files if path.suffix == ".pyc"),
        "unzipped_bytes": sum(path.stat().st_size for path in files),
        "zipped_bytes": Path(archive).stat().st_size,
    }


def declare_recorded(artifact: Path) -> None:
    """orderStatus declared back into the record, as a tool with no `idempotent=False` is; its bytecode gone with
    its source changed (the build's bytecode is hash-based and unchecked: it would be read as it was)."""
    module = artifact / TOOL_MODULE
    module.write_text(module.read_text(encoding="utf-8").replace(DECLARED_AS_A_READ, DECLARED_RECORDED), "utf-8")
    for compiled in (module.parent / "__pycache__").glob(f"{module.stem}.*.pyc"):
        compiled.unlink()


def production_environment(endpoint: str, extension_port: int | None) -> tuple[dict[str, str], list[str], str]:
    """The function's environment on the production stage, as template.yaml gives it and Lambda's runtime adds
    to it; the extension's port set to the stand-in's, or, with `extension_port` None, the extension off as
    the template turns it off. With the names template.yaml set, and the stack's name."""
    from median_lambda.project.sam_config import deploy_config, load_template, parameter_overrides
    from median_lambda.testing import translated

    logging.getLogger("samtranslator").setLevel(logging.ERROR)  # its feature toggles' notes otherwise
    config = deploy_config(ROOT / "samconfig.toml", STAGE)
    overrides = parameter_overrides(config)
    if extension_port is None:
        overrides["ParametersSecretsExtensionLayerArn"] = EXTENSION_OFF
    stack_name = str(config["stack_name"])
    stack = translated(load_template(ROOT / "template.yaml"), stack_name=stack_name, **overrides)
    function = stack.properties(FUNCTION)
    variables = {name: _as_deployed(value, stack_name) for name, value in function["Environment"]["Variables"].items()}
    if extension_port is not None:
        variables[SECRETS_EXTENSION_PORT_ENV] = str(extension_port)
    function_name = f"{stack_name}-{FUNCTION}"
    environment = {
        name: value
        for name, value in os.environ.items()
        # PYTHON*: a PYTHONDONTWRITEBYTECODE of the caller's would change what a cold start reads.
        if not name.startswith(("AWS_", "MEDIAN_", "POWERTOOLS_", "PYTHON", "IDEMPOTENCY_", "PARAMETERS_SECRETS_"))
        and not name.startswith(("SECRETS_MANAGER_", "SSM_PARAMETER_STORE_", "LAMBDA_", "_HANDLER", "VIRTUAL_ENV"))
    }
    environment |= variables
    environment |= aws_credentials(endpoint)
    environment |= {
        "AWS_LAMBDA_FUNCTION_NAME": function_name,
        "AWS_LAMBDA_FUNCTION_VERSION": "1",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(function["MemorySize"]),
        "AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand",
        "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{function_name}",
        "AWS_EXECUTION_ENV": f"AWS_Lambda_{function['Runtime']}",
        "_HANDLER": str(function["Handler"]),
        "TZ": ":UTC",
    }
    return environment, sorted(variables), stack_name


def _as_deployed(value: Any, stack_name: str) -> str:
    """A variable's value as the function gets it; a resource's Ref by the name CloudFormation gives it."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict) and list(value) == ["Ref"]:
        return f"{stack_name}-{value['Ref']}"
    return str(value)


def start_moto(stack: ExitStack) -> str:
    """moto's server on loopback; returns its endpoint URL."""
    from median_lambda.testing.moto_server import LocalMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # a line per request otherwise
    # The project's one way to run moto: loopback only, no web page's request answered, and only
    # requests signed with this run's credential.
    server = LocalMotoServer()
    endpoint = server.start()
    stack.callback(server.stop)
    return endpoint


def create_resources(endpoint: str, table: str, secret: str) -> None:
    """The key's secret, and the idempotency table as template.yaml declares it, under the production stage's names."""
    from median_lambda.contract.deployed import create_table
    from median_lambda.project.sam_config import load_template
    from median_lambda.testing import MedianAWS, translated

    aws = MedianAWS(endpoint)
    aws.create_secret(secret, BENCH_KEY)
    properties = translated(load_template(ROOT / "template.yaml")).properties("IdempotencyTable")
    create_table(aws, table, properties)


def aws_credentials(endpoint: str) -> dict[str, str]:
    """What the bench's processes reach moto with: its endpoint and this run's credential, which it answers alone."""
    from median_lambda.testing.moto_server import run_credentials

    return {
        **run_credentials().environment(),
        SECRETS_EXTENSION_TOKEN_ENV: SESSION_TOKEN,
        "AWS_DEFAULT_REGION": REGION,
        "AWS_REGION": REGION,
        "AWS_ENDPOINT_URL": endpoint,
    }


def get_event() -> dict[str, Any]:
    return signed_event("GET", key=BENCH_KEY, headers=GATEWAY_HEADERS)


def post_event() -> dict[str, Any]:
    """An orderStatus call with a callId of its own, as Median sends each call."""
    body = call_body(TOOL, TOOL_INPUT, callId=f"call_{uuid.uuid4().hex}")
    return signed_event("POST", body, key=BENCH_KEY, headers=GATEWAY_HEADERS)
