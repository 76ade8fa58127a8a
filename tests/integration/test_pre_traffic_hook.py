"""The PreTraffic hook (median_lambda/pre_traffic.py): a new version takes no call until it has answered Median's
signed GET with this build's manifest and its diagnostics as declared; the hook always reports to CodeDeploy; and
only once the version has answered does it prune the function's old versions, keeping the one `live` points at.

Everything runs as deployed, over HTTP: the hook in a fresh process from an artifact laid out as `sam build` lays it
out (the manifest the build writes beside it), CodeDeploy's real lifecycle event (tests/events), the Median key
in moto's Secrets Manager, the function, its versions and its alias in moto's Lambda. Two AWS parts are stood in,
each speaking its documented protocol: Lambda's `Invoke`, which moto runs only in Docker, runs each version's
own artifact in a fresh process as a new container would (tests/support/lambda_invoke.py), the key through the
Parameters and Secrets extension's stand-in or, restored from a SnapStart snapshot, through boto3; and CodeDeploy's
`PutLifecycleEventHookExecutionStatus`, which moto does not serve (tests/support/codedeploy.py).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import uuid
import zipfile
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from median_lambda.build.sources import copy_library_runtime
from median_lambda.pre_traffic import KEPT_VERSIONS_ENV, NEW_VERSION_ENV
from median_lambda.protocol import (
    FUNCTION_VERSION_ENV,
    INITIALIZATION_TYPE_ENV,
    KEY_SECRET_ENV,
    LIVE_ALIAS,
    PREBUILT_MANIFEST_FILE,
    PREBUILT_STAGES_FILE,
    PREBUILT_TOOL_MODULES_FILE,
    SECRETS_EXTENSION_PORT_ENV,
    SECRETS_EXTENSION_TOKEN_ENV,
    SNAPSTART_INITIALIZATION,
)
from median_lambda.testing import TEST_KEY

from tests.conftest import EVENTS_DIR
from tests.integration.conftest import REPO_ROOT
from tests.support.codedeploy import CodeDeployStandIn
from tests.support.cold_start import cold_start
from tests.support.lambda_invoke import FunctionFailed, LambdaInvokeStandIn, LambdaRefusal
from tests.support.ports import free_port
from tests.support.secrets_extension import SecretsExtensionStandIn

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from tests.support.lambda_invoke import Runner

EVENT = json.loads((EVENTS_DIR / "codedeploy_lifecycle_hook.json").read_text(encoding="utf-8"))
SESSION_TOKEN = "pre-traffic-session-token"
# The endpoint as its author wrote it: a tool, and diagnostics that reach the carrier's API when a stage names it.
TOOLS = {
    "parcels.py": '''
from pydantic import BaseModel
from median_lambda import tool

class ParcelInput(BaseModel):
    parcel: str

@tool(risk="low")
def parcel_status(args: ParcelInput) -> dict:
    """Say where one of the customer's parcels is."""
    return {"parcel": args.parcel, "where": "depot"}
''',
    "health.py": '''
import os
import urllib.request
from median_lambda import ToolError, diagnostics

@diagnostics
def health() -> dict:
    """Check that the carrier's API answers."""
    url = os.environ.get("CARRIER_API_URL")
    if url:
        try:
            urllib.request.urlopen(url, timeout=2)
        except OSError as error:
            raise ToolError("The carrier's API did not answer; check CARRIER_API_URL for this stage.") from error
    return {"carrier": "ok"}
''',
}
# An older build of it: one more tool, which this build removed.
OLDER_TOOLS = {
    **TOOLS,
    "returns.py": '''
from pydantic import BaseModel
from median_lambda import tool

class ReturnInput(BaseModel):
    parcel: str

@tool(risk="medium")
def open_return(args: ReturnInput) -> dict:
    """Open a return for one of the customer's parcels."""
    return {"opened": args.parcel}
''',
}
# What the Lambda runtime does for a version with SnapStart on: import the handler, run the before-snapshot hooks,
# snapshot; then, in a new container, restore, run the after-restore hooks, and answer
# (tests/integration/test_snapstart.py).
RESTORED_CONTAINER = """
import json, sys, time
import snapshot_restore_py

class Context:
    function_name = "median-tools"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:median-tools"
    aws_request_id = "restored-request"
    _deadline = time.monotonic() + 29
    def get_remaining_time_in_millis(self):
        return int((self._deadline - time.monotonic()) * 1000)

event = json.loads(sys.stdin.read())
from median_lambda.app import lambda_handler
for hook, args, kwargs in reversed(snapshot_restore_py.get_before_snapshot()):
    hook(*args, **kwargs)
for hook, args, kwargs in snapshot_restore_py.get_after_restore():
    hook(*args, **kwargs)
sys.stdout.write("\\n" + json.dumps(lambda_handler(event, Context())) + "\\n")
"""
# The hook as Lambda runs it, in its own container: its module imported from the artifact, CodeDeploy's event.
HOOK_CONTAINER = """
import json, sys, time

class Context:
    function_name = "median-tools-PreTrafficHook"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:median-tools-PreTrafficHook"
    aws_request_id = "hook-request"
    _deadline = time.monotonic() + 300
    def get_remaining_time_in_millis(self):
        return int((self._deadline - time.monotonic()) * 1000)

from median_lambda.pre_traffic import lambda_handler
lambda_handler(json.loads(sys.stdin.read()), Context())
"""


def lay_out(root: Path, tools: dict[str, str]) -> Path:
    """An artifact as `median build-artifact` lays it out: handler/, the tools, median_lambda's runtime, and the
    manifest, stages and tool modules the build writes beside it (written first, from the tools, by `median`)."""
    (root / "tools").mkdir(parents=True)
    (root / "tools" / "__init__.py").write_text("", encoding="utf-8")
    for name, source in tools.items():
        (root / "tools" / name).write_text(source, encoding="utf-8")
    built = {}
    environment = {name: value for name, value in os.environ.items() if not name.startswith(("MEDIAN_", "PYTHON"))}
    for command, written in (
        ("manifest", PREBUILT_MANIFEST_FILE),
        ("stages", PREBUILT_STAGES_FILE),
        ("tool-modules", PREBUILT_TOOL_MODULES_FILE),
    ):
        built[written] = subprocess.run(  # noqa: S603 - this interpreter, the library's own command
            [sys.executable, "-m", "median_lambda", command], cwd=root, env=environment, check=True, capture_output=True
        ).stdout
    shutil.copytree(REPO_ROOT / "handler", root / "handler", ignore=shutil.ignore_patterns("__pycache__"))
    copy_library_runtime(root)
    for written, content in built.items():
        (root / "median_lambda" / written).write_bytes(content)
    return root


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This build: the new version's artifact, which the hook runs from too."""
    return lay_out(tmp_path_factory.mktemp("build"), TOOLS)


@pytest.fixture(scope="module")
def older_artifact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return lay_out(tmp_path_factory.mktemp("older-build"), OLDER_TOOLS)


def deployed_environment(**variables: str) -> dict[str, str]:
    """A container's environment: boto3 pointed at moto (the test's), none of the suite's MEDIAN_ settings."""
    inherited = {name: value for name, value in os.environ.items() if not name.startswith(("MEDIAN_", "PYTHON"))}
    return {**inherited, "AWS_LAMBDA_FUNCTION_NAME": "median-tools-MedianToolsFunction-ABC123", **variables}


def container(artifact: Path, environment: dict[str, str], script: str | None = None) -> Runner:
    """A version's runner: each invocation a new container of `artifact`, as the stand-in's Invoke needs."""

    def run(event: dict[str, Any]) -> dict[str, Any]:
        if script is None:
            try:
                response: dict[str, Any] = cold_start(event, artifact, environment).response
            except RuntimeError as failed:
                raise FunctionFailed("Runtime.ExitError", str(failed)[-300:]) from None
            return response
        finished = subprocess.run(  # noqa: S603 - this interpreter, the test's own script
            [sys.executable, "-c", script],
            input=json.dumps(event),
            env={**environment, "PYTHONPATH": str(artifact)},
            cwd=artifact,
            capture_output=True,
            text=True,
            check=False,
        )
        if finished.returncode != 0:
            raise FunctionFailed("Runtime.ExitError", finished.stderr[-300:])
        restored: dict[str, Any] = json.loads(finished.stdout.rstrip("\n").rsplit("\n", 1)[-1])
        return restored

    return run


class Function:
    """The tools function in moto's Lambda: its published versions, and `live` on the one serving now."""

    def __init__(self, published: int, live: int) -> None:
        self.client = boto3.client("lambda")
        self.name = f"median-tools-MedianToolsFunction-{uuid.uuid4().hex[:10]}"
        iam = boto3.client("iam")
        role = iam.create_role(
            RoleName=f"median-tools-MedianToolsFunctionRole-{uuid.uuid4().hex[:10]}",
            AssumeRolePolicyDocument=json.dumps(
                {
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"Service": "lambda.amazonaws.com"},
                            "Action": "sts:AssumeRole",
                        }
                    ]
                }
            ),
        )["Role"]["Arn"]
        code = io.BytesIO()
        with zipfile.ZipFile(code, "w") as archive:
            archive.writestr("handler/app.py", "from median_lambda.app import lambda_handler\n")
        self.client.create_function(
            FunctionName=self.name,
            Runtime="python3.13",
            Role=role,
            Handler="handler.app.lambda_handler",
            Code={"ZipFile": code.getvalue()},
        )
        self.arns = {}
        for number in range(1, published + 1):
            # Lambda publishes a version only of a changed function: each deploy changes it (its description, here)
            self.client.update_function_configuration(FunctionName=self.name, Description=f"deploy {number}")
            version = self.client.publish_version(FunctionName=self.name)
            self.arns[version["Version"]] = version["FunctionArn"]
        assert sorted(self.arns, key=int) == [str(number) for number in range(1, published + 1)]
        self.client.create_alias(FunctionName=self.name, Name=LIVE_ALIAS, FunctionVersion=str(live))

    def versions(self) -> list[str]:
        listed = self.client.list_versions_by_function(FunctionName=self.name)["Versions"]
        return sorted((each["Version"] for each in listed if each["Version"].isdigit()), key=int)


class Deployment:
    """One deployment of the function: the hook's world, and what it did."""

    def __init__(self, function: Function, new: str, lambda_api: LambdaInvokeStandIn, codedeploy: CodeDeployStandIn):
        self.function, self.new, self.lambda_api, self.codedeploy = function, new, lambda_api, codedeploy
        self.log: list[dict[str, Any]] = []

    def run_hook(self, artifact: Path, key_secret: str, **variables: str) -> list[tuple[str, str, str]]:
        """The hook, run once as CodeDeploy runs it before shifting traffic; what it reported."""
        environment = deployed_environment(
            **{
                KEY_SECRET_ENV: key_secret,
                NEW_VERSION_ENV: self.function.arns[self.new],
                "AWS_ENDPOINT_URL_LAMBDA": self.lambda_api.endpoint,
                "AWS_ENDPOINT_URL_CODEDEPLOY": self.codedeploy.endpoint,
                "AWS_LAMBDA_FUNCTION_NAME": "median-tools-PreTrafficHook-XYZ789",
                **variables,
            }
        )
        finished = subprocess.run(  # noqa: S603 - this interpreter, the hook's module
            [sys.executable, "-c", HOOK_CONTAINER],
            input=json.dumps(EVENT),
            env={**environment, "PYTHONPATH": str(artifact)},
            cwd=artifact,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        self.log = [json.loads(line) for line in finished.stdout.splitlines() if line.startswith('{"level"')]
        return self.codedeploy.reports

    def said(self, level: str) -> list[str]:
        return [line["message"] for line in self.log if line["level"] == level]


@pytest.fixture
def key_secret(moto_endpoint: str) -> str:
    """The stage's Median key, in moto's Secrets Manager: what Median signs with, and the hook and the function read."""
    name = f"median-tools/median-key-{uuid.uuid4().hex[:8]}"
    boto3.client("secretsmanager").create_secret(Name=name, SecretString=TEST_KEY)
    return name


@pytest.fixture
def extension(moto_endpoint: str) -> Iterator[SecretsExtensionStandIn]:
    with SecretsExtensionStandIn(moto_endpoint, SESSION_TOKEN, ttl_seconds=0) as stand_in:
        yield stand_in


@pytest.fixture
def deploy(moto_endpoint: str) -> Iterator[Callable[..., Deployment]]:
    """A deployment of version `new` over versions 1..published, `live` on `live`, each version run by its runner."""
    opened: list[Any] = []

    def make(*, published: int, live: int, runners: dict[str, Runner]) -> Deployment:
        function = Function(published, live)
        lambda_api = LambdaInvokeStandIn(moto_endpoint, runners)
        codedeploy = CodeDeployStandIn(EVENT["DeploymentId"])
        opened.extend([lambda_api, codedeploy])
        return Deployment(function, str(published), lambda_api, codedeploy)

    yield make
    for stand_in in opened:
        stand_in.close()


def version_through_the_extension(
    artifact: Path, key_secret: str, extension: SecretsExtensionStandIn, **variables: str
) -> Runner:
    """The new version as the template deploys it by default: the key read through the extension's layer."""
    return container(
        artifact,
        deployed_environment(
            **{
                KEY_SECRET_ENV: key_secret,
                SECRETS_EXTENSION_PORT_ENV: str(extension.port),
                SECRETS_EXTENSION_TOKEN_ENV: SESSION_TOKEN,
                FUNCTION_VERSION_ENV: "5",
                **variables,
            }
        ),
    )


def test_a_version_that_answers_as_built_takes_traffic_and_the_old_versions_are_pruned(
    artifact: Path, key_secret: str, extension: SecretsExtensionStandIn, deploy: Callable[..., Deployment]
) -> None:
    # GIVEN versions 1 to 5 of the function, `live` on 4, and 5 this deployment's: this build, its key through
    # the extension, as the template deploys it
    deployment = deploy(
        published=5, live=4, runners={"5": version_through_the_extension(artifact, key_secret, extension)}
    )
    # WHEN CodeDeploy runs the hook with its lifecycle event
    reports = deployment.run_hook(artifact, key_secret)
    # THEN the hook reports Succeeded for that event, and the shift may start
    assert reports == [(EVENT["DeploymentId"], EVENT["LifecycleEventHookExecutionId"], "Succeeded")]
    # AND it heard version 5 answer twice (the GET and the diagnostics call), the key read through the extension
    assert deployment.lambda_api.invocations == ["5", "5"]
    assert extension.reads >= 2
    assert deployment.said("INFO")[0] == (
        "The new version answered as this build should: GET 200, its 1 tools as built; diagnostics 200 ok"
    )
    # AND it deleted the versions no rollback needs: the newest three (4, which `live` serves, among them) are kept
    assert deployment.function.versions() == ["3", "4", "5"]
    assert "Deleted 2 old version(s); kept 3, 4, 5" in deployment.said("INFO")


def test_a_version_restored_from_a_snapstart_snapshot_is_heard_too(
    artifact: Path, key_secret: str, deploy: Callable[..., Deployment]
) -> None:
    # GIVEN a stage with SnapStart on: the new version restored from its snapshot, the key read through boto3 (the
    # extension is left out), and `live` on a version far back (3 and 4 were deployments that failed their hook)
    snapstart = container(
        artifact,
        deployed_environment(
            **{KEY_SECRET_ENV: key_secret, INITIALIZATION_TYPE_ENV: SNAPSTART_INITIALIZATION, FUNCTION_VERSION_ENV: "5"}
        ),
        RESTORED_CONTAINER,
    )
    deployment = deploy(published=5, live=2, runners={"5": snapstart})
    # WHEN the hook runs
    reports = deployment.run_hook(artifact, key_secret)
    # THEN the restored version answered as built, and the shift may start
    assert [status for *_, status in reports] == ["Succeeded"]
    # AND `live`'s version, which a rollback returns to, is kept with the newest three
    assert deployment.function.versions() == ["2", "3", "4", "5"]


def test_a_version_about_to_be_ready_is_waited_for(
    artifact: Path, key_secret: str, extension: SecretsExtensionStandIn, deploy: Callable[..., Deployment]
) -> None:
    # GIVEN a version still Pending at the first invocation (its snapshot being made), then ready
    ready = version_through_the_extension(artifact, key_secret, extension)
    calls: list[int] = []

    def pending_once(event: dict[str, Any]) -> dict[str, Any]:
        calls.append(1)
        if len(calls) == 1:
            raise LambdaRefusal(
                409, "ResourceConflictException", "The function is currently in the following state: Pending"
            )
        return ready(event)

    deployment = deploy(published=2, live=1, runners={"2": pending_once})
    # WHEN the hook runs
    reports = deployment.run_hook(artifact, key_secret)
    # THEN it waited for the version, heard it, and reported Succeeded
    assert [status for *_, status in reports] == ["Succeeded"]
    assert deployment.lambda_api.invocations == ["2", "2", "2"]


@pytest.mark.parametrize(
    "fault",
    [
        "its key's secret does not exist",
        "it serves an older build's manifest",
        "its diagnostics cannot reach the carrier",
        "it fails before it answers",
        "Lambda has no such version",
    ],
)
def test_a_version_that_does_not_answer_as_built_takes_no_traffic(
    artifact: Path,
    older_artifact: Path,
    key_secret: str,
    extension: SecretsExtensionStandIn,
    deploy: Callable[..., Deployment],
    fault: str,
) -> None:
    # GIVEN a new version that cannot answer Median as this build should
    runners: dict[str, Runner | None] = {
        "its key's secret does not exist": version_through_the_extension(
            artifact, key_secret, extension, **{KEY_SECRET_ENV: "median-tools/no-such-key"}
        ),
        "it serves an older build's manifest": version_through_the_extension(older_artifact, key_secret, extension),
        "its diagnostics cannot reach the carrier": version_through_the_extension(
            artifact, key_secret, extension, CARRIER_API_URL=f"http://127.0.0.1:{free_port()}/"
        ),
        "it fails before it answers": _crashing_container(artifact),
        "Lambda has no such version": None,
    }
    runner = runners[fault]
    deployment = deploy(published=4, live=3, runners={"4": runner} if runner is not None else {})
    # WHEN CodeDeploy runs the hook
    reports = deployment.run_hook(artifact, key_secret)
    # THEN the hook reports Failed, and CodeDeploy shifts no call to the version
    assert reports == [(EVENT["DeploymentId"], EVENT["LifecycleEventHookExecutionId"], "Failed")]
    # AND its log says what the version answered, in words an operator acts on
    (said,) = deployment.said("ERROR")
    assert said.startswith("The new version takes no traffic: ")
    assert EXPECTED_WORDS[fault] in said, said
    # AND no version was pruned: a deployment that failed deletes nothing
    assert deployment.function.versions() == ["1", "2", "3", "4"]


EXPECTED_WORDS = {
    "its key's secret does not exist": "GET answered 500 no_key: The server has no usable Median key to verify with.",
    "it serves an older build's manifest": (
        "GET answered another manifest than this build's: built ['parcelStatus'], served ['openReturn', 'parcelStatus']"
    ),
    "its diagnostics cannot reach the carrier": (
        "diagnostics answered 200 tool_error: The carrier's API did not answer; check CARRIER_API_URL for this stage."
    ),
    "it fails before it answers": "it failed to answer (Unhandled: Runtime.ExitError); its log says why",
    "Lambda has no such version": "Lambda refused to invoke it: ResourceNotFoundException",
}


def _crashing_container(artifact: Path) -> Runner:
    """A version whose container dies at its start: its handler cannot be imported."""
    return container(artifact, deployed_environment(), "raise SystemExit('Runtime.ImportModuleError')")


def test_the_hook_reports_failed_when_it_cannot_read_the_key_itself(
    artifact: Path, key_secret: str, extension: SecretsExtensionStandIn, deploy: Callable[..., Deployment]
) -> None:
    # GIVEN a healthy new version, and a hook whose key's secret cannot be read
    deployment = deploy(
        published=2, live=1, runners={"2": version_through_the_extension(artifact, key_secret, extension)}
    )
    # WHEN CodeDeploy runs the hook
    reports = deployment.run_hook(artifact, "median-tools/no-such-key")
    # THEN it still reports, Failed, rather than leaving CodeDeploy to wait an hour; and it invoked nothing
    assert [status for *_, status in reports] == ["Failed"]
    assert deployment.lambda_api.invocations == []
    (said,) = deployment.said("ERROR")
    assert said.startswith("The new version takes no traffic: the hook could not read the Median key: ")


def test_the_number_of_versions_kept_is_the_hooks_setting_and_never_below_two(
    artifact: Path, key_secret: str, extension: SecretsExtensionStandIn, deploy: Callable[..., Deployment]
) -> None:
    # GIVEN six versions, `live` on 5, and a hook told to keep one
    deployment = deploy(
        published=6, live=5, runners={"6": version_through_the_extension(artifact, key_secret, extension)}
    )
    # WHEN the hook runs
    deployment.run_hook(artifact, key_secret, **{KEPT_VERSIONS_ENV: "1"})
    # THEN it keeps two: the new version and the one a rollback returns to
    assert deployment.function.versions() == ["5", "6"]
