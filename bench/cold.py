"""Running cold: a new process per run, as a new Lambda container runs, timed from Python's start.

Every process runs in the artifact's directory (as Lambda runs in /var/task) with the artifact
first on its path: the endpoint's imports `handler.app`, template.yaml's Handler, as Lambda's
runtime does; the floors' and the peer's run a script of their own in the same Python,
directory and environment. Each run is checked to have answered 200 with the manifest (or
`ok: true`), so a fast failure never times.
"""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from bench.environment import get_event, post_event
from bench.floors import FLOOR_COLD, FLOOR_EXTENSION_COLD, FLOOR_TABLE_COLD
from bench.ratios import Samples

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from bench.environment import Stage

# What Lambda's runtime does in a new container: import the handler template.yaml names, answer one
# event with a Lambda context. MEDIAN_COLD_PREIMPORT names modules to import first (an idea's row).
ENDPOINT_COLD = """
import json, os, sys, time

class Context:
    function_name = os.environ["AWS_LAMBDA_FUNCTION_NAME"]
    memory_limit_in_mb = int(os.environ["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"])
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:" + function_name + ":live"
    aws_request_id = "cold-start-request"
    _deadline = time.monotonic() + 29
    def get_remaining_time_in_millis(self):
        return int((self._deadline - time.monotonic()) * 1000)

event = json.loads(sys.stdin.read())
for name in filter(None, os.environ.get("MEDIAN_COLD_PREIMPORT", "").split(",")):
    __import__(name)
from handler.app import lambda_handler
response = lambda_handler(event, Context())
# On a line of its own and last: the handler's log lines and metrics share stdout, as on Lambda.
sys.stdout.write("\\n" + json.dumps({"response": response, "modules": sorted(sys.modules)}) + "\\n")
"""

# The peer's cold process: what the Lambda runtime does with bench/peer.py's handler.
PEER_COLD = ENDPOINT_COLD.replace("from handler.app import lambda_handler", "from bench.peer import lambda_handler")


@dataclass(frozen=True)
class Started:
    response: dict[str, Any]
    modules: frozenset[str]
    seconds: float


@dataclass
class ColdRunner(Samples):
    """One kind of new process, run again and again: its times, and what it imported the last time."""

    start: Callable[[dict[str, Any]], Started] | None = None
    make_event: Callable[[], dict[str, Any]] = get_event
    expected_body: Any = None  # the manifest, parsed; None: any 200 with "ok": true (POST)
    modules: frozenset[str] = frozenset()
    expected_status: int = 200  # another: any answer of that status

    def run(self) -> float:
        assert self.start is not None
        started = self.start(self.make_event())
        response = started.response
        body = json.loads(response["body"])
        served = body == self.expected_body if self.expected_body is not None else body.get("ok") is True
        if self.expected_status != 200:
            served = True
        if response["statusCode"] != self.expected_status or not served:
            raise SystemExit(f"{self.name}: answered {response['statusCode']}: {response['body'][:300]}")
        self.modules = started.modules
        return started.seconds * 1000


def script_start(
    python: str, where: Path, env: dict[str, str], script: str, *args: str, path: str | None = None
) -> Callable[[dict[str, Any]], Started]:
    """A process running `script` in `where`, with `path` (default: `where` alone) as its PYTHONPATH."""

    def start(event: dict[str, Any]) -> Started:
        started = time.perf_counter()
        finished = subprocess.run(  # noqa: S603 - the runtime venv's Python running the bench's scripts
            [python, "-c", script, *args],
            input=json.dumps(event).encode("utf-8"),
            env={**env, "PYTHONPATH": path or str(where)},
            cwd=where,
            capture_output=True,
            check=False,
        )
        seconds = time.perf_counter() - started
        if finished.returncode != 0:
            raise SystemExit(f"a cold process failed:\n{finished.stderr.decode('utf-8', errors='replace')[-2000:]}")
        report = json.loads(finished.stdout.decode("utf-8").rstrip("\n").rsplit("\n", 1)[-1])
        return Started(report["response"], frozenset(report["modules"]), seconds)

    return start


def endpoint_process(
    stage: Stage,
    name: str,
    event: Callable[[], dict[str, Any]],
    environment: dict[str, str],
    where: Path | None = None,
    preimport: tuple[str, ...] = (),
) -> ColdRunner:
    """The handler imported from `where` (the stage's artifact unless named), answering one `event`."""
    artifact = where or stage.artifact
    env = {**environment, "MEDIAN_COLD_PREIMPORT": ",".join(preimport)}
    start = script_start(stage.runtime_python, artifact, env, ENDPOINT_COLD)
    return ColdRunner(name, [], start, event, stage.served_manifest if event is get_event else None)


def floor_process(stage: Stage, name: str, script: str, environment: dict[str, str]) -> ColdRunner:
    """A floor's script answering one GET with the stage's prebuilt manifest."""
    start = script_start(stage.runtime_python, stage.artifact, environment, script, str(stage.manifest_path))
    return ColdRunner(name, [], start, get_event, stage.served_manifest)


def table_floor_process(stage: Stage, name: str = "the table-on floor", script: str = FLOOR_TABLE_COLD) -> ColdRunner:
    """The table-on floor answering one call: the key through the extension, two writes to the table."""
    start = script_start(stage.runtime_python, stage.artifact, stage.deployed, script)
    return ColdRunner(name, [], start, post_event)


def peer_process(
    stage: Stage, name: str, event: Callable[[], dict[str, Any]], *, with_table: bool = False
) -> ColdRunner:
    """bench/peer.py's handler answering one `event`; it reads the key through boto3, having no other way.
    `with_table`: its environment names the idempotency table, as the production stage's does."""
    environment = {**(stage.deployed_boto3 if with_table else stage.serve_boto3), **stage.peer_environment()}
    start = script_start(
        stage.runtime_python, stage.artifact, environment, PEER_COLD, path=stage.python_path(stage.artifact)
    )
    return ColdRunner(name, [], start, event, stage.served_manifest if event is get_event else None)


@dataclass(frozen=True)
class ColdProcesses:
    """The processes behind the cases and the rows for information, in the order of every round."""

    floor_boto3: ColdRunner
    floor_extension: ColdRunner
    floor_table: ColdRunner
    get_extension: ColdRunner
    get_boto3: ColdRunner
    post_deployed: ColdRunner
    post_read: ColdRunner
    post_extension: ColdRunner
    post_boto3: ColdRunner
    peer_get: ColdRunner
    peer_post: ColdRunner
    peer_post_table: ColdRunner

    def runners(self) -> list[ColdRunner]:
        return [getattr(self, each.name) for each in fields(self)]


def cold_processes(stage: Stage) -> ColdProcesses:
    return ColdProcesses(
        floor_boto3=floor_process(stage, "the boto3 floor", FLOOR_COLD, stage.serve_boto3),
        floor_extension=floor_process(stage, "the extension floor", FLOOR_EXTENSION_COLD, stage.serve),
        floor_table=table_floor_process(stage),
        get_extension=endpoint_process(stage, "cold GET, key through the extension", get_event, stage.deployed),
        get_boto3=endpoint_process(stage, "cold GET, key through boto3", get_event, stage.deployed_boto3),
        # As deployed, through the record: the table named (moto's DynamoDB, over HTTP), the key through the extension.
        post_deployed=endpoint_process(
            stage, "cold POST as deployed", post_event, stage.deployed, stage.recorded_artifact
        ),
        post_read=endpoint_process(
            stage, "cold POST as deployed, the tool declared idempotent=False", post_event, stage.deployed
        ),
        post_extension=endpoint_process(
            stage, "cold POST without the table, key through the extension", post_event, stage.serve
        ),
        post_boto3=endpoint_process(
            stage, "cold POST without the table, key through boto3", post_event, stage.serve_boto3
        ),
        peer_get=peer_process(stage, "the peer's cold GET", get_event),
        peer_post=peer_process(stage, "the peer's cold POST without the table", post_event),
        peer_post_table=peer_process(stage, "the peer's cold POST", post_event, with_table=True),
    )


def run_cold(runners: list[ColdRunner], runs: int) -> None:
    """A warm-up each (fills the page cache, and writes the peer's own bytecode), then `runs` rounds in rotated
    order."""
    for runner in runners:
        runner.run()
    for round_number in range(runs):
        shift = round_number % len(runners)
        for runner in runners[shift:] + runners[:shift]:
            runner.samples.append(runner.run())
