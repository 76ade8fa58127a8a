"""The stage a run plays on: moto for Secrets Manager and DynamoDB, the extension's stand-in, the
environments a function is given, the artifacts it is imported from, and the events it answers.

Secrets Manager and DynamoDB are moto's server on a free loopback port, reached over HTTP, so
every process and loop of a run reads the same key from the same place.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
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

from tests.support.cold_start import lay_out_artifact
from tests.support.secrets_extension import SecretsExtensionStandIn

if TYPE_CHECKING:
    from contextlib import ExitStack

ROOT = Path(__file__).resolve().parent.parent
# The bench's own tools (Median's example, `orderStatus`), so it measures the same endpoint whatever `tools/` holds.
BENCH_TOOLS = "bench.bench_tools"
SECRET_NAME = "median-bench-key"  # noqa: S105 - a name
IDEMPOTENCY_TABLE = "median-bench-idempotency"
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

# Run by the runtime venv's Python: the top-level files and packages of the project's dependencies
# and everything they require, as the build installs them from uv.lock into the artifact.
# boto3 is not among them (group aws-sdk: the Lambda runtime provides it, precompiled).
SHIPPED_PACKAGES_SCRIPT = """
import importlib.metadata as metadata, json, re, sys, tomllib
with open(sys.argv[1], "rb") as file:
    wanted = tomllib.load(file)["project"]["dependencies"]
name = lambda requirement: re.split(r"[\\s\\[<>=!~;]", requirement, maxsplit=1)[0]
todo, seen, paths = [name(r) for r in wanted], set(), set()
while todo:
    try:
        distribution = metadata.distribution(todo.pop())
    except metadata.PackageNotFoundError:
        continue  # a requirement whose marker excludes this Python
    if distribution.metadata["Name"].lower() in seen:
        continue
    seen.add(distribution.metadata["Name"].lower())
    todo += [name(r) for r in distribution.requires or [] if "extra ==" not in r]
    for file in distribution.files or []:
        if file.parts[0] not in ("..", "__pycache__", "bin") and not file.parts[0].endswith(".dist-info"):
            paths.add(str(distribution.locate_file(file.parts[0])))
print(json.dumps(sorted(paths)))
"""


@dataclass(frozen=True)
class Stage:
    """What every process and loop of one run shares."""

    work: Path  # a temporary directory, gone after the run
    runtime_python: str  # the Python the cold processes run
    # As deployed: the idempotency table named (a GET never touches it) and the extension's port
    # set, as template.yaml's defaults make it; `_boto3`, the extension switched off.
    deployed: dict[str, str]
    deployed_boto3: dict[str, str]
    # As `make serve` runs: no table, so a call runs its tool with no DynamoDB write. The warm POST
    # targets are measured so (the warm floor makes no write); the cold POST targets as deployed.
    serve: dict[str, str]
    serve_boto3: dict[str, str]
    artifact: Path  # laid out as `sam build` lays it, the prebuilt manifest and bench/peer.py in it
    # The same, its orderStatus declared idempotent=False, as a pure read may be: no table for its calls.
    read_only_artifact: Path
    manifest_path: Path
    manifest: str  # the prebuilt manifest's text, which the floors answer
    served_manifest: Any  # the same, parsed: what every GET must answer


def set_the_stage(stack: ExitStack, runtime_python: str) -> Stage:
    """moto and the extension's stand-in started (stopped with `stack`), the environments, the artifact."""
    # Before anything reads which package the handler serves: lay_out_artifact, then the handler.
    os.environ[TOOLS_PACKAGE_ENV] = BENCH_TOOLS
    work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="median-bench-")))
    endpoint_url = start_moto(stack)
    # The stand-in reads Secrets Manager with boto3 in this process, as the extension reads it beside the function.
    os.environ.update(aws_credentials(endpoint_url))
    extension = stack.enter_context(SecretsExtensionStandIn(endpoint_url, SESSION_TOKEN))
    artifact = lay_out_artifact(work / "artifact", prebuilt_manifest=True)
    shutil.copy2(ROOT / "bench" / "peer.py", artifact / "bench" / "peer.py")
    read_only = shutil.copytree(artifact, work / "read-only-artifact")
    tool_module = read_only / "bench" / "bench_tools" / "orders.py"
    declared, read_only_declared = '@tool(risk="low")', '@tool(risk="low", idempotent=False)'
    if declared not in tool_module.read_text(encoding="utf-8"):
        raise SystemExit(f"{tool_module.name} no longer declares orderStatus as {declared}: say how to make it a read")
    tool_module.write_text(tool_module.read_text(encoding="utf-8").replace(declared, read_only_declared), "utf-8")
    manifest_path = artifact / "median_lambda" / PREBUILT_MANIFEST_FILE
    manifest = manifest_path.read_text(encoding="utf-8").strip()
    return Stage(
        work=work,
        runtime_python=runtime_python,
        deployed=lambda_environment(endpoint_url, idempotency=True, extension_port=extension.port),
        deployed_boto3=lambda_environment(endpoint_url, idempotency=True, extension_port=None),
        serve=lambda_environment(endpoint_url, idempotency=False, extension_port=extension.port),
        serve_boto3=lambda_environment(endpoint_url, idempotency=False, extension_port=None),
        artifact=artifact,
        read_only_artifact=read_only,
        manifest_path=manifest_path,
        manifest=manifest,
        served_manifest=json.loads(manifest),
    )


def start_moto(stack: ExitStack) -> str:
    """moto's server on loopback, holding the bench key and an idempotency table; returns its endpoint URL."""
    import boto3
    from median_lambda.testing.moto_server import LocalMotoServer, run_credentials

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # a line per request otherwise
    # The project's one way to run moto: loopback only, no web page's request answered, and only
    # requests signed with this run's credential.
    server = LocalMotoServer()
    endpoint = server.start()
    stack.callback(server.stop)
    credentials = run_credentials()
    session = boto3.Session(
        aws_access_key_id=credentials.access_key_id,
        aws_secret_access_key=credentials.secret_access_key,
        region_name="us-east-1",
    )
    session.client("secretsmanager", endpoint_url=endpoint).create_secret(Name=SECRET_NAME, SecretString=BENCH_KEY)
    # Shaped as template.yaml makes it: Powertools Idempotency's records, keyed on `id`.
    session.client("dynamodb", endpoint_url=endpoint).create_table(
        TableName=IDEMPOTENCY_TABLE,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    return endpoint


def aws_credentials(endpoint: str) -> dict[str, str]:
    """What the bench's processes reach moto with: its endpoint and this run's credential, which it answers alone."""
    from median_lambda.testing.moto_server import run_credentials

    return {
        **run_credentials().environment(),
        SECRETS_EXTENSION_TOKEN_ENV: SESSION_TOKEN,
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": endpoint,
    }


def lambda_environment(endpoint: str, *, idempotency: bool, extension_port: int | None) -> dict[str, str]:
    """A deployed function's environment: a named secret, the run's credential for moto, no dev key; with
    `idempotency`, the table named, as template.yaml always names it; with `extension_port`, the
    extension's variable set, as template.yaml sets it with the extension's layer."""
    env = {
        name: value
        for name, value in os.environ.items()
        # PYTHON*: a PYTHONDONTWRITEBYTECODE of the caller's would keep the artifact's handler/ and
        # tools from ever having .pyc files, which the rows "as built: no .pyc" measure on purpose.
        if not name.startswith(("AWS_", "MEDIAN_", "POWERTOOLS_", "PYTHON", "IDEMPOTENCY_", "PARAMETERS_SECRETS_"))
    }
    env.update(aws_credentials(endpoint))
    env.update(
        {
            "AWS_LAMBDA_FUNCTION_NAME": "median-tools",
            KEY_SECRET_ENV: SECRET_NAME,
            TOOLS_PACKAGE_ENV: BENCH_TOOLS,
        }
    )
    if idempotency:
        env["IDEMPOTENCY_TABLE"] = IDEMPOTENCY_TABLE
    if extension_port is not None:
        env[SECRETS_EXTENSION_PORT_ENV] = str(extension_port)
    return env


def lay_out_shipped_artifact(directory: Path, runtime_python: str) -> Path:
    """The artifact as `make build` ships it without a Python 3.13 at hand: handler/, the tools, the
    prebuilt manifest and the runtime group's packages, and not one .pyc (pip --no-compile; the tar
    of handler/ and the tools leaves them out)."""
    lay_out_artifact(directory, prebuilt_manifest=True)
    listed = subprocess.run(  # noqa: S603 - the runtime venv's Python running the script above
        [runtime_python, "-c", SHIPPED_PACKAGES_SCRIPT, str(ROOT / "pyproject.toml")],
        capture_output=True,
        text=True,
        check=True,
    )
    for source in map(Path, json.loads(listed.stdout)):
        if source.is_dir():
            shutil.copytree(source, directory / source.name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, directory / source.name)
    return directory


def get_event() -> dict[str, Any]:
    return signed_event("GET", key=BENCH_KEY, headers=GATEWAY_HEADERS)


def post_event() -> dict[str, Any]:
    """An orderStatus call with a callId of its own, as Median sends each call."""
    body = call_body("orderStatus", {"orderNumber": "ORD-1042"}, callId=f"call_{uuid.uuid4().hex}")
    return signed_event("POST", body, key=BENCH_KEY, headers=GATEWAY_HEADERS)
