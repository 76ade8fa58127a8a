"""The pytest fixtures a tool's tests use: `median_aws`, moto's server with the handler pointed at it.

Registered in every pytest run of a venv that has median-lambda (its `pytest11` entry point), so
`tests/tools/` needs no conftest for it. moto and pytest are test dependencies,
never the artifact's: nothing the function runs imports this module.

What it holds for every test, with the fixture or without:

- **No test reaches AWS unless it asks.** From the session's start, boto3 is pointed at a loopback
  server that refuses every call (median_lambda/testing/no_aws.py), with the run's credential and no
  profile, config file or credentials file of the developer's: a test that forgot `median_aws`
  fails at its first AWS call, saying so, instead of passing against another test's data or
  reaching a real account. Each test starts so again, whatever the last one did to the environment.
- **`median_aws` is the test's own AWS.** moto's server (one per session, loopback only:
  median_lambda/testing/moto_server.py) is emptied before the test, and boto3 points at it for that
  test alone: `AWS_ENDPOINT_URL`, the run's credential and the region are put back afterwards.
- **Every test starts with nothing a container keeps** (settings, secrets, AWS clients), so a
  value a test sets with `monkeypatch.setenv` is the one its tools read.
- **A tool module that fails to import stops the run** before any test, with its one
  `file:line: what` line; and a run's header warns when this machine's configuration would fail
  your tools' tests.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from median_lambda.testing.aws import MedianAWS, forget_what_a_container_keeps
from median_lambda.testing.moto_server import LocalMotoServer, aws_environment
from median_lambda.testing.no_aws import NoAwsServer

if TYPE_CHECKING:
    from collections.abc import Iterator

# The refusing server and the session's environment change, kept where pytest keeps a plugin's state.
_NO_AWS = pytest.StashKey[NoAwsServer]()
_SESSION_ENVIRONMENT = pytest.StashKey[pytest.MonkeyPatch]()


def point_boto3_at(endpoint: str, environment: pytest.MonkeyPatch) -> None:
    """Point every boto3 client made from now on at `endpoint`, through `environment` (which puts it all back)."""
    to_set, to_unset = aws_environment(endpoint, MedianAWS.REGION, current=list(os.environ))
    for name in to_unset:
        environment.delenv(name, raising=False)
    for name, value in to_set.items():
        environment.setenv(name, value)


def pytest_configure(config: pytest.Config) -> None:
    """Before any test module is imported: boto3 points nowhere real, for the whole session; and Powertools'
    warning at each call whose tool recorded no metric of its own is silenced in every test, as the handler
    silences it where it runs."""
    from median_lambda.runtime.observability import EMPTY_FLUSH_WARNING

    config.addinivalue_line("filterwarnings", f"ignore:{EMPTY_FLUSH_WARNING}:UserWarning")
    no_aws = config.stash[_NO_AWS] = NoAwsServer()
    no_aws.start()
    environment = config.stash[_SESSION_ENVIRONMENT] = pytest.MonkeyPatch()
    point_boto3_at(no_aws.endpoint, environment)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _SESSION_ENVIRONMENT in config.stash:
        config.stash[_SESSION_ENVIRONMENT].undo()
    if _NO_AWS in config.stash:
        config.stash[_NO_AWS].stop()


@pytest.fixture(autouse=True)
def _no_aws_unless_asked(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each test starts with boto3 pointed at the refusing server, whatever an earlier test left in os.environ."""
    with pytest.MonkeyPatch.context() as environment:
        point_boto3_at(request.config.stash[_NO_AWS].endpoint, environment)
        yield


def pytest_sessionstart(session: pytest.Session) -> None:
    """A tool module that fails to import stops the run before any test, with one `file:line: what`
    line per broken module (median_lambda.authoring.registry.ToolLoadError), as `make check` and `make serve` say it:
    not as a traceback through the framework in every test that reaches the tools."""
    from median_lambda.authoring.registry import ToolLoadError, load_tools
    from median_lambda.runtime.env import package_directory

    if package_directory() is None:
        return  # no tools package where pytest runs: median-lambda's own suite, whose tests bring their own
    try:
        load_tools()
    except ToolLoadError as failed:
        raise pytest.UsageError(f"the tools failed to import:\n{failed}") from None


def pytest_report_header(config: pytest.Config) -> list[str]:
    """What stops your tools' configuration on this machine (a settings.local.toml that is not TOML, a
    MEDIAN_STAGE that names no stage), said before any test: their calls would answer 500."""
    from median_lambda.authoring.settings import ConfigurationError, local_file_problem, this_stage_problem

    try:
        problems = [local_file_problem(), this_stage_problem()]
    except ConfigurationError as error:
        problems = [str(error)]
    return [f"warning: your tools' tests will fail: {problem}" for problem in problems if problem is not None]


@pytest.fixture(scope="session")
def median_aws_endpoint() -> Iterator[str]:
    """moto's server on a free loopback port, one per test session: its URL. Nothing points at it until
    a test asks for `median_aws`; a fixture of larger scope may use the URL itself (a client's endpoint_url)."""
    server = LocalMotoServer()
    server.start()
    yield server.endpoint
    server.stop()


@pytest.fixture
def median_aws(median_aws_endpoint: str) -> Iterator[MedianAWS]:
    """An empty AWS on moto's server for this test alone: boto3 and the handler pointed at it until the test ends.

    `median_aws.idempotency_table()` turns on the idempotency table as deployed, so a retried
    call with the same callId is answered from its record (docs/your-own-systems.md).
    """
    with pytest.MonkeyPatch.context() as environment:
        aws = MedianAWS(median_aws_endpoint, environment)
        aws.reset()
        point_boto3_at(median_aws_endpoint, environment)
        forget_what_a_container_keeps()
        try:
            yield aws
        finally:
            forget_what_a_container_keeps()


@pytest.fixture(autouse=True)
def _median_container_forgotten() -> Iterator[None]:
    """Each test reads settings, secrets and clients as a fresh container would, and leaves none behind."""
    forget_what_a_container_keeps()
    yield
    forget_what_a_container_keeps()
