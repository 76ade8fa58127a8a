"""`make bench`: what the endpoint costs, as ratios against the least any correct endpoint must do.

Every case runs against a floor written in this file, in the same run and interleaved with
it, so that a busy machine slows both alike and the ratio holds where the milliseconds do not:

  cold GET   a fresh process imports the handler (from an artifact laid out as `sam build`
             lays it, with the prebuilt manifest; its environment as deployed, idempotency
             table named) and answers one signed GET, the key read from Secrets Manager;
             against a process that starts Python, imports boto3, reads the key once,
             checks the HMAC and answers a prebuilt manifest. Medians of runs.
  warm GET   lambda_handler in a loop; against the HMAC check and the answer. µs per call.
  warm POST  orderStatus through lambda_handler, each call with its own callId, no
             idempotency table (as `make serve` runs); against the HMAC check, json.loads,
             the order lookup and json.dumps of the output. µs per call.
  cold POST  the first call in a fresh process, configured as warm POST; against the
             cold-GET floor.

Idempotency on (two DynamoDB writes per call, to moto's server) has rows of its own, with no
target: the floor writes nothing. Then the ideas bench/README.md weighs, measured the same
way (among them the artifact as `make build` ships it, without .pyc files), the size of the
`sam build` artifact (when `make build` has put the SAM CLI in .venv/sam-cli) and
`python -X importtime` top 10 for handler.app. Secrets Manager and DynamoDB are moto's server
on a free loopback port, reached over HTTP by boto3 in every process, as the tests reach
them. It prints a table and writes bench/results.json; `--markdown` prints that file as the
README's table.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import hmac
import json
import logging
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from contextlib import ExitStack, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results.json"
SAM_CLI = ROOT / ".venv" / "sam-cli" / "bin" / "sam"  # the Makefile's SAM_VENV
sys.path.insert(0, str(ROOT))

from handler.protocol import PREBUILT_MANIFEST_FILE, SIGNATURE_TOLERANCE_SECONDS  # noqa: E402 - needs ROOT on sys.path
from handler.testing import (  # noqa: E402
    ColdStart,
    FakeLambdaContext,
    call_body,
    cold_start,
    free_port,
    lay_out_artifact,
    signed_event,
)

if TYPE_CHECKING:
    from collections.abc import Callable

SECRET_NAME = "median-bench-key"  # noqa: S105 - a name
IDEMPOTENCY_TABLE = "median-bench-idempotency"
BENCH_KEY = "mk_bench_0123456789abcdef"  # made up for this run, served on loopback only
TARGETS = {"cold GET": 1.15, "warm GET": 2.0, "warm POST": 5.0, "cold POST": 1.5}
SAM_BUILD_TIMEOUT_SECONDS = 240
WARM_GET_CALLS = 2000
WARM_POST_CALLS = 500
WARM_IDEMPOTENT_CALLS = 40  # each makes two DynamoDB writes to moto's server
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

# The floor's cold process: nothing an endpoint could leave out. It reads the manifest file
# because a prebuilt manifest has to come from somewhere; it checks the timestamp's age
# because a signature without it can be replayed forever.
FLOOR_COLD = """
import hashlib, hmac, json, os, sys, time
import boto3

event = json.loads(sys.stdin.read())
with open(sys.argv[1], encoding="utf-8") as file:
    manifest = file.read().strip()
secret = boto3.client("secretsmanager").get_secret_value(SecretId=os.environ["MEDIAN_KEY_SECRET_ID"])
key = secret["SecretString"].encode("utf-8")
t, v1 = (item.split("=", 1)[1] for item in event["headers"]["median-signature"].split(","))
fresh = event["requestContext"]["http"]["method"] == "GET" and abs(time.time() - int(t)) <= 300
ok = fresh and hmac.compare_digest(hmac.new(key, t.encode("ascii") + b".", hashlib.sha256).hexdigest(), v1)
answer = {"statusCode": 200 if ok else 401, "headers": {"Content-Type": "application/json"},
          "body": manifest if ok else '{"error":{"code":"unauthorized"}}', "isBase64Encoded": False}
sys.stdout.write(json.dumps({"response": answer, "modules": sorted(sys.modules)}))
"""

# The same floor with the key from the Parameters and Secrets Lambda extension's local HTTP
# cache instead of boto3: what that extension would leave the function itself to do.
FLOOR_EXTENSION_COLD = FLOOR_COLD.replace("import boto3\n", "import urllib.parse, urllib.request\n").replace(
    """secret = boto3.client("secretsmanager").get_secret_value(SecretId=os.environ["MEDIAN_KEY_SECRET_ID"])""",
    """port = os.environ["PARAMETERS_SECRETS_EXTENSION_HTTP_PORT"]
query = urllib.parse.quote(os.environ["MEDIAN_KEY_SECRET_ID"])
request = urllib.request.Request(f"http://127.0.0.1:{port}/secretsmanager/get?secretId={query}",
                                 headers={"X-Aws-Parameters-Secrets-Token": os.environ["AWS_SESSION_TOKEN"]})
secret = json.loads(urllib.request.urlopen(request, timeout=2).read())""",
)


# The cold-GET floor plus what the standard asks a POST to use: pydantic (one model, validated
# once: its first validation loads pydantic's schema machinery) and Powertools (whose package
# import brings Logger, Metrics and Tracer). What a cold POST costs beyond this is the handler's.
FLOOR_WITH_LIBRARIES_COLD = FLOOR_COLD.replace(
    "import boto3\n",
    """import boto3
import aws_lambda_powertools
from pydantic import BaseModel
class Probe(BaseModel):
    orderNumber: str
Probe.model_validate_json('{"orderNumber": "ORD-1042"}', strict=True)
""",
)


# Run by the runtime venv's Python: the top-level files and packages of the `runtime` dependency
# group and everything it requires, as `pip install --group runtime --target` puts them into the
# artifact. boto3 is not among them (group aws-sdk: the Lambda runtime provides it, precompiled).
SHIPPED_PACKAGES_SCRIPT = """
import importlib.metadata as metadata, json, re, sys, tomllib
with open(sys.argv[1], "rb") as file:
    wanted = [r for r in tomllib.load(file)["dependency-groups"]["runtime"] if isinstance(r, str)]
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


@dataclass
class Case:
    name: str
    unit: str  # "ms" or "µs"
    floor: float  # medians
    endpoint: float
    ratio: float  # the median of each interleaved round's own ratio
    target: float | None
    note: str = ""
    floor_samples: list[float] = field(default_factory=list)
    endpoint_samples: list[float] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        met = None if self.target is None else self.ratio <= self.target
        return {
            "name": self.name,
            "unit": self.unit,
            "floor": round(self.floor, 4),
            "endpoint": round(self.endpoint, 4),
            "ratio": round(self.ratio, 3),
            "target": self.target,
            "met": met,
            "note": self.note,
            "floor_samples": [round(sample, 4) for sample in self.floor_samples],
            "endpoint_samples": [round(sample, 4) for sample in self.endpoint_samples],
        }


def paired_case(name: str, unit: str, floors: list[float], endpoints: list[float], note: str = "") -> Case:
    ratios = [endpoint / floor for endpoint, floor in zip(endpoints, floors, strict=True)]
    return Case(
        name,
        unit,
        statistics.median(floors),
        statistics.median(endpoints),
        statistics.median(ratios),
        TARGETS.get(name),
        note,
        floors,
        endpoints,
    )


# --- the stage: Secrets Manager, the environment, the artifact ----------------------------


def start_moto(stack: ExitStack) -> str:
    """moto's server on loopback, holding the bench key and an idempotency table; returns its endpoint URL."""
    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # a line per request otherwise
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    stack.callback(server.stop)
    endpoint = f"http://127.0.0.1:{port}"
    session = boto3.Session(
        aws_access_key_id="bench",
        aws_secret_access_key="bench",  # noqa: S106 - moto's, on loopback
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


def start_extension_stub(stack: ExitStack) -> int:
    """A stand-in for the Parameters and Secrets extension's local cache, holding the bench key; its port.

    The extension itself cannot run off Lambda. This answers its documented request, so the
    floor can be timed without boto3; what the extension's own start costs is not in it.
    """
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Cache(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            known = self.headers.get("X-Aws-Parameters-Secrets-Token") == "bench"
            body = json.dumps({"Name": SECRET_NAME, "SecretString": BENCH_KEY}).encode() if known else b"{}"
            self.send_response(200 if known else 403)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Cache)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    stack.callback(server.server_close)
    stack.callback(server.shutdown)
    return int(server.server_address[1])


def lambda_environment(endpoint: str, *, idempotency: bool) -> dict[str, str]:
    """A deployed function's environment: a named secret, fake credentials, no dev key; with
    `idempotency`, the table named, as template.yaml always names it."""
    env = {
        name: value
        for name, value in os.environ.items()
        # PYTHON*: a PYTHONDONTWRITEBYTECODE of the caller's would keep the artifact's handler/ and
        # tools/ from ever having .pyc files, which the rows "as built: no .pyc" measure on purpose.
        if not name.startswith(("AWS_", "MEDIAN_", "POWERTOOLS_", "PYTHON", "IDEMPOTENCY_"))
    }
    env.update(
        {
            "AWS_ACCESS_KEY_ID": "bench",
            "AWS_SECRET_ACCESS_KEY": "bench",
            "AWS_SESSION_TOKEN": "bench",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_LAMBDA_FUNCTION_NAME": "median-tools",
            "MEDIAN_KEY_SECRET_ID": SECRET_NAME,
        }
    )
    if idempotency:
        env["IDEMPOTENCY_TABLE"] = IDEMPOTENCY_TABLE
    return env


def get_event() -> dict[str, Any]:
    return signed_event("GET", key=BENCH_KEY, headers=GATEWAY_HEADERS)


def post_event() -> dict[str, Any]:
    """An orderStatus call with a callId of its own, as Median sends each call."""
    body = call_body("orderStatus", {"orderNumber": "ORD-1042"}, callId=f"call_{uuid.uuid4().hex}")
    return signed_event("POST", body, key=BENCH_KEY, headers=GATEWAY_HEADERS)


# --- cold: a new process per run ----------------------------------------------------------


@dataclass
class ColdRunner:
    """One kind of new process, run again and again: its times, and what it imported the last time."""

    name: str
    start: Callable[[dict[str, Any]], ColdStart]
    make_event: Callable[[], dict[str, Any]]
    expected_body: str | None  # None: any 200 with "ok": true (POST)
    samples: list[float] = field(default_factory=list)
    modules: frozenset[str] = frozenset()

    def run(self) -> float:
        started = self.start(self.make_event())
        response = started.response
        served = response["body"] == self.expected_body if self.expected_body else started.answer.body.get("ok")
        if response["statusCode"] != 200 or not served:
            raise SystemExit(f"{self.name}: answered {response['statusCode']}: {response['body'][:300]}")
        self.modules = started.modules
        return started.seconds * 1000


def lay_out_shipped_artifact(directory: Path, runtime_python: str) -> Path:
    """The artifact as `make build` ships it: handler/, tools/, the prebuilt manifest and the runtime
    group's packages, and not one .pyc (pip --no-compile; the tar of handler/ and tools/ leaves them out)."""
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


def floor_start(
    python: str, artifact: Path, env: dict[str, str], manifest_path: Path, script: str = FLOOR_COLD
) -> Callable[..., ColdStart]:
    """The floor's process, run as `cold_start` runs the handler's: same Python, directory and environment."""

    def start(event: dict[str, Any]) -> ColdStart:
        started = time.perf_counter()
        finished = subprocess.run(  # noqa: S603 - the runtime venv's Python running the script above
            [python, "-c", script, str(manifest_path)],
            input=json.dumps(event).encode("utf-8"),
            env={**env, "PYTHONPATH": str(artifact)},
            cwd=artifact,
            capture_output=True,
            check=True,
        )
        seconds = time.perf_counter() - started
        report = json.loads(finished.stdout)
        return ColdStart(report["response"], frozenset(report["modules"]), seconds)

    return start


def run_cold(runners: list[ColdRunner], runs: int) -> None:
    """A warm-up each (writes the .pyc files, fills the page cache), then `runs` rounds in rotated order."""
    for runner in runners:
        runner.run()
    for round_number in range(runs):
        shift = round_number % len(runners)
        for runner in runners[shift:] + runners[:shift]:
            runner.samples.append(runner.run())


# --- warm: loops in this process ----------------------------------------------------------


def floor_verify(event: dict[str, Any], method: str, key: bytes, body: bytes) -> bool:
    if event["requestContext"]["http"]["method"] != method:
        return False
    t, v1 = (item.split("=", 1)[1] for item in event["headers"]["median-signature"].split(","))
    if abs(time.time() - int(t)) > SIGNATURE_TOLERANCE_SECONDS:
        return False
    return hmac.compare_digest(hmac.new(key, t.encode("ascii") + b"." + body, hashlib.sha256).hexdigest(), v1)


def make_floor_get(key: bytes, manifest: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def floor_get(event: dict[str, Any]) -> dict[str, Any]:
        if not floor_verify(event, "GET", key, b""):
            return {"statusCode": 401, "body": "{}"}
        return {"statusCode": 200, "headers": {"Content-Type": "application/json"}, "body": manifest}

    return floor_get


def make_floor_post(key: bytes) -> Callable[[dict[str, Any]], dict[str, Any]]:
    from tools._sample_store import find_order

    def floor_post(event: dict[str, Any]) -> dict[str, Any]:
        body = event["body"].encode("utf-8")
        if not floor_verify(event, "POST", key, body):
            return {"statusCode": 401, "body": "{}"}
        order = find_order(json.loads(body)["input"]["orderNumber"])
        if order is None:
            return {"statusCode": 200, "body": '{"version":1,"ok":false}'}
        output = {
            "orderNumber": order.number,
            "status": order.status,
            "carrier": order.carrier,
            "tracking": order.tracking,
        }
        answer = json.dumps({"version": 1, "ok": True, "output": output}, separators=(",", ":"))
        return {"statusCode": 200, "headers": {"Content-Type": "application/json"}, "body": answer}

    return floor_post


def with_powertools_metrics(floor_post: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], Any]:
    """The floor, plus what the endpoint records per call through Powertools Metrics: one EMF line."""
    from aws_lambda_powertools import Metrics

    metrics = Metrics(namespace="MedianTools", service="median-tools")

    def floor_and_metrics(event: dict[str, Any]) -> Any:
        started = time.perf_counter()
        answer = floor_post(event)
        metrics.add_dimension(name="tool", value="orderStatus")
        metrics.add_metric(name="ToolCalls", unit="Count", value=1.0)
        metrics.add_metric(name="ToolDuration", unit="Milliseconds", value=(time.perf_counter() - started) * 1000)
        metrics.flush_metrics()
        return answer

    return floor_and_metrics


def with_hand_written_emf(floor_post: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], Any]:
    """The floor, plus the same EMF line as Powertools writes, built by hand: what Powertools' checks cost."""

    def floor_and_emf(event: dict[str, Any]) -> Any:
        started = time.perf_counter()
        answer = floor_post(event)
        line = {
            "_aws": {
                "Timestamp": int(time.time() * 1000),
                "CloudWatchMetrics": [
                    {
                        "Namespace": "MedianTools",
                        "Dimensions": [["tool", "service"]],
                        "Metrics": [
                            {"Name": "ToolCalls", "Unit": "Count"},
                            {"Name": "ToolDuration", "Unit": "Milliseconds"},
                        ],
                    }
                ],
            },
            "tool": "orderStatus",
            "service": "median-tools",
            "ToolCalls": [1.0],
            "ToolDuration": [(time.perf_counter() - started) * 1000],
        }
        print(json.dumps(line, separators=(",", ":")))
        return answer

    return floor_and_emf


def time_loop(function: Callable[[dict[str, Any]], Any], events: list[dict[str, Any]]) -> float:
    """µs per call over one call per event, the garbage collector held off as timeit holds it."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        started = time.perf_counter_ns()
        for event in events:
            function(event)
        elapsed = time.perf_counter_ns() - started
    finally:
        if collecting:
            gc.enable()
    return elapsed / len(events) / 1000


def run_warm(
    name: str,
    floor: Callable[[dict[str, Any]], Any],
    endpoint: Callable[[dict[str, Any]], Any],
    make_events: Callable[[], list[dict[str, Any]]],
    rounds: int,
    note: str = "",
    unit: str = "µs",
) -> Case:
    """Interleaved rounds, the order swapped every round, after a warm-up of each; both run the same events."""
    warm_up = make_events()
    for function in (floor, endpoint):
        time_loop(function, warm_up[: len(warm_up) // 10 or 1])
    floors: list[float] = []
    endpoints: list[float] = []
    for round_number in range(rounds):
        events = make_events()
        pair = [(floor, floors), (endpoint, endpoints)]
        for function, samples in pair if round_number % 2 == 0 else pair[::-1]:
            samples.append(time_loop(function, events) / (1000 if unit == "ms" else 1))
    return paired_case(name, unit, floors, endpoints, note)


def client_creation_ms(repeats: int = 5) -> float:
    """What creating a Secrets Manager client costs once its modules are loaded: the median of `repeats`."""
    import boto3

    boto3.client("secretsmanager")
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        boto3.client("secretsmanager")
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


# --- package size and import time ---------------------------------------------------------


def package_size(build_root: Path) -> dict[str, Any]:
    """Size of the `sam build` artifact, unpacked and zipped, when the SAM CLI is in .venv/sam-cli."""
    sam = SAM_CLI
    if not sam.exists():
        return {"skipped": "the SAM CLI is not in .venv/sam-cli (make build puts it there)"}
    build_dir = build_root / "sam-build"
    started = time.monotonic()
    try:
        built = subprocess.run(  # noqa: S603 - the project's SAM CLI, on this project's template
            [str(sam), "build", "--template-file", str(ROOT / "template.yaml"), "--build-dir", str(build_dir)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=SAM_BUILD_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"skipped": f"sam build took over {SAM_BUILD_TIMEOUT_SECONDS} s"}
    if built.returncode != 0:
        last = [line.strip() for line in (built.stdout + built.stderr).splitlines() if line.strip()][-1:]
        return {"skipped": f"sam build failed: {last[0] if last else 'no output'}"}
    apps = sorted(build_dir.glob("*/handler/app.py"))
    if not apps:
        return {"skipped": "sam build left no handler/app.py in its artifact"}
    artifact = apps[0].parent.parent
    files = [path for path in artifact.rglob("*") if path.is_file()]
    archive = shutil.make_archive(str(build_root / "artifact"), "zip", artifact)
    return {
        "function": artifact.name,
        "files": len(files),
        "unzipped_bytes": sum(path.stat().st_size for path in files),
        "zipped_bytes": Path(archive).stat().st_size,
        "prebuilt_manifest": (artifact / "handler" / PREBUILT_MANIFEST_FILE).exists(),
        "build_seconds": round(time.monotonic() - started, 1),
    }


def import_time(python: str, env: dict[str, str], repeats: int = 3) -> dict[str, Any]:
    """`python -X importtime -c 'import handler.app'`: of `repeats` runs, the median one's top 10 by cumulative time."""
    runs: list[tuple[int, list[dict[str, Any]]]] = []
    for _ in range(repeats):
        finished = subprocess.run(  # noqa: S603 - this venv's Python running this bench's own scripts
            [python, "-X", "importtime", "-c", "import handler.app"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        rows: list[dict[str, Any]] = []
        for line in finished.stderr.splitlines():
            if line.startswith("import time:") and "self [us]" not in line:
                self_us, cumulative_us, name = line.removeprefix("import time:").split("|")
                rows.append({"module": name.rstrip(), "self_us": int(self_us), "cumulative_us": int(cumulative_us)})
        total = next(row["cumulative_us"] for row in rows if row["module"].strip() == "handler.app")
        runs.append((total, rows))
    runs.sort(key=lambda run: run[0])
    total, rows = runs[len(runs) // 2]
    top = sorted(rows, key=lambda row: row["cumulative_us"], reverse=True)[:10]
    return {"handler_app_us": total, "modules": len(rows), "top": top}


# --- the run --------------------------------------------------------------------------------


def measure(cold_runs: int, warm_rounds: int, with_package: bool, runtime_python: str) -> dict[str, Any]:
    load_before = os.getloadavg()
    started = time.monotonic()
    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="median-bench-")))
        endpoint_url = start_moto(stack)
        # As deployed (template.yaml always names the table; a GET never touches it) …
        deployed_env = lambda_environment(endpoint_url, idempotency=True)
        # … and as `make serve` runs: no table, so a call runs its tool with no DynamoDB write,
        # which is what the floor does. The POST targets are measured so; idempotency has rows of its own.
        env = lambda_environment(endpoint_url, idempotency=False)
        artifact = lay_out_artifact(work / "artifact", prebuilt_manifest=True)
        source = lay_out_artifact(work / "source", prebuilt_manifest=False)
        manifest_path = artifact / "handler" / PREBUILT_MANIFEST_FILE
        manifest = manifest_path.read_text(encoding="utf-8").strip()

        def endpoint(
            name: str,
            event: Callable[[], dict[str, Any]],
            where: Path = artifact,
            preimport: tuple[str, ...] = (),
            environment: dict[str, str] = deployed_env,
        ) -> ColdRunner:
            def start(event: dict[str, Any]) -> ColdStart:
                return cold_start(event, where, environment, python=runtime_python, preimport=preimport)

            return ColdRunner(name, start, event, manifest if event is get_event else None)

        floor = ColdRunner(
            "cold GET floor", floor_start(runtime_python, artifact, env, manifest_path), get_event, manifest
        )
        cold_get = endpoint("cold GET", get_event)
        cold_post = endpoint("cold POST", post_event, environment=env)
        cold_post_idempotent = endpoint("cold POST, idempotency on (moto's DynamoDB)", post_event)
        floor_with_libraries = ColdRunner(
            "cold GET floor + pydantic (one model) + Powertools, imported",
            floor_start(runtime_python, artifact, env, manifest_path, FLOOR_WITH_LIBRARIES_COLD),
            get_event,
            manifest,
        )
        # No .pyc is ever written there: /var/task is read-only, so Lambda compiles these at every cold start.
        shipped = lay_out_shipped_artifact(work / "shipped", runtime_python)
        no_bytecode = {"PYTHONDONTWRITEBYTECODE": "1"}
        extension_env = {**env, "PARAMETERS_SECRETS_EXTENSION_HTTP_PORT": str(start_extension_stub(stack))}
        ideas = [
            ColdRunner(
                "floor, key from the Secrets extension's cache (a stub)",
                floor_start(runtime_python, artifact, extension_env, manifest_path, FLOOR_EXTENSION_COLD),
                get_event,
                manifest,
            ),
            floor_with_libraries,
            endpoint(
                "cold GET, the artifact as built: no .pyc",
                get_event,
                where=shipped,
                environment={**deployed_env, **no_bytecode},
            ),
            endpoint(
                "cold POST, the artifact as built: no .pyc",
                post_event,
                where=shipped,
                environment={**env, **no_bytecode},
            ),
            endpoint("cold GET, the manifest built from the tools", get_event, where=source),
            endpoint(
                "cold GET, Powertools imported (Parameters, Logger)",
                get_event,
                preimport=("aws_lambda_powertools.utilities.parameters",),
            ),
            endpoint(
                "cold GET, Powertools' event handler imported",
                get_event,
                preimport=("aws_lambda_powertools.event_handler",),
            ),
        ]
        runners = [floor, cold_get, cold_post, cold_post_idempotent, *ideas]
        print(f"cold: {cold_runs} rounds of {len(runners)} processes …", file=sys.stderr, flush=True)
        run_cold(runners, cold_runs)

        print(f"warm: {warm_rounds} rounds of each loop …", file=sys.stderr, flush=True)
        os.environ.update(env)
        os.environ.pop("MEDIAN_DEV_KEY", None)
        # Metrics print a line per call, as on Lambda, where stdout goes to CloudWatch Logs.
        sink = stack.enter_context(Path(os.devnull).open("w", encoding="utf-8"))
        stack.enter_context(redirect_stdout(sink))
        from handler.app import lambda_handler

        context = FakeLambdaContext(timeout_seconds=3600)

        def endpoint_call(event: dict[str, Any]) -> dict[str, Any]:
            return lambda_handler(event, context)  # type: ignore[arg-type]

        key = BENCH_KEY.encode("utf-8")
        floor_get, floor_post = make_floor_get(key, manifest), make_floor_post(key)
        warm_get = get_event()
        check_post = post_event()
        if endpoint_call(warm_get)["body"] != floor_get(warm_get)["body"]:
            raise SystemExit("warm GET: the endpoint and the floor answer different manifests")
        answers = [json.loads(function(check_post)["body"]) for function in (endpoint_call, floor_post)]
        if answers[0] != answers[1]:
            raise SystemExit(f"warm POST: the endpoint and the floor answer differently: {answers}")

        def posts(count: int) -> Callable[[], list[dict[str, Any]]]:
            return lambda: [post_event() for _ in range(count)]

        warm_get_case = run_warm("warm GET", floor_get, endpoint_call, lambda: [warm_get] * WARM_GET_CALLS, warm_rounds)
        warm_post_case = run_warm("warm POST", floor_post, endpoint_call, posts(WARM_POST_CALLS), warm_rounds)
        warm_ideas = [
            run_warm(
                "warm POST floor + Powertools Metrics (an EMF line per call)",
                floor_post,
                with_powertools_metrics(floor_post),
                posts(WARM_POST_CALLS),
                warm_rounds,
            ),
            run_warm(
                "warm POST floor + the same EMF line written by hand",
                floor_post,
                with_hand_written_emf(floor_post),
                posts(WARM_POST_CALLS),
                warm_rounds,
            ),
        ]
        os.environ["IDEMPOTENCY_TABLE"] = IDEMPOTENCY_TABLE
        warm_idempotent = run_warm(
            "warm POST, idempotency on (moto's DynamoDB)",
            floor_post,
            endpoint_call,
            posts(WARM_IDEMPOTENT_CALLS),
            max(3, warm_rounds // 3),
            "two writes per call, which the floor does not make",
            unit="ms",
        )
        del os.environ["IDEMPOTENCY_TABLE"]

        cases = [
            paired_case("cold GET", "ms", floor.samples, cold_get.samples),
            warm_get_case,
            warm_post_case,
            paired_case("cold POST", "ms", floor.samples, cold_post.samples, "against the cold-GET floor"),
        ]
        informational = [
            warm_idempotent,
            paired_case(
                cold_post_idempotent.name,
                "ms",
                floor.samples,
                cold_post_idempotent.samples,
                "against the cold-GET floor",
            ),
        ]
        idea_cases = [paired_case(runner.name, "ms", floor.samples, runner.samples) for runner in ideas]
        idea_cases.append(
            paired_case(
                "cold POST against that floor with the libraries",
                "ms",
                floor_with_libraries.samples,
                cold_post.samples,
                "the handler's own share",
            )
        )
        idea_cases += warm_ideas

        print("client creation, import time, package size …", file=sys.stderr, flush=True)
        creation = client_creation_ms()
        imports = import_time(runtime_python, {**deployed_env, "PYTHONPATH": str(artifact)})
        package = package_size(work) if with_package else {"skipped": "--no-package"}
        floor_modules = set(floor.modules)
    return {
        "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "cpus": os.cpu_count(),
        "load_average_before": [round(value, 2) for value in load_before],
        "runtime_python": runtime_python,
        "cold_runs": cold_runs,
        "warm_rounds": warm_rounds,
        "seconds": round(time.monotonic() - started, 1),
        "cases": [case.as_json() for case in cases],
        "informational": [case.as_json() for case in informational],
        "ideas": [case.as_json() for case in idea_cases],
        "client_creation_ms": round(creation, 2),
        "cold_get_imports_beyond_floor": sorted(set(cold_get.modules) - floor_modules),
        "cold_post_imports_beyond_floor": _top_level(set(cold_post.modules) - floor_modules),
        "import_time": imports,
        "package": package,
    }


def _top_level(modules: set[str]) -> dict[str, int]:
    """How many modules of each top-level package."""
    counts: dict[str, int] = {}
    for module in modules:
        top = module.split(".")[0]
        counts[top] = counts.get(top, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: -item[1]))


# --- output ---------------------------------------------------------------------------------


def _amount(value: float, unit: str) -> str:
    if unit == "ms" and value < 1:
        value, unit = value * 1000, "µs"
    if unit == "µs":
        return f"{value:.1f} µs"
    return f"{value:.0f} ms" if value >= 10 else f"{value:.1f} ms"


def _verdict(case: dict[str, Any]) -> str:
    if case["target"] is None:
        return ""
    return f"≤ {case['target']:g}x {'met' if case['met'] else 'MISSED'}"


_IDEAS_TITLE = "ideas, each against the same floor as the case it varies:"


def table(results: dict[str, Any]) -> str:
    header = f"{'case':64} {'floor':>9} {'endpoint':>9} {'ratio':>7}  target"
    lines = [header, "-" * len(header)]
    titles = {"informational": "with idempotency on (not in the floor, no target):", "ideas": _IDEAS_TITLE}
    for section in ("cases", "informational", "ideas"):
        if section in titles:
            lines += ["", titles[section]]
        for case in results.get(section, []):
            name = case["name"] + (f" ({case['note']})" if case["note"] else "")
            lines.append(
                f"{name:64} {_amount(case['floor'], case['unit']):>9} {_amount(case['endpoint'], case['unit']):>9} "
                f"{case['ratio']:>6.2f}x  {_verdict(case)}"
            )
    lines.append(f"a new Secrets Manager client, its modules loaded: {results['client_creation_ms']:.0f} ms")
    lines.append(f"\ncold GET imports beyond the floor: {', '.join(results['cold_get_imports_beyond_floor'])}")
    beyond = ", ".join(f"{name} {count}" for name, count in results["cold_post_imports_beyond_floor"].items())
    lines.append(f"cold POST imports beyond the floor (modules per package): {beyond}")
    package = results["package"]
    if "skipped" in package:
        lines.append(f"\npackage size: skipped: {package['skipped']}")
    else:
        lines.append(
            f"\npackage size: {package['unzipped_bytes'] / 1e6:.1f} MB unzipped, "
            f"{package['zipped_bytes'] / 1e6:.1f} MB zipped, {package['files']} files; "
            f"the prebuilt manifest in it: {'yes' if package['prebuilt_manifest'] else 'NO'}"
        )
    imports = results["import_time"]
    lines.append(
        f"\nimport handler.app: {imports['handler_app_us'] / 1000:.1f} ms, {imports['modules']} modules; "
        "top 10 by cumulative time:"
    )
    for row in imports["top"]:
        lines.append(
            f"  {row['cumulative_us'] / 1000:7.1f} ms  (self {row['self_us'] / 1000:5.1f} ms)  {row['module']}"
        )
    lines.append(
        f"\nPython {results['python']} on {results['platform']}, {results['cpus']} CPUs, load "
        f"{results['load_average_before']} before; {results['cold_runs']} cold rounds, {results['warm_rounds']} "
        f"warm rounds; {results['seconds']} s"
    )
    return "\n".join(lines)


def markdown(results: dict[str, Any], *, with_ideas: bool = False) -> str:
    rows = ["| case | floor | endpoint | ratio | target |", "| --- | ---: | ---: | ---: | --- |"]
    sections = [("cases", ""), ("informational", "(informational)")]
    for section, label in sections + ([("ideas", "(an idea)")] if with_ideas else []):
        for case in results.get(section, []):
            name = case["name"] + (f" ({case['note']})" if case["note"] else "")
            rows.append(
                f"| {name} | {_amount(case['floor'], case['unit'])} | {_amount(case['endpoint'], case['unit'])} "
                f"| {case['ratio']:.2f}x | {_verdict(case) or label} |"
            )
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cold-runs", type=int, default=15, help="rounds of the cold processes (default 15)")
    parser.add_argument("--warm-rounds", type=int, default=15, help="rounds of each warm loop (default 15)")
    parser.add_argument(
        "--runtime-python",
        default=sys.executable,
        help="the Python the cold processes run, with only the runtime group installed as in the artifact "
        "(make bench sets up .venv/bench-runtime); default: this one",
    )
    parser.add_argument("--no-package", action="store_true", help="skip `sam build` and the package size")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--markdown", action="store_true", help="print bench/results.json as a Markdown table")
    parser.add_argument("--ideas", action="store_true", help="with --markdown: the ideas' rows too")
    arguments = parser.parse_args()
    if arguments.markdown:
        print(markdown(json.loads(RESULTS.read_text(encoding="utf-8")), with_ideas=arguments.ideas))
        return 0
    # Absolute, as the processes run in the artifact's directory; not resolved, which would leave the venv.
    runtime_python = str(Path.cwd() / arguments.runtime_python)
    results = measure(arguments.cold_runs, arguments.warm_rounds, not arguments.no_package, runtime_python)
    print(table(results))
    partial = RESULTS.with_suffix(".json.tmp")
    partial.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    partial.replace(RESULTS)
    print(f"\nwritten: {RESULTS.relative_to(ROOT)}")
    missed = [
        case["name"] for case in results["cases"] if case["target"] is not None and case["ratio"] > case["target"]
    ]
    return 1 if arguments.strict and missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
