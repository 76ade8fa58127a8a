from __future__ import annotations

import base64
import copy
import importlib
import json
import logging
import os
import pkgutil
import signal
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, settings
from median_lambda.protocol import SIGNATURE_HEADER, TOOLS_PACKAGE_ENV
from median_lambda.request.signature import sign
from median_lambda.runtime.env import forget_settings
from median_lambda.testing import TEST_KEY, MedianAWS, MedianTestClient

from tests.scratch_tools import EMPTY_TOOLS, SAMPLE_TOOLS

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from median_lambda.authoring.registry import Registry

    from tests.scratch_tools import ScratchTools

    # The make_event fixture: build_event itself.
    EventBuilder = Callable[..., dict[str, Any]]

# A run a non-interactive shell started in the background (`make test &`, nohup) ignores Ctrl-C, and so would every
# process a test starts: make serve's Ctrl-C test needs a terminal's. A handler of Python's own is reset to the
# default in a child, where an ignored signal stays ignored.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# No test may reach AWS: median-lambda's plugin gave the run its own credential and a region, and no
# profile, before this conftest was imported (median_lambda/testing/pytest_plugin.py).
os.environ["POWERTOOLS_SERVICE_NAME"] = "median-tools-test"
for name in (
    "MEDIAN_KEY_SECRET_ID",
    "MEDIAN_DEV_KEY",
    "AWS_LAMBDA_FUNCTION_NAME",
    "AWS_SAM_LOCAL",
    TOOLS_PACKAGE_ENV,
):
    os.environ.pop(name, None)
# Idempotency, metrics namespace and tracing as a fresh clone has them: off, default, off.
for name in (
    "IDEMPOTENCY_TABLE",
    "IDEMPOTENCY_EXPIRY_SECONDS",
    "POWERTOOLS_METRICS_NAMESPACE",
    "POWERTOOLS_TRACE_DISABLED",
):
    os.environ.pop(name, None)

# The fuzz suite's budget: bounded so `make test` stays fast. HYPOTHESIS_PROFILE=deep searches longer.
_FUZZ_SETTINGS = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}
settings.register_profile("ci", max_examples=200, **_FUZZ_SETTINGS)
settings.register_profile("deep", max_examples=5_000, **_FUZZ_SETTINGS)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

EVENTS_DIR = Path(__file__).parent / "events"
# The three event shapes the handler is reached by, each a JSON file captured in AWS's own layout.
SHAPES = ("rest_api_v1", "http_api_v2", "function_url")


def pytest_configure(config: pytest.Config) -> None:
    # The template repository's own marker; a project's pyproject.toml, which this conftest is not
    # part of, declares none.
    config.addinivalue_line("markers", "browser: drives headless Chromium; skipped when no Chromium is installed")


# The framework's own suites. Everything else under tests/ (tests/tools/, above all) is the user's.
FRAMEWORK_SUITES = ("unit", "integration", "browser")


def users_shell_configuration() -> list[str]:
    """The variables of a user's shell that choose their tools' configuration: MEDIAN_STAGE, MEDIAN_SETTING_*."""
    from median_lambda.authoring.settings import OVERRIDE_PREFIX, STAGE_ENV

    return [name for name in os.environ if name == STAGE_ENV or name.startswith(OVERRIDE_PREFIX)]


@pytest.fixture(autouse=True)
def _framework_tests_run_as_a_fresh_clone(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A framework test never sees the stage or overrides the user's shell sets for their own tools'
    tests: `MEDIAN_STAGE=staging make test` must not refuse the framework's tools, which have no
    [staging]. Processes a test starts inherit the same environment."""
    relative = request.path.relative_to(Path(__file__).parent)
    if relative.parts[0] in FRAMEWORK_SUITES:
        for name in users_shell_configuration():
            monkeypatch.delenv(name)


@pytest.fixture
def client() -> MedianTestClient:
    """Signs requests with the protocol's test key and serves it to the handler as the dev key.

    It sends no callId unless a test names one (`call_ids=False`): the framework's tests of what a
    callId changes name theirs. A user's `MedianTestClient()` sends a fresh one per call, as Median does.
    """
    return MedianTestClient(TEST_KEY, call_ids=False)


@pytest.fixture(autouse=True, scope="session")
def dev_key_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The dev key file `make serve` and `python -m median_lambda sign` share, for the whole run.

    A temporary one, which no test finds already made: the suite never writes, reads or
    replaces the clone's own `.median-dev-key`. Dev servers and CLIs the tests start inherit it.
    """
    from median_lambda.key.local_key import DEV_KEY_FILE_ENV

    path = tmp_path_factory.mktemp("dev-key") / ".median-dev-key"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(DEV_KEY_FILE_ENV, str(path))
        yield path


@pytest.fixture
def clean_env() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def build_event(
    shape: str,
    method: str,
    body: bytes = b"",
    *,
    key: str | None = TEST_KEY,
    timestamp: int | None = None,
    headers: dict[str, str] | None = None,
    base64_body: bool = False,
) -> dict[str, Any]:
    """The fixture event of `shape` for this request, signed now under `key` (unsigned when key is None)."""
    event: dict[str, Any] = copy.deepcopy(json.loads((EVENTS_DIR / f"{shape}.json").read_text(encoding="utf-8")))
    context = event["requestContext"]
    context["requestId"] = str(uuid.uuid4())
    extra = dict(headers or {})
    if key is not None:
        # REST APIs pass header names as the client wrote them; HTTP APIs and Function URLs lower-case them.
        name = "Median-Signature" if shape == "rest_api_v1" else SIGNATURE_HEADER
        extra = {name: sign(key, body, timestamp=timestamp), **extra}
    text = base64.b64encode(body).decode("ascii") if base64_body else body.decode("utf-8")
    if shape == "rest_api_v1":
        event["httpMethod"] = context["httpMethod"] = method
        event["headers"].update(extra)
        event["multiValueHeaders"].update({name: [value] for name, value in extra.items()})
        event["body"] = text or None
    else:
        context["http"]["method"] = method
        if shape == "http_api_v2":
            event["routeKey"] = context["routeKey"] = f"{method} /" if method in ("GET", "POST") else "ANY /"
        event["headers"].update(extra)
        if text:
            event["body"] = text
    event["isBase64Encoded"] = base64_body
    return event


@pytest.fixture
def moto_endpoint(median_aws_endpoint: str) -> Iterator[str]:
    """moto's server (the session's one, `median_aws_endpoint`), with boto3 pointed at it for this test alone.

    What `median_aws` (median_lambda/testing/pytest_plugin.py) gives a tool's tests, but not emptied first: the
    framework's tests name what they make uniquely, and share the session's key secret. Without this or
    `median_aws`, a test's boto3 reaches no AWS at all. A fixture of larger scope uses `median_aws_endpoint`.
    """
    from median_lambda.testing.pytest_plugin import point_boto3_at

    with pytest.MonkeyPatch.context() as environment:
        point_boto3_at(median_aws_endpoint, environment)
        yield median_aws_endpoint


@pytest.fixture
def idempotency_table(moto_endpoint: str, clean_env: pytest.MonkeyPatch) -> str:
    """A fresh table shaped as template.yaml makes it (key `id`, TTL `expiration`), named in IDEMPOTENCY_TABLE."""
    name = MedianAWS(moto_endpoint).create_idempotency_table(f"idempotency-{uuid.uuid4().hex[:12]}")
    clean_env.setenv("IDEMPOTENCY_TABLE", name)
    return name


# The two configurations a POST is served in. A deployed function always names its idempotency
# table (template.yaml); `make serve` names none.
AS_DEPLOYED = "as deployed"
AS_SERVED = "as make serve"
# For a test that must hold in both: @pytest.mark.parametrize("configuration", BOTH, indirect=True).
BOTH = (AS_DEPLOYED, AS_SERVED)


@pytest.fixture(params=[AS_DEPLOYED])
def configuration(request: pytest.FixtureRequest) -> str:
    """Serves the test's POSTs as deployed: the idempotency table on moto's DynamoDB, fresh for the test.

    The POST suites run so by default, as production does; the table-less path (`make serve`'s)
    is proven by tests/integration/test_post_without_the_table.py, and by any test that asks
    for both configurations (BOTH). Give each call a callId (with_call_id, client_as_median),
    as Median does, or the table is never reached. Each call that reaches its tool costs two
    requests to moto's server; a call refused before its tool never touches the table.
    """
    if request.param == AS_DEPLOYED:
        request.getfixturevalue("idempotency_table")
    return str(request.param)


class CallingAsMedian(MedianTestClient):
    """A test client whose every call carries a callId of its own, as Median sends it, unless the test names one:
    MedianTestClient's own default, named for the POST suites that say so."""

    __test__ = False


@pytest.fixture
def client_as_median(configuration: str) -> MedianTestClient:
    """CallingAsMedian, served as deployed (through the table): a POST module overrides its `client` with it."""
    return CallingAsMedian(TEST_KEY)


def with_call_id(body: bytes) -> bytes:
    """`body` with a fresh callId, when it is a call that names none: as Median sends every call.

    Appended to the text, so every other byte stays as the test wrote it; any other body, a
    malformed one included, is returned as it is.
    """
    from median_lambda.calls.dispatch import Refusal, parse_body

    try:
        document = parse_body(body)
    except Refusal:
        return body
    if document.get("op") != "call" or "callId" in document:
        return body
    return body.rstrip()[:-1] + b',"callId":"call_' + uuid.uuid4().hex.encode("ascii") + b'"}'


@pytest.fixture
def make_event() -> EventBuilder:
    return build_event


@pytest.fixture(params=SHAPES)
def shape(request: pytest.FixtureRequest) -> str:
    """Runs the test once per event shape: REST API (1.0), HTTP API (2.0) and Function URL."""
    return str(request.param)


@pytest.fixture
def seed_manifest() -> dict[str, Any]:
    """The example answer on Median's own GET page."""
    document: dict[str, Any] = json.loads((EVENTS_DIR / "seed_manifest_example.json").read_text(encoding="utf-8"))
    return document


class LogCapture:
    """The handler's log lines (Powertools writes one JSON object per line to stdout), its EMF
    metrics (stdout too), and anything on stderr, such as a warning."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self._capsys = capsys
        self._seen = ""

    def text(self) -> str:
        captured = self._capsys.readouterr()
        self._seen += captured.out + captured.err
        return self._seen

    def lines(self) -> list[str]:
        return [line for line in self.text().splitlines() if line.strip()]

    def records(self) -> list[dict[str, Any]]:
        """The log records, without the EMF metric lines (those with an `_aws` member) beside them."""
        documents = [json.loads(line) for line in self.text().splitlines() if line.startswith("{")]
        return [document for document in documents if "_aws" not in document]

    def metrics(self) -> list[dict[str, Any]]:
        """The invocations' EMF lines, without the ColdStart line Powertools adds to a container's first flush."""
        documents = [json.loads(line) for line in self.text().splitlines() if line.startswith('{"_aws"')]
        return [document for document in documents if "ColdStart" not in document]


class _CurrentStdout:
    """Writes to whatever sys.stdout is at the moment of writing, as print() does."""

    def write(self, text: str) -> int:
        return sys.stdout.write(text)

    def flush(self) -> None:
        sys.stdout.flush()


@pytest.fixture(autouse=True, scope="session")
def _logs_follow_stdout() -> None:
    """Powertools' handler keeps the sys.stdout of the moment the logger was made; capsys replaces
    sys.stdout per test. Writing through to the current one lets any test capture the log with capsys."""
    from median_lambda.runtime.observability import logger

    handler = logger.registered_handler
    assert isinstance(handler, logging.StreamHandler)
    handler.stream = _CurrentStdout()


@pytest.fixture
def logs(capsys: pytest.CaptureFixture[str]) -> LogCapture:
    return LogCapture(capsys)


# The folders a generated project keeps, whose tests serve tools/ as it is: the user's own tests,
# and the contract suite, which proves the user's endpoint (median_lambda/contract/__init__.py).
TOOL_TESTS_DIR = Path(__file__).parent / "tools"


@pytest.fixture(autouse=True)
def _framework_tests_never_serve_tools_dir(request: pytest.FixtureRequest) -> None:
    """Every test of the framework's own suites runs on the scratch registry: the framework is tested
    without the example tools (or whatever a user has put in tools/), which are served to none of them.
    (The session imports tools/ once, at its start, only to stop at a module that fails to import:
    median_lambda/testing/pytest_plugin.py.)

    The rest of tests/ is the project's, as a generated project has it: tests/tools/ serves tools/ as it
    is, exactly as `make serve` does, and so does median-lambda's contract suite (tests/test_median_contract.py),
    which proves whatever tools/ holds.
    """
    if request.path.relative_to(Path(__file__).parent).parts[0] in FRAMEWORK_SUITES:
        request.getfixturevalue("scratch_registry")


# median_lambda/runtime/env.py reads the settings a warm POST needs once per container, as Lambda allows.
# Tests change the environment between calls: every change made through pytest's monkeypatch,
# and the end of every test (when monkeypatch puts the environment back), reads them anew.
_monkeypatch_setenv, _monkeypatch_delenv = pytest.MonkeyPatch.setenv, pytest.MonkeyPatch.delenv


def _setenv_and_forget(self: pytest.MonkeyPatch, name: str, value: str, prepend: str | None = None) -> None:
    _monkeypatch_setenv(self, name, value, prepend)
    forget_settings()


def _delenv_and_forget(self: pytest.MonkeyPatch, name: str, raising: bool = True) -> None:
    _monkeypatch_delenv(self, name, raising)
    forget_settings()


pytest.MonkeyPatch.setenv = _setenv_and_forget  # type: ignore[method-assign]
pytest.MonkeyPatch.delenv = _delenv_and_forget  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _settings_read_anew() -> Iterator[None]:
    forget_settings()
    yield
    forget_settings()


@pytest.fixture
def scratch_registry(monkeypatch: pytest.MonkeyPatch) -> Registry:
    """An empty registry, served for the length of the test, and put back afterwards.

    `lambda_handler`, `MedianTestClient`, the manifest and the CLI in this process serve it, and
    `@tool` and `@diagnostics` inside the test add to it. $MEDIAN_TOOLS_PACKAGE names a package with
    no tools (tests/empty_tools/), so a process the test starts serves none either, and neither
    serves `tools/`.
    """
    from median_lambda import app
    from median_lambda.authoring.registry import load_tools

    monkeypatch.setenv(TOOLS_PACKAGE_ENV, EMPTY_TOOLS)
    served = load_tools()  # the empty package, imported once: from here on load_tools() imports nothing
    monkeypatch.setattr(served, "tools", [])
    monkeypatch.setattr(served, "diagnostics", [])
    monkeypatch.setattr(app, "_manifest_answer", None)
    return served


@pytest.fixture
def sample_tools(scratch_registry: Registry, monkeypatch: pytest.MonkeyPatch) -> Registry:
    """The tools of tests/sample_tools/ in the scratch registry, imported afresh (their desk as shipped).

    $MEDIAN_TOOLS_PACKAGE names that package, so a process the test starts serves the same tools.
    """
    monkeypatch.setenv(TOOLS_PACKAGE_ENV, SAMPLE_TOOLS)
    for name in [name for name in sys.modules if name.startswith(f"{SAMPLE_TOOLS}.")]:
        monkeypatch.delitem(sys.modules, name)
    # What load_tools() does for a package it has not seen; it has seen this one in an earlier test.
    package = importlib.import_module(SAMPLE_TOOLS)
    for module in pkgutil.iter_modules(package.__path__):
        if not module.name.startswith("_"):
            importlib.import_module(f"{SAMPLE_TOOLS}.{module.name}")
    return scratch_registry


@pytest.fixture
def scratch(scratch_registry: Registry) -> Iterator[ScratchTools]:
    """Test-only tools (counting, waiting, crashing, overrunning), in the scratch registry."""
    from tests.scratch_tools import register_scratch_tools

    tools = register_scratch_tools()
    yield tools
    tools.release.set()  # lets any tool the test abandoned run to its end
