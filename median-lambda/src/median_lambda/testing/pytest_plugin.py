"""The pytest plugin median-lambda registers (its `pytest11` entry point): `median_aws`, and no real AWS from a test.

pytest loads it in every run of a venv that has median-lambda, so `tests/tools/` needs no
conftest for it. It acts only where median-lambda's `dev` extra is installed (a project's
`make install` installs it: its testing kit, moto, boto3): anywhere else (`pip install
median-lambda pytest`) it imports nothing that extra brings and does nothing, and a test that asks
for `median_aws` is told what to install. moto and pytest are test dependencies, never the
artifact's: nothing the function runs imports this module.

Where the extra is installed, it holds for the whole run:

- **No test reaches real AWS, whenever its client was made.** As pytest loads the plugin, before
  any conftest or test module is imported, every botocore session made from then on refuses a
  request to an address off this machine (median_lambda/testing/no_aws.py), naming the service
  and the URL; moto's own `mock_aws` answers first, and this stands aside for it. Before any
  conftest too, the run's credential and a region replace the developer's (no profile, no
  `~/.aws` file, no endpoint, no session token): a client a conftest makes at import signs with
  nobody's key. A boto3 session or client found made before the plugin loaded (by a plugin loaded
  before it, or the process that started pytest) stops the run, named, as the guard cannot reach it.
- **`median_aws` is the test's own AWS.** moto's server (one per session, loopback only:
  median_lambda/testing/moto_server.py) is emptied before the test, and boto3 points at it
  for that test alone: `AWS_ENDPOINT_URL`, the run's credential and the region are put back afterwards.
  The body of a test that did not ask for it cannot reach it, whatever the environment says.
- **Every test starts with nothing a container keeps** (settings, secrets, AWS clients), so a
  value a test sets with `monkeypatch.setenv` is the one its tools read.
- **A tool module that fails to import stops the run** before any test, with its one
  `file:line: what` line; and a run's header warns when this machine's configuration would fail
  your tools' tests.

`pytest -p no:median_lambda` leaves the plugin out of a run altogether.
"""

from __future__ import annotations

import os
import re
import sys
from importlib.metadata import PackageNotFoundError, distribution, requires
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

    from median_lambda.testing.aws import MedianAWS

DISTRIBUTION = "median-lambda"
EXTRA = "dev"
_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EXTRA_MARKER = re.compile(r"""extra\s*==\s*["']dev["']""")


def dev_extra_installed() -> bool:
    """Whether every distribution median-lambda's `dev` extra requires is installed beside it."""
    try:
        required = requires(DISTRIBUTION) or []
    except PackageNotFoundError:
        return False
    for requirement in required:
        spec, _, marker = requirement.partition(";")
        name = _NAME.match(spec)
        if not _EXTRA_MARKER.search(marker) or name is None:
            continue
        if re.sub(r"[-_.]+", "-", name[1]).lower() == DISTRIBUTION:
            continue  # median-lambda[tracing], itself
        try:
            distribution(name[1])
        except PackageNotFoundError:
            return False
    return True


ACTIVE = dev_extra_installed()
if ACTIVE:
    from median_lambda.testing.no_aws import guard_every_session

    # Now, as pytest loads its plugins: a conftest, and every test module, is imported after this.
    guard_every_session()

# The session's environment change, kept where pytest keeps a plugin's state.
_SESSION_ENVIRONMENT = pytest.StashKey[pytest.MonkeyPatch]()
_WITHOUT_THE_EXTRA = (
    "median_aws needs median-lambda's dev extra (moto, boto3 and the rest of its testing kit), which this "
    "venv lacks: install median-lambda[dev], as a project's make install does"
)


def point_boto3_at(endpoint: str | None, environment: pytest.MonkeyPatch) -> None:
    """Point every boto3 client made from now on at `endpoint` (None: AWS's own addresses, which the guard
    refuses), with the run's credential and region, through `environment` (which puts it all back)."""
    from median_lambda.testing.aws import MedianAWS
    from median_lambda.testing.moto_server import aws_environment

    to_set, to_unset = aws_environment(endpoint, MedianAWS.REGION, current=list(os.environ))
    if endpoint is not None:
        from median_lambda.testing.no_aws import running_test_asked

        running_test_asked(True)  # a fixture the test asked for as it runs (request.getfixturevalue)
    for name in to_unset:
        environment.delenv(name, raising=False)
    for name, value in to_set.items():
        environment.setenv(name, value)
    boto3 = sys.modules.get("boto3")
    if boto3 is not None:
        # boto3's default session keeps the credential and endpoint it first read: one made earlier (in a
        # mock_aws test, at a conftest's import) would sign these calls as another. boto3.client() makes a
        # new one from what is set here, and the old one comes back with the rest.
        environment.setattr(boto3, "DEFAULT_SESSION", None)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """Before any conftest is imported: stop at what the guard cannot reach; nobody's credential, for the session."""
    if not ACTIVE:
        return
    from median_lambda.testing.no_aws import made_before_the_guard

    unguarded = made_before_the_guard()
    if unguarded:
        listed = "\n".join(f"  {made}" for made in unguarded)
        raise pytest.UsageError(
            "boto3 was used before median-lambda's pytest plugin loaded, so what it made could reach real AWS "
            f"with your credentials:\n{listed}\nMake them in a fixture or a test (or a conftest), which run "
            "after the plugin, or leave the plugin out of this run: pytest -p no:median_lambda"
        )
    environment = early_config.stash[_SESSION_ENVIRONMENT] = pytest.MonkeyPatch()
    point_boto3_at(None, environment)


def pytest_configure(config: pytest.Config) -> None:
    """Powertools' warning at each call whose tool recorded no metric of its own is silenced in every test, as the
    handler silences it where it runs (pytest puts the filters back after each test)."""
    from median_lambda.protocol import EMPTY_FLUSH_WARNING

    config.addinivalue_line("filterwarnings", f"ignore:{EMPTY_FLUSH_WARNING}:UserWarning")


def pytest_unconfigure(config: pytest.Config) -> None:
    if _SESSION_ENVIRONMENT in config.stash:
        config.stash[_SESSION_ENVIRONMENT].undo()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """From a test's setup to its teardown, the fixture's moto server answers it only if it asks for the fixture:
    among its fixtures, or pulled in as it runs (request.getfixturevalue: point_boto3_at says so then)."""
    if ACTIVE:
        from median_lambda.testing.no_aws import running_test_asked

        running_test_asked("median_aws_endpoint" in getattr(item, "fixturenames", ()))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """Fixtures of any scope tear down as they set up: with their server."""
    if ACTIVE:
        from median_lambda.testing.no_aws import running_test_asked

        running_test_asked(True)


def pytest_sessionstart(session: pytest.Session) -> None:
    """A tool module that fails to import stops the run before any test, with one `file:line: what`
    line per broken module (median_lambda.authoring.registry.ToolLoadError), as `make check` and `make serve` say it:
    not as a traceback through the framework in every test that reaches the tools."""
    if not ACTIVE:
        return
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
    if not ACTIVE:
        return []
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
    if not ACTIVE:
        pytest.fail(_WITHOUT_THE_EXTRA, pytrace=False)
    from median_lambda.testing.moto_server import LocalMotoServer
    from median_lambda.testing.no_aws import answers_only_who_asks

    server = LocalMotoServer()
    answers_only_who_asks(server.start())
    yield server.endpoint
    server.stop()


@pytest.fixture
def median_aws(median_aws_endpoint: str) -> Iterator[MedianAWS]:
    """An empty AWS on moto's server for this test alone: boto3 and the handler pointed at it until the test ends.

    `median_aws.idempotency_table()` turns on the idempotency table as deployed, so a retried
    call with the same callId is answered from its record (docs/your-own-systems.md).
    """
    from median_lambda.testing.aws import MedianAWS, forget_what_a_container_keeps

    with pytest.MonkeyPatch.context() as environment:
        point_boto3_at(median_aws_endpoint, environment)
        aws = MedianAWS(median_aws_endpoint, environment)
        aws.reset()
        forget_what_a_container_keeps()
        try:
            yield aws
        finally:
            forget_what_a_container_keeps()


@pytest.fixture(autouse=True)
def _median_container_forgotten() -> Iterator[None]:
    """Each test reads settings, secrets and clients as a fresh container would, and leaves none behind."""
    if not ACTIVE:
        yield
        return
    from median_lambda.testing.aws import forget_what_a_container_keeps

    forget_what_a_container_keeps()
    yield
    forget_what_a_container_keeps()
