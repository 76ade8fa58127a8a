"""The pytest fixtures a tool's tests use: `median_aws`, moto's server with the handler pointed at it.

Every test also starts with nothing a container keeps (settings, secrets, AWS clients), so a
value a test sets with `monkeypatch.setenv` is the one its tools read. A tool module that fails
to import stops the run before any test, with its one `file:line: what` line.

Registered for the whole project by pyproject.toml (`-p handler.testing.pytest_plugin` in pytest's
addopts), so `tests/tools/` needs no conftest for it. moto and pytest are test dependencies,
never the artifact's: nothing the function runs imports this module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from handler.testing.aws import MedianAWS, forget_what_a_container_keeps

if TYPE_CHECKING:
    from collections.abc import Iterator

# What boto3 must see so that no test can reach AWS: moto accepts any credentials.
_FAKE_AWS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": MedianAWS.REGION,
}
# Each would send a client elsewhere than moto, or the handler through the extension.
_UNSET = ("AWS_PROFILE", "AWS_REGION", "PARAMETERS_SECRETS_EXTENSION_HTTP_PORT")


def pytest_sessionstart(session: pytest.Session) -> None:
    """A tool module that fails to import stops the run before any test, with one `file:line: what`
    line per broken module (handler.authoring.registry.ToolLoadError), as `make check` and `make serve` say it:
    not as a traceback through the framework in every test that reaches the tools."""
    from handler.authoring.registry import ToolLoadError, load_tools

    try:
        load_tools()
    except ToolLoadError as failed:
        raise pytest.UsageError(f"the tools failed to import:\n{failed}") from None


def pytest_report_header(config: pytest.Config) -> list[str]:
    """What stops your tools' configuration on this machine (a settings.local.toml that is not TOML, a
    MEDIAN_STAGE that names no stage), said before any test: their calls would answer 500."""
    from handler.authoring.settings import ConfigurationError, local_file_problem, this_stage_problem

    try:
        problems = [local_file_problem(), this_stage_problem()]
    except ConfigurationError as error:
        problems = [str(error)]
    return [f"warning: your tools' tests will fail: {problem}" for problem in problems if problem is not None]


@pytest.fixture(scope="session")
def median_aws_endpoint() -> Iterator[str]:
    """moto's server on a free loopback port, one per test session: its URL."""
    from moto.server import ThreadedMotoServer

    # Port 0: the server binds a free port itself, so no other process can take it between a probe and the bind.
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    with pytest.MonkeyPatch.context() as patch:
        for name, value in _FAKE_AWS.items():
            patch.setenv(name, value)
        for name in _UNSET:
            patch.delenv(name, raising=False)
        # boto3 reads this itself: every client the handler and the tools make goes to moto, unpatched.
        patch.setenv("AWS_ENDPOINT_URL", endpoint)
        yield endpoint
    server.stop()


@pytest.fixture
def median_aws(median_aws_endpoint: str) -> Iterator[MedianAWS]:
    """An empty AWS on moto's server for this test, the tools' helpers pointed at it, every cache reset."""
    aws = MedianAWS(median_aws_endpoint)
    aws.reset()
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
