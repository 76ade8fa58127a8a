"""`make bench`: what the endpoint costs, as ratios against the least any correct endpoint must do and against a peer.

Every case runs in the same run as what it is weighed against, interleaved with it (the order
rotated every round), so that a busy machine slows both alike and the ratio holds where the
milliseconds do not. A ratio is the median of each round's own ratio.

The endpoint serves the bench's own tool, Median's example `orderStatus` (bench/bench_tools,
named by $MEDIAN_TOOLS_PACKAGE), so it measures the same endpoint whatever `tools/` holds.

  cold GET   a fresh process imports the handler (from an artifact laid out as `sam build`
             lays it, with the prebuilt manifest; its environment as deployed) and answers one
             signed GET. Two configurations: the key through the Parameters and Secrets
             extension's localhost API (the template's default; a stand-in of that API serves
             the secret it reads from Secrets Manager), and through boto3. Against the floor of
             each: start Python, read the key (one GET to the extension's API with http.client,
             or `import boto3` and one GetSecretValue), check the HMAC, answer the prebuilt
             manifest. And against the peer's cold GET.
  cold POST  the first call in a fresh process, no idempotency table (as `make serve` runs);
             against the boto3 floor (the key through boto3), and against the peer's.
  warm GET   lambda_handler in a loop; against the HMAC check and the answer. µs per call.
  warm POST  orderStatus through lambda_handler, each call with its own callId, a Lambda
             context (so the time limit is armed), metrics printed; against the HMAC check,
             json.loads, the order lookup and json.dumps of the output, and against the peer's.

The peer (bench/peer.py) is the same endpoint written by hand the way a Powertools user would:
APIGatewayHttpResolver, Parameters' get_secret through boto3, a pydantic model, the signature
checked, nothing more.

Idempotency on (two DynamoDB writes per call, to moto's server) has rows of its own, with no
target. Then the ideas bench/README.md weighs, measured the same way; the size of the `sam
build` artifact (when `make build` has put the SAM CLI in .venv/sam-cli); `python -X
importtime` top 10 for handler.app. Secrets Manager and DynamoDB are moto's server on a free
loopback port, reached over HTTP. It prints a table and writes bench/results.json;
`--markdown` prints that file as the README's table.
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
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack, contextmanager, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results.json"
SAM_CLI = ROOT / ".venv" / "sam-cli" / "bin" / "sam"  # the Makefile's SAM_VENV
sys.path.insert(0, str(ROOT))
# The bench's own tools, before anything reads which package the handler serves.
BENCH_TOOLS = "bench.bench_tools"
os.environ["MEDIAN_TOOLS_PACKAGE"] = BENCH_TOOLS

from handler.protocol import (  # noqa: E402 - needs ROOT on sys.path
    KEY_SECRET_ENV,
    PREBUILT_MANIFEST_FILE,
    SECRETS_EXTENSION_HOST,
    SECRETS_EXTENSION_PATH,
    SECRETS_EXTENSION_PORT_ENV,
    SECRETS_EXTENSION_TOKEN_ENV,
    SECRETS_EXTENSION_TOKEN_HEADER,
    SIGNATURE_TOLERANCE_SECONDS,
    TOOLS_PACKAGE_ENV,
)
from handler.testing import (  # noqa: E402
    ColdStart,
    FakeLambdaContext,
    SecretsExtensionStandIn,
    call_body,
    cold_start,
    free_port,
    lay_out_artifact,
    signed_event,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

SECRET_NAME = "median-bench-key"  # noqa: S105 - a name
IDEMPOTENCY_TABLE = "median-bench-idempotency"
BENCH_KEY = "mk_bench_0123456789abcdef"  # made up for this run, served on loopback only
SESSION_TOKEN = "bench-session-token"  # noqa: S105 - what the extension's stand-in accepts, on loopback
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

# The targets of issue 11, by case. Each is met when the median of its per-round ratios is at most this.
TARGETS = {
    "cold GET, key through the extension": 1.3,
    "cold GET, key through boto3": 1.15,
    "cold GET against the peer's": 0.6,
    "cold POST, key through boto3": 1.5,
    "cold POST against the peer's": 1.0,
    "warm GET": 2.0,
    "warm POST": 5.0,
    "warm POST against the peer's": 1.0,
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

# The same floor with the key from the Parameters and Secrets Lambda extension's localhost API:
# one GET with the standard library's http.client, the session token in the extension's header.
FLOOR_EXTENSION_COLD = FLOOR_COLD.replace("import boto3\n", "import http.client, urllib.parse\n").replace(
    """secret = boto3.client("secretsmanager").get_secret_value(SecretId=os.environ["MEDIAN_KEY_SECRET_ID"])""",
    f"""port = int(os.environ[{SECRETS_EXTENSION_PORT_ENV!r}])
query = "?secretId=" + urllib.parse.quote(os.environ["MEDIAN_KEY_SECRET_ID"])
connection = http.client.HTTPConnection({SECRETS_EXTENSION_HOST!r}, port, timeout=2)
token = os.environ[{SECRETS_EXTENSION_TOKEN_ENV!r}]
connection.request("GET", {SECRETS_EXTENSION_PATH!r} + query, headers={{{SECRETS_EXTENSION_TOKEN_HEADER!r}: token}})
secret = json.loads(connection.getresponse().read())""",
)

# What the standard library modules a cold GET imports beyond the extension floor cost it, one
# group at a time: the handler's modules import these at the top.
EXTENSION_FLOOR_IMPORTS = ("typing", "dataclasses", "pathlib, uuid")


def with_imports(modules: str) -> str:
    return FLOOR_EXTENSION_COLD.replace(
        "import http.client, urllib.parse\n", f"import http.client, urllib.parse, {modules}\n"
    )


# The boto3 floor with the key read through Powertools Parameters' get_secret instead of a client
# of one's own: what handler/key/source.py's own cache saves a cold GET that reads through boto3.
FLOOR_GET_SECRET_COLD = FLOOR_COLD.replace(
    "import boto3\n", "from aws_lambda_powertools.utilities.parameters import get_secret\n"
).replace(
    """secret = boto3.client("secretsmanager").get_secret_value(SecretId=os.environ["MEDIAN_KEY_SECRET_ID"])""",
    """secret = {"SecretString": get_secret(os.environ["MEDIAN_KEY_SECRET_ID"], max_age=300)}""",
)

# The boto3 floor plus what the standard asks a POST to use: pydantic (one model, validated
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

# The peer's cold process: what the Lambda runtime does with bench/peer.py's handler.
PEER_COLD = """
import json, sys, time

class Context:
    function_name = "median-tools"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:median-tools"
    aws_request_id = "cold-start-request"
    def get_remaining_time_in_millis(self):
        return 30000

event = json.loads(sys.stdin.read())
from bench.peer import lambda_handler
response = lambda_handler(event, Context())
sys.stdout.write("\\n" + json.dumps({"response": response, "modules": sorted(sys.modules)}))
"""

# Run by the runtime venv's Python: the top-level files and packages of the `runtime` dependency
# group and everything it requires, as the build installs them from uv.lock into the artifact.
# boto3 is not among them (group aws-sdk: the Lambda runtime provides it, precompiled).
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
    base_name: str  # what the ratio divides by: a floor, or the peer
    base: float  # medians
    value: float
    ratio: float  # the median of each interleaved round's own ratio
    spread: tuple[float, float]  # the per-round ratios' quartiles: how stable the median is
    target: float | None
    note: str = ""
    base_samples: list[float] = field(default_factory=list)
    samples: list[float] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        met = None if self.target is None else self.ratio <= self.target
        return {
            "name": self.name,
            "unit": self.unit,
            "against": self.base_name,
            "floor": round(self.base, 4),
            "endpoint": round(self.value, 4),
            "ratio": round(self.ratio, 3),
            "spread": [round(value, 3) for value in self.spread],
            "target": self.target,
            "met": met,
            "note": self.note,
            "floor_samples": [round(sample, 4) for sample in self.base_samples],
            "endpoint_samples": [round(sample, 4) for sample in self.samples],
        }


def paired_case(name: str, unit: str, base: Samples, measured: Samples, note: str = "", *, target: bool = True) -> Case:
    """`measured` against `base`, round by round: both were timed in the same rounds."""
    ratios = sorted(value / against for value, against in zip(measured.samples, base.samples, strict=True))
    quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
    return Case(
        name,
        unit,
        base.name,
        statistics.median(base.samples),
        statistics.median(measured.samples),
        statistics.median(ratios),
        (quartiles[0], quartiles[2]),
        TARGETS.get(name) if target else None,
        note,
        base.samples,
        measured.samples,
    )


@dataclass
class Samples:
    name: str
    samples: list[float] = field(default_factory=list)


# --- the stage: Secrets Manager, the extension, the environment, the artifact ----------------


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


def aws_credentials(endpoint: str) -> dict[str, str]:
    return {
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        SECRETS_EXTENSION_TOKEN_ENV: SESSION_TOKEN,
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": endpoint,
    }


def lambda_environment(endpoint: str, *, idempotency: bool, extension_port: int | None) -> dict[str, str]:
    """A deployed function's environment: a named secret, fake credentials, no dev key; with
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


def get_event() -> dict[str, Any]:
    return signed_event("GET", key=BENCH_KEY, headers=GATEWAY_HEADERS)


def post_event() -> dict[str, Any]:
    """An orderStatus call with a callId of its own, as Median sends each call."""
    body = call_body("orderStatus", {"orderNumber": "ORD-1042"}, callId=f"call_{uuid.uuid4().hex}")
    return signed_event("POST", body, key=BENCH_KEY, headers=GATEWAY_HEADERS)


# --- cold: a new process per run ----------------------------------------------------------


@dataclass
class ColdRunner(Samples):
    """One kind of new process, run again and again: its times, and what it imported the last time."""

    start: Callable[[dict[str, Any]], ColdStart] | None = None
    make_event: Callable[[], dict[str, Any]] = get_event
    expected_body: Any = None  # the manifest, parsed; None: any 200 with "ok": true (POST)
    modules: frozenset[str] = frozenset()

    def run(self) -> float:
        assert self.start is not None
        started = self.start(self.make_event())
        response = started.response
        body = json.loads(response["body"])
        served = body == self.expected_body if self.expected_body is not None else body.get("ok") is True
        if response["statusCode"] != 200 or not served:
            raise SystemExit(f"{self.name}: answered {response['statusCode']}: {response['body'][:300]}")
        self.modules = started.modules
        return started.seconds * 1000


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


def script_start(python: str, where: Path, env: dict[str, str], script: str, *args: str) -> Callable[..., ColdStart]:
    """A process running `script`, as `cold_start` runs the handler's: same Python, directory and environment."""

    def start(event: dict[str, Any]) -> ColdStart:
        started = time.perf_counter()
        finished = subprocess.run(  # noqa: S603 - the runtime venv's Python running this file's scripts
            [python, "-c", script, *args],
            input=json.dumps(event).encode("utf-8"),
            env={**env, "PYTHONPATH": str(where)},
            cwd=where,
            capture_output=True,
            check=False,
        )
        seconds = time.perf_counter() - started
        if finished.returncode != 0:
            raise SystemExit(f"a cold process failed:\n{finished.stderr.decode('utf-8', errors='replace')[-2000:]}")
        report = json.loads(finished.stdout.decode("utf-8").rstrip("\n").rsplit("\n", 1)[-1])
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
    from bench.bench_tools._orders import find_order, status_of

    def floor_post(event: dict[str, Any]) -> dict[str, Any]:
        body = event["body"].encode("utf-8")
        if not floor_verify(event, "POST", key, body):
            return {"statusCode": 401, "body": "{}"}
        order = find_order(json.loads(body)["input"]["orderNumber"])
        if order is None:
            return {"statusCode": 200, "body": '{"version":1,"ok":false}'}
        answer = json.dumps({"version": 1, "ok": True, "output": status_of(order)}, separators=(",", ":"))
        return {"statusCode": 200, "headers": {"Content-Type": "application/json"}, "body": answer}

    return floor_post


def with_powertools_metrics(floor_post: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], Any]:
    """The floor, plus what the endpoint records per call through Powertools Metrics, printed by its flush_metrics."""
    from aws_lambda_powertools import Metrics
    from aws_lambda_powertools.metrics import MetricUnit

    metrics = Metrics(namespace="MedianTools", service="median-tools")

    def floor_and_metrics(event: dict[str, Any]) -> Any:
        started = time.perf_counter()
        answer = floor_post(event)
        metrics.add_dimension(name="tool", value="orderStatus")
        metrics.add_metric(name="ToolCalls", unit=MetricUnit.Count, value=1.0)
        metrics.add_metric(
            name="ToolDuration", unit=MetricUnit.Milliseconds, value=(time.perf_counter() - started) * 1000
        )
        metrics.flush_metrics()
        return answer

    return floor_and_metrics


def with_serialised_metrics(floor_post: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], Any]:
    """The same, the line printed as handler/runtime/observability.py prints it: serialize_metric_set, an encoder
    built once, clear_metrics; whether metrics are off read once, not per flush."""
    from aws_lambda_powertools import Metrics
    from aws_lambda_powertools.metrics import MetricUnit

    metrics = Metrics(namespace="MedianTools", service="median-tools")
    encoder = json.JSONEncoder(separators=(",", ":"))

    def floor_and_metrics(event: dict[str, Any]) -> Any:
        started = time.perf_counter()
        answer = floor_post(event)
        metrics.add_dimension(name="tool", value="orderStatus")
        metrics.add_metric(name="ToolCalls", unit=MetricUnit.Count, value=1.0)
        metrics.add_metric(
            name="ToolDuration", unit=MetricUnit.Milliseconds, value=(time.perf_counter() - started) * 1000
        )
        try:
            print(encoder.encode(metrics.serialize_metric_set()))
        finally:
            metrics.clear_metrics()
        return answer

    return floor_and_metrics


def _probe_alarm(signum: int, frame: object) -> None:
    """A SIGALRM handler that is a Python function, as handler/calls/deadline.py's is."""


@contextmanager
def probe_alarm_installed() -> Iterator[None]:
    previous = signal.signal(signal.SIGALRM, _probe_alarm)
    try:
        yield
    finally:
        signal.signal(signal.SIGALRM, previous)


def with_alarm_check(
    floor_post: Callable[[dict[str, Any]], Any], getsignal: Callable[[int], Any]
) -> Callable[[dict[str, Any]], Any]:
    """The floor, plus handler/calls/deadline.py's check of the SIGALRM handler in place (a function) before
    each tool run: ours, the default, or a tool's own, which is left alone."""

    def floor_and_check(event: dict[str, Any]) -> Any:
        current = getsignal(signal.SIGALRM)
        if current is not _probe_alarm and current != signal.SIG_DFL:
            raise AssertionError("another SIGALRM handler is in place")
        return floor_post(event)

    return floor_and_check


def with_key_read(
    floor_get: Callable[[dict[str, Any]], Any], read: Callable[[], str]
) -> Callable[[dict[str, Any]], Any]:
    """The floor, plus reading the key from a cache on every call, as a warm request does."""

    def floor_and_key(event: dict[str, Any]) -> Any:
        read()
        return floor_get(event)

    return floor_and_key


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


@dataclass
class WarmLoop(Samples):
    function: Callable[[dict[str, Any]], Any] | None = None


def run_warm(
    loops: list[WarmLoop], make_events: Callable[[], list[dict[str, Any]]], rounds: int, unit: str = "µs"
) -> None:
    """Interleaved rounds, the order rotated every round, after a warm-up of each; all run the same events."""
    warm_up = make_events()
    for loop in loops:
        assert loop.function is not None
        time_loop(loop.function, warm_up[: len(warm_up) // 10 or 1])
    for round_number in range(rounds):
        events = make_events()
        shift = round_number % len(loops)
        for loop in loops[shift:] + loops[:shift]:
            assert loop.function is not None
            loop.samples.append(time_loop(loop.function, events) / (1000 if unit == "ms" else 1))


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
            # The user's tools, as `make build` packages them: not the bench's.
            env={name: value for name, value in os.environ.items() if name != TOOLS_PACKAGE_ENV},
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


def measure(
    cold_runs: int, warm_rounds: int, with_package: bool, with_ideas: bool, runtime_python: str
) -> dict[str, Any]:
    load_before = os.getloadavg()
    started = time.monotonic()
    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="median-bench-")))
        endpoint_url = start_moto(stack)
        # The stand-in reads Secrets Manager with boto3 in this process, as the extension reads it beside the function.
        os.environ.update(aws_credentials(endpoint_url))
        extension = stack.enter_context(SecretsExtensionStandIn(endpoint_url, SESSION_TOKEN))
        # As deployed: the table named (a GET never touches it), the extension's port set, as
        # template.yaml's defaults make it; and the key through boto3, the extension switched off …
        deployed = lambda_environment(endpoint_url, idempotency=True, extension_port=extension.port)
        deployed_boto3 = lambda_environment(endpoint_url, idempotency=True, extension_port=None)
        # … and as `make serve` runs: no table, so a call runs its tool with no DynamoDB write,
        # which is what the floor does. The POST targets are measured so; idempotency has rows of its own.
        serve = lambda_environment(endpoint_url, idempotency=False, extension_port=extension.port)
        serve_boto3 = lambda_environment(endpoint_url, idempotency=False, extension_port=None)
        artifact = lay_out_artifact(work / "artifact", prebuilt_manifest=True)
        shutil.copy2(ROOT / "bench" / "peer.py", artifact / "bench" / "peer.py")
        manifest_path = artifact / "handler" / PREBUILT_MANIFEST_FILE
        manifest = manifest_path.read_text(encoding="utf-8").strip()
        served_manifest = json.loads(manifest)

        def endpoint(
            name: str,
            event: Callable[[], dict[str, Any]],
            environment: dict[str, str],
            where: Path = artifact,
            preimport: tuple[str, ...] = (),
        ) -> ColdRunner:
            def start(event: dict[str, Any]) -> ColdStart:
                return cold_start(event, where, environment, python=runtime_python, preimport=preimport)

            return ColdRunner(name, [], start, event, served_manifest if event is get_event else None)

        def floor(name: str, script: str, environment: dict[str, str]) -> ColdRunner:
            start = script_start(runtime_python, artifact, environment, script, str(manifest_path))
            return ColdRunner(name, [], start, get_event, served_manifest)

        def peer(name: str, event: Callable[[], dict[str, Any]]) -> ColdRunner:
            start = script_start(runtime_python, artifact, serve_boto3, PEER_COLD)
            return ColdRunner(name, [], start, event, served_manifest if event is get_event else None)

        floor_boto3 = floor("the boto3 floor", FLOOR_COLD, serve_boto3)
        floor_extension = floor("the extension floor", FLOOR_EXTENSION_COLD, serve)
        get_extension = endpoint("cold GET, key through the extension", get_event, deployed)
        get_boto3 = endpoint("cold GET, key through boto3", get_event, deployed_boto3)
        post_extension = endpoint("cold POST, key through the extension", post_event, serve)
        post_boto3 = endpoint("cold POST, key through boto3", post_event, serve_boto3)
        peer_get = peer("the peer's cold GET", get_event)
        peer_post = peer("the peer's cold POST", post_event)
        post_idempotent = endpoint("cold POST, idempotency on (moto's DynamoDB)", post_event, deployed)
        runners = [
            floor_boto3,
            floor_extension,
            get_extension,
            get_boto3,
            post_extension,
            post_boto3,
            peer_get,
            peer_post,
            post_idempotent,
        ]
        cold_ideas: list[tuple[ColdRunner, ColdRunner]] = []  # each with the floor it is weighed against
        floor_with_libraries = floor("the boto3 floor + pydantic + Powertools", FLOOR_WITH_LIBRARIES_COLD, serve_boto3)
        if with_ideas:
            # No .pyc is ever written there: /var/task is read-only, so Lambda compiles these at every cold start.
            shipped = lay_out_shipped_artifact(work / "shipped", runtime_python)
            no_bytecode = {"PYTHONDONTWRITEBYTECODE": "1"}
            source = lay_out_artifact(work / "source", prebuilt_manifest=False)
            cold_ideas = [
                (
                    floor("the boto3 floor, key through Powertools' get_secret", FLOOR_GET_SECRET_COLD, serve_boto3),
                    floor_boto3,
                ),
                *[
                    (floor(f"the extension floor + import {modules}", with_imports(modules), serve), floor_extension)
                    for modules in EXTENSION_FLOOR_IMPORTS
                ],
                (
                    endpoint(
                        "cold GET (extension), Powertools' event data classes imported",
                        get_event,
                        deployed,
                        preimport=("aws_lambda_powertools.utilities.data_classes",),
                    ),
                    floor_extension,
                ),
                (
                    endpoint("cold GET (extension), the manifest built from the tools", get_event, deployed, source),
                    floor_extension,
                ),
                (
                    endpoint(
                        "cold GET (extension), the artifact as built: no .pyc",
                        get_event,
                        {**deployed, **no_bytecode},
                        shipped,
                    ),
                    floor_extension,
                ),
                (
                    endpoint(
                        "cold POST (boto3), the artifact as built: no .pyc",
                        post_event,
                        {**serve_boto3, **no_bytecode},
                        shipped,
                    ),
                    floor_boto3,
                ),
                (floor_with_libraries, floor_boto3),
                (post_boto3, floor_with_libraries),
            ]
            runners += [runner for runner, _ in cold_ideas if all(runner is not known for known in runners)]
        print(f"cold: {cold_runs} rounds of {len(runners)} processes …", file=sys.stderr, flush=True)
        run_cold(runners, cold_runs)

        print(f"warm: {warm_rounds} rounds of each loop …", file=sys.stderr, flush=True)
        os.environ.update(serve)
        os.environ.pop("MEDIAN_DEV_KEY", None)
        # Metrics print a line per call, as on Lambda, where stdout goes to CloudWatch Logs.
        sink = stack.enter_context(Path(os.devnull).open("w", encoding="utf-8"))
        stack.enter_context(redirect_stdout(sink))
        import handler.app
        from bench.peer import lambda_handler as peer_handler

        context = FakeLambdaContext(timeout_seconds=3600)

        def ours(event: dict[str, Any]) -> dict[str, Any]:
            return handler.app.lambda_handler(event, context)  # type: ignore[arg-type]

        def theirs(event: dict[str, Any]) -> dict[str, Any]:
            return peer_handler(event, context)  # type: ignore[arg-type]

        key = BENCH_KEY.encode("utf-8")
        floor_get, floor_post = make_floor_get(key, manifest), make_floor_post(key)
        for function in (ours, theirs):
            if json.loads(function(get_event())["body"]) != served_manifest:
                raise SystemExit(f"warm GET: {function.__name__} answers another manifest than the floor")
            check = post_event()
            answers = [json.loads(answer(check)["body"]) for answer in (function, floor_post)]
            if answers[0] != answers[1]:
                raise SystemExit(f"warm POST: {function.__name__} and the floor answer differently: {answers}")

        def posts(count: int) -> Callable[[], list[dict[str, Any]]]:
            return lambda: [post_event() for _ in range(count)]

        warm_get = get_event()
        get_loops = {
            name: WarmLoop(name, [], function)
            for name, function in (("the floor", floor_get), ("warm GET", ours), ("the peer's warm GET", theirs))
        }
        run_warm(list(get_loops.values()), lambda: [warm_get] * WARM_GET_CALLS, warm_rounds)
        post_loops = {
            name: WarmLoop(name, [], function)
            for name, function in (("the floor", floor_post), ("warm POST", ours), ("the peer's warm POST", theirs))
        }
        run_warm(list(post_loops.values()), posts(WARM_POST_CALLS), warm_rounds)

        warm_ideas: list[Case] = []
        if with_ideas:
            warm_ideas = warm_idea_cases(floor_get, floor_post, warm_get, posts, warm_rounds)

        os.environ["IDEMPOTENCY_TABLE"] = IDEMPOTENCY_TABLE
        idempotent_loops = [WarmLoop("the floor", [], floor_post), WarmLoop("warm POST, idempotency on", [], ours)]
        run_warm(idempotent_loops, posts(WARM_IDEMPOTENT_CALLS), max(3, warm_rounds // 3), unit="ms")
        del os.environ["IDEMPOTENCY_TABLE"]

        extension_read = "botocore" not in get_extension.modules
        not_through_extension = (
            "" if extension_read else "THE KEY WAS READ THROUGH BOTO3: this code has no extension path"
        )
        cases = [
            paired_case(get_extension.name, "ms", floor_extension, get_extension, not_through_extension),
            paired_case(get_boto3.name, "ms", floor_boto3, get_boto3),
            paired_case(
                "cold GET against the peer's", "ms", peer_get, get_extension, "the template's default: extension on"
            ),
            paired_case(post_boto3.name, "ms", floor_boto3, post_boto3),
            paired_case(
                "cold POST against the peer's", "ms", peer_post, post_extension, "the template's default: extension on"
            ),
            paired_case("warm GET", "µs", get_loops["the floor"], get_loops["warm GET"]),
            paired_case("warm POST", "µs", post_loops["the floor"], post_loops["warm POST"]),
            paired_case(
                "warm POST against the peer's", "µs", post_loops["the peer's warm POST"], post_loops["warm POST"]
            ),
        ]
        informational = [
            paired_case("the extension floor against the boto3 floor", "ms", floor_boto3, floor_extension),
            paired_case(post_extension.name, "ms", floor_boto3, post_extension, "against the boto3 floor"),
            paired_case("cold GET, key through boto3, against the peer's", "ms", peer_get, get_boto3),
            paired_case("cold POST, key through boto3, against the peer's", "ms", peer_post, post_boto3),
            paired_case("warm GET against the peer's", "µs", get_loops["the peer's warm GET"], get_loops["warm GET"]),
            paired_case("the peer's cold GET", "ms", floor_boto3, peer_get),
            paired_case("the peer's cold POST", "ms", floor_boto3, peer_post),
            paired_case("the peer's warm GET", "µs", get_loops["the floor"], get_loops["the peer's warm GET"]),
            paired_case("the peer's warm POST", "µs", post_loops["the floor"], post_loops["the peer's warm POST"]),
            paired_case(
                "warm POST, idempotency on (moto's DynamoDB)",
                "ms",
                idempotent_loops[0],
                idempotent_loops[1],
                "two writes per call, which the floor does not make",
            ),
            paired_case(post_idempotent.name, "ms", floor_boto3, post_idempotent, "against the boto3 floor"),
        ]
        idea_cases = [paired_case(runner.name, "ms", base, runner, target=False) for runner, base in cold_ideas]
        idea_cases += warm_ideas

        print("client creation, import time, package size …", file=sys.stderr, flush=True)
        creation = client_creation_ms()
        imports = import_time(runtime_python, {**deployed, "PYTHONPATH": str(artifact)})
        package = package_size(work) if with_package else {"skipped": "--no-package"}
    return {
        "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "cpus": os.cpu_count(),
        "load_average_before": [round(value, 2) for value in load_before],
        "load_average_after": [round(value, 2) for value in os.getloadavg()],
        "runtime_python": runtime_python,
        "cold_runs": cold_runs,
        "warm_rounds": warm_rounds,
        "seconds": round(time.monotonic() - started, 1),
        "key_read_through_extension": extension_read,
        "cases": [case.as_json() for case in cases],
        "informational": [case.as_json() for case in informational],
        "ideas": [case.as_json() for case in idea_cases],
        "client_creation_ms": round(creation, 2),
        "cold_get_imports_beyond_floor": sorted(set(get_extension.modules) - set(floor_extension.modules)),
        "cold_get_boto3_imports_beyond_floor": sorted(set(get_boto3.modules) - set(floor_boto3.modules)),
        "cold_post_imports_beyond_floor": _top_level(set(post_boto3.modules) - set(floor_boto3.modules)),
        "import_time": imports,
        "package": package,
    }


def warm_idea_cases(
    floor_get: Callable[[dict[str, Any]], Any],
    floor_post: Callable[[dict[str, Any]], Any],
    warm_get: dict[str, Any],
    posts: Callable[[int], Callable[[], list[dict[str, Any]]]],
    rounds: int,
) -> list[Case]:
    """What handler/ does its own way instead of a library's public API, each piece on the floor, both ways."""
    from aws_lambda_powertools.utilities.parameters import get_secret

    from handler.app import key_source

    cases = []
    key_loops = [
        WarmLoop("the floor", [], floor_get),
        WarmLoop(
            "warm GET floor + the key from handler.key.source's cache", [], with_key_read(floor_get, key_source.get)
        ),
        WarmLoop(
            "warm GET floor + the key from Powertools' get_secret cache",
            [],
            with_key_read(floor_get, lambda: str(get_secret(SECRET_NAME, max_age=300))),
        ),
    ]
    run_warm(key_loops, lambda: [warm_get] * WARM_GET_CALLS, rounds)
    cases += [paired_case(loop.name, "µs", key_loops[0], loop, target=False) for loop in key_loops[1:]]

    metric_loops = [
        WarmLoop("the floor", [], floor_post),
        WarmLoop(
            "warm POST floor + Powertools Metrics, printed as handler/runtime/observability.py does",
            [],
            with_serialised_metrics(floor_post),
        ),
        WarmLoop(
            "warm POST floor + Powertools Metrics, printed by its flush_metrics",
            [],
            with_powertools_metrics(floor_post),
        ),
    ]
    run_warm(metric_loops, posts(WARM_POST_CALLS), rounds)
    cases += [paired_case(loop.name, "µs", metric_loops[0], loop, target=False) for loop in metric_loops[1:]]

    from _signal import getsignal as private_getsignal

    alarm_loops = [
        WarmLoop("the floor", [], floor_post),
        WarmLoop(
            "warm POST floor + the SIGALRM check, private _signal.getsignal",
            [],
            with_alarm_check(floor_post, private_getsignal),
        ),
        WarmLoop(
            "warm POST floor + the SIGALRM check, public signal.getsignal",
            [],
            with_alarm_check(floor_post, signal.getsignal),
        ),
    ]
    with probe_alarm_installed():
        run_warm(alarm_loops, posts(WARM_POST_CALLS), rounds)
    cases += [paired_case(loop.name, "µs", alarm_loops[0], loop, target=False) for loop in alarm_loops[1:]]
    return cases


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


def _spread(case: dict[str, Any]) -> str:
    low, high = case.get("spread", (case["ratio"], case["ratio"]))
    return f"{low:.2f}-{high:.2f}"


_TITLES = {
    "informational": "for information (no target):",
    "ideas": "ideas: what handler/ does its own way, and the alternatives, each against the floor named:",
}


def table(results: dict[str, Any]) -> str:
    header = f"{'case':78} {'against':>34} {'base':>9} {'this':>9} {'ratio':>7} {'IQR':>11}  target"
    lines = [header, "-" * len(header)]
    for section in ("cases", "informational", "ideas"):
        if section in _TITLES:
            lines += ["", _TITLES[section]]
        for case in results.get(section, []):
            name = case["name"] + (f" ({case['note']})" if case["note"] else "")
            lines.append(
                f"{name:78} {case.get('against', 'the floor'):>34} {_amount(case['floor'], case['unit']):>9} "
                f"{_amount(case['endpoint'], case['unit']):>9} {case['ratio']:>6.2f}x {_spread(case):>11}  "
                f"{_verdict(case)}"
            )
    lines.append(f"a new Secrets Manager client, its modules loaded: {results['client_creation_ms']:.0f} ms")
    lines.append(
        f"\ncold GET imports beyond the extension floor: {', '.join(results['cold_get_imports_beyond_floor'])}"
    )
    lines.append(
        f"cold GET (boto3) imports beyond the boto3 floor: {', '.join(results['cold_get_boto3_imports_beyond_floor'])}"
    )
    beyond = ", ".join(f"{name} {count}" for name, count in results["cold_post_imports_beyond_floor"].items())
    lines.append(f"cold POST (boto3) imports beyond the boto3 floor (modules per package): {beyond}")
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
        f"{results['load_average_before']} before, {results.get('load_average_after')} after; "
        f"{results['cold_runs']} cold rounds, {results['warm_rounds']} warm rounds; {results['seconds']} s"
    )
    return "\n".join(lines)


def markdown(results: dict[str, Any], *, with_ideas: bool = False) -> str:
    rows = [
        "| case | against | base | this | ratio | per-round IQR | target |",
        "| --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    sections = [("cases", ""), ("informational", "(informational)")]
    for section, label in sections + ([("ideas", "(an idea)")] if with_ideas else []):
        for case in results.get(section, []):
            name = case["name"] + (f" ({case['note']})" if case["note"] else "")
            rows.append(
                f"| {name} | {case.get('against', 'the floor')} | {_amount(case['floor'], case['unit'])} "
                f"| {_amount(case['endpoint'], case['unit'])} | {case['ratio']:.2f}x | {_spread(case)} "
                f"| {_verdict(case) or label} |"
            )
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cold-runs", type=int, default=21, help="rounds of the cold processes (default 21)")
    parser.add_argument("--warm-rounds", type=int, default=21, help="rounds of each warm loop (default 21)")
    parser.add_argument(
        "--runtime-python",
        default=sys.executable,
        help="the Python the cold processes run, with only the runtime group installed as in the artifact "
        "(make bench sets up .venv/bench-runtime); default: this one",
    )
    parser.add_argument("--no-package", action="store_true", help="skip `sam build` and the package size")
    parser.add_argument("--no-ideas", action="store_true", help="only the cases and the rows for information")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--markdown", action="store_true", help="print bench/results.json as a Markdown table")
    parser.add_argument("--ideas", action="store_true", help="with --markdown: the ideas' rows too")
    arguments = parser.parse_args()
    if arguments.markdown:
        print(markdown(json.loads(RESULTS.read_text(encoding="utf-8")), with_ideas=arguments.ideas))
        return 0
    # Absolute, as the processes run in the artifact's directory; not resolved, which would leave the venv.
    runtime_python = str(Path.cwd() / arguments.runtime_python)
    results = measure(
        arguments.cold_runs, arguments.warm_rounds, not arguments.no_package, not arguments.no_ideas, runtime_python
    )
    print(table(results))
    partial = RESULTS.with_suffix(".json.tmp")
    partial.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    partial.replace(RESULTS)
    print(f"\nwritten: {RESULTS.relative_to(ROOT)}")
    missed = [case["name"] for case in results["cases"] if case["met"] is False]
    if missed:
        print(f"targets missed: {', '.join(missed)}")
    return 1 if arguments.strict and missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
