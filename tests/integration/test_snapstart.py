"""SnapStart's hooks: a snapshot holds the warm machinery and nothing of one container's own.

Lambda cannot snapshot anything here, so each test runs the handler in a fresh interpreter
and calls the hooks it registered the way the runtime does, through snapshot_restore_py's
registry (`get_before_snapshot()` in reverse order of registration, `get_after_restore()` in
order). The tools are this test's own, the key is in moto's Secrets Manager, and the
idempotency table in moto's DynamoDB.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import median_lambda
import pytest
from median_lambda.protocol import (
    DEV_KEY_ENV,
    IDEMPOTENCY_TABLE_ENV,
    INITIALIZATION_TYPE_ENV,
    KEY_SECRET_ENV,
    PREBUILT_MANIFEST_FILE,
    PREBUILT_STAGES_FILE,
    SNAPSTART_INITIALIZATION,
)
from median_lambda.testing import signed_event

from tests.integration.conftest import REPO_ROOT
from tests.support.cold_start import cold_start, lay_out_artifact

if TYPE_CHECKING:
    from mypy_boto3_secretsmanager import SecretsManagerClient

    from tests.integration.conftest import ToolsPackage

OLD_KEY = "mk_live_before_the_snapshot_01"
NEW_KEY = "mk_live_after_the_restore_0002"

# The test's own tools: a model without the input rules, so its validator is built lazily
# (median_lambda/authoring/api.py `_closed`) unless the snapshot hook builds it.
TOOLS = """
from pydantic import BaseModel
from median_lambda.authoring.api import tool

class LookupInput(BaseModel):
    reference: str

class CountInput(BaseModel):
    how_many: int

@tool(risk="low")
def lookup(args: LookupInput) -> dict:
    '''Look a reference up.'''
    return {"reference": args.reference}

@tool(risk="low")
def count(args: CountInput) -> dict:
    '''Count to a number.'''
    return {"counted": args.how_many}
"""

# What the runtime does with SnapStart on: initialise (import the handler), run the before-
# snapshot hooks, snapshot, and later restore and run the after-restore hooks. Between those
# steps the script looks at what the process holds, and reports it on its last line.
LIFECYCLE = """
import gc, json, os, socket, sys
os.environ.update(json.loads({env!r}))
for name in json.loads({unset!r}):
    os.environ.pop(name, None)

import boto3
import botocore.client
from median_lambda.testing import FakeLambdaContext, answer_of, call_body, signed_event

def alive_clients():
    gc.collect()
    return sum(isinstance(thing, botocore.client.BaseClient) for thing in gc.get_objects())

def open_sockets():
    gc.collect()
    return sum(isinstance(thing, socket.socket) and thing.fileno() != -1 for thing in gc.get_objects())

def send(method, key, body=b""):
    from median_lambda.app import lambda_handler
    return answer_of(lambda_handler(signed_event(method, body, key=key), FakeLambdaContext())).status

def call(key, call_id):
    return send("POST", key, call_body("lookup", {{"reference": "R-1"}}, callId=call_id))

report = {{}}
import median_lambda.app as app   # Lambda's init: the handler module is imported
import snapshot_restore_py
from median_lambda.authoring.registry import registry
report["hooks"] = [len(snapshot_restore_py.get_before_snapshot()), len(snapshot_restore_py.get_after_restore())]
{steps}
sys.stdout.write("\\n" + json.dumps(report) + "\\n")
"""

BEFORE_SNAPSHOT = """
def run_before_snapshot():
    for hook, args, kwargs in reversed(snapshot_restore_py.get_before_snapshot()):
        hook(*args, **kwargs)
"""

AFTER_RESTORE = """
def run_after_restore():
    for hook, args, kwargs in snapshot_restore_py.get_after_restore():
        hook(*args, **kwargs)
"""


def put_secret(secret_id: str, key: str) -> str:
    """A line of the script that rotates the secret with a client of its own, gone at once."""
    return (
        f"_c = boto3.client('secretsmanager'); _c.put_secret_value(SecretId={secret_id!r}, SecretString={key!r}); "
        "del _c"
    )


@pytest.fixture
def lifecycle(
    tools_package: ToolsPackage, secrets: SecretsManagerClient, idempotency_table: str
) -> tuple[ToolsPackage, str]:
    # GIVEN a function version with SnapStart on, this test's tools, its key in Secrets Manager
    # and an idempotency table
    tools_package.module("lookups", TOOLS)
    # laid out as `sam build` lays out the artifact: handler/ and median-lambda beside the tools, with the
    # manifest the build prebuilds, so that GET needs neither the tools nor their schemas (written first:
    # the copy then comes first on the process's import path). The whole library, where the build copies
    # its runtime only: the test's own script signs its requests with median_lambda.testing.
    printed = tools_package.run("-m", "median_lambda", "manifest")
    assert printed.returncode == 0, printed.stderr
    stages = tools_package.run("-m", "median_lambda", "stages")
    assert stages.returncode == 0, stages.stderr
    shutil.copytree(REPO_ROOT / "handler", tools_package.root / "handler", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(
        Path(median_lambda.__file__).parent,
        tools_package.root / "median_lambda",
        ignore=shutil.ignore_patterns("__pycache__", PREBUILT_MANIFEST_FILE, PREBUILT_STAGES_FILE),
    )
    (tools_package.root / "median_lambda" / PREBUILT_MANIFEST_FILE).write_text(printed.stdout, encoding="utf-8")
    (tools_package.root / "median_lambda" / PREBUILT_STAGES_FILE).write_text(stages.stdout, encoding="utf-8")
    secret_id = f"median/snapstart-{uuid.uuid4().hex[:8]}"
    secrets.create_secret(Name=secret_id, SecretString=OLD_KEY)
    return tools_package, secret_id


def run_lifecycle(package: ToolsPackage, secret_id: str, steps: str, **env: str) -> dict[str, Any]:
    settings = {
        KEY_SECRET_ENV: secret_id,
        INITIALIZATION_TYPE_ENV: SNAPSTART_INITIALIZATION,
        "AWS_LAMBDA_FUNCTION_NAME": "median-tools",
        **env,
    }
    script = LIFECYCLE.format(
        env=json.dumps(settings), unset=json.dumps([DEV_KEY_ENV]), steps=BEFORE_SNAPSHOT + AFTER_RESTORE + steps
    )
    finished = package.run("-c", script)
    assert finished.returncode == 0, finished.stderr
    report: dict[str, Any] = json.loads(finished.stdout.rstrip("\n").rsplit("\n", 1)[-1])
    return report


def test_initialising_for_a_snapshot_registers_one_hook_each(lifecycle: tuple[ToolsPackage, str]) -> None:
    # WHEN Lambda imports the handler to initialise it for a snapshot
    report = run_lifecycle(*lifecycle, "")
    # THEN one before-snapshot and one after-restore hook are registered
    assert report["hooks"] == [1, 1]


def test_before_the_snapshot_the_tools_and_their_validators_are_built(lifecycle: tuple[ToolsPackage, str]) -> None:
    # GIVEN the handler imported for a snapshot, its tools not loaded yet
    steps = """
report["loaded_before"] = len(registry.tools)
run_before_snapshot()
report["tools"] = sorted(t.name for t in registry.tools)
report["validators_built"] = [t.input_model.__pydantic_complete__ for t in registry.tools]
report["post_machinery"] = [m in sys.modules for m in (
    "median_lambda.calls.dispatch", "pydantic", "aws_lambda_powertools.utilities.idempotency", "boto3")]
"""
    # WHEN the before-snapshot hook runs
    report = run_lifecycle(*lifecycle, steps)
    # THEN the snapshot holds the tools, every validator, and POST's machinery down to idempotency
    assert report["loaded_before"] == 0
    assert report["tools"] == ["count", "lookup"]
    assert report["validators_built"] == [True, True]
    assert report["post_machinery"] == [True, True, True, True]


def test_the_snapshot_holds_no_key_client_connection_or_timestamp(lifecycle: tuple[ToolsPackage, str]) -> None:
    # GIVEN init code that read the key and made AWS clients before the snapshot (a GET, and a
    # POST recorded in the idempotency table)
    steps = """
report["primed"] = [send("GET", OLD_KEY), call(OLD_KEY, "call-1")]
report["clients_before"] = alive_clients()
run_before_snapshot()
report["key_source_empty"] = app.key_source.holds_nothing()
report["clients_after"] = alive_clients()
report["sockets_after"] = open_sockets()
""".replace("OLD_KEY", repr(OLD_KEY))
    # WHEN the before-snapshot hook runs
    report = run_lifecycle(*lifecycle, steps)
    # THEN no key, timestamp, boto3 client or open connection is left to be snapshotted
    assert report["primed"] == [200, 200]
    assert report["clients_before"] >= 2
    assert report["key_source_empty"] is True
    assert report["clients_after"] == 0
    assert report["sockets_after"] == 0


def test_after_a_restore_the_key_is_read_fresh(lifecycle: tuple[ToolsPackage, str]) -> None:
    # GIVEN a snapshot taken, and a process whose key source holds the old key and its timestamps
    # (read within the refresh floor, so a mismatch alone would not read it again)
    package, secret_id = lifecycle
    steps = f"""
run_before_snapshot()
report["before"] = send("GET", {OLD_KEY!r})
{put_secret(secret_id, NEW_KEY)}
report["without_restore"] = send("GET", {NEW_KEY!r})
run_after_restore()
report["new_key"] = send("GET", {NEW_KEY!r})
report["old_key"] = send("GET", {OLD_KEY!r})
report["first_post"] = call({NEW_KEY!r}, "call-2")
"""
    # WHEN the key is rotated while the snapshot waits, and the container is restored
    report = run_lifecycle(package, secret_id, steps)
    # THEN without the restore hook the new key would wait for the floor; with it, the first
    # request reads the secret anew, verifies with the new key, and POST works from the start
    assert (report["before"], report["without_restore"]) == (200, 401)
    assert (report["new_key"], report["old_key"]) == (200, 401)
    assert report["first_post"] == 200


def test_without_snapshot_restore_py_the_handler_still_serves(lifecycle: tuple[ToolsPackage, str]) -> None:
    # GIVEN SnapStart on, but a runtime without snapshot_restore_py (a module that will not import)
    package, secret_id = lifecycle
    (package.root / "snapshot_restore_py.py").write_text('raise ImportError("not in this runtime")\n')
    settings = {KEY_SECRET_ENV: secret_id, INITIALIZATION_TYPE_ENV: SNAPSTART_INITIALIZATION, DEV_KEY_ENV: ""}
    script = f"""
import json, os
os.environ.update({settings!r})
from median_lambda.app import lambda_handler
from median_lambda.testing import FakeLambdaContext, answer_of, signed_event
answer = answer_of(lambda_handler(signed_event("GET", key={OLD_KEY!r}), FakeLambdaContext()))
print(json.dumps({{"get": answer.status}}))
"""
    # WHEN the handler is imported and a GET arrives
    finished = package.run("-c", script)
    # THEN it is served, and the log says the hooks are missing
    assert finished.returncode == 0, finished.stderr
    assert json.loads(finished.stdout.rstrip("\n").rsplit("\n", 1)[-1])["get"] == 200
    assert "snapshot_restore_py is missing" in finished.stdout


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return lay_out_artifact(tmp_path_factory.mktemp("artifact"), prebuilt_manifest=True)


@pytest.mark.parametrize("initialization", [None, "on-demand", "provisioned-concurrency"])
def test_a_cold_get_without_snapstart_imports_neither_the_hooks_nor_pydantic(
    artifact: Path, secrets: SecretsManagerClient, initialization: str | None
) -> None:
    # GIVEN a new container without SnapStart, its key in Secrets Manager
    secret_id = f"median/cold-{uuid.uuid4().hex[:8]}"
    secrets.create_secret(Name=secret_id, SecretString=OLD_KEY)
    env = {name: value for name, value in os.environ.items() if not name.startswith("MEDIAN_")}
    env.update({KEY_SECRET_ENV: secret_id, IDEMPOTENCY_TABLE_ENV: "median-idempotency"})
    env.pop(INITIALIZATION_TYPE_ENV, None)
    if initialization is not None:
        env[INITIALIZATION_TYPE_ENV] = initialization
    # WHEN it answers its first request, a signed GET
    started = cold_start(signed_event("GET", key=OLD_KEY), artifact, env)
    # THEN it is served as cheaply as ever: no SnapStart library, no pydantic, no tools
    assert started.answer.status == 200
    packages = {module.split(".")[0] for module in started.modules}
    assert not packages & {"snapshot_restore_py", "pydantic", "tools"}
