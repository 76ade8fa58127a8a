"""`python -m devserver` as `make serve` runs it: a real process on a free loopback port."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import textwrap
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from handler.authoring.settings import OVERRIDE_PREFIX
from handler.protocol import STAGE_ENV, TOOLS_PACKAGE_ENV
from tests.scratch_tools import SAMPLE_TOOLS
from tests.support.ports import free_port
from tests.threaded_server import serving_in_a_thread

if TYPE_CHECKING:
    import socket
    from collections.abc import Iterator

    from devserver.server import DevServer

REPO = Path(__file__).resolve().parent.parent
READY_LINE = "Press Ctrl-C to stop."
START_TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True)
class DevServerProcess:
    port: int
    log: Path
    process: subprocess.Popen[bytes]  # to stop it as a person or a process manager would

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def inspector_url(self) -> str:
        """The link the server printed: the page, with the token that lets it run tools."""
        return f"http://127.0.0.1:{self.port}/_inspector?token={self.token}"

    @property
    def token(self) -> str:
        printed = re.search(r"/_inspector\?token=([A-Za-z0-9_-]+)", self.output())
        assert printed, f"the dev server printed no inspector link:\n{self.output()}"
        return printed.group(1)

    def inspector_api(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/_inspector/api/{name}"

    @property
    def token_header(self) -> dict[str, str]:
        """What the page sends with every API request: the printed token."""
        return {"x-inspector-token": self.token}

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    @property
    def local_aws_file(self) -> Path:
        """The file `make serve LOCAL_AWS=moto` names for a shell of the developer's: its moto and credential."""
        printed = re.search(r"from another shell of yours \(the AWS CLI, a script\): \. (\S+)", self.output())
        assert printed, f"the dev server named no file for its local AWS:\n{self.output()}"
        return Path(printed.group(1))

    def local_aws_environment(self) -> dict[str, str]:
        """What sourcing that file sets: AWS_ENDPOINT_URL, the run's credential, the region."""
        exported = re.findall(r"^export (\w+)=(.*)$", self.local_aws_file.read_text(encoding="utf-8"), re.MULTILINE)
        return {name: shlex.split(value)[0] for name, value in exported}

    def local_aws_client(self, service: str) -> Any:
        """A boto3 client on make serve's moto, signed with the run's credential, as a shell that sourced the file."""
        import boto3

        environment = self.local_aws_environment()
        return boto3.client(  # type: ignore[call-overload]
            service,
            endpoint_url=environment["AWS_ENDPOINT_URL"],
            region_name=environment["AWS_DEFAULT_REGION"],
            aws_access_key_id=environment["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=environment["AWS_SECRET_ACCESS_KEY"],
        )


@contextmanager
def running_devserver(
    log_dir: Path,
    *,
    cwd: Path = REPO,
    tools_package: str | None = SAMPLE_TOOLS,
    env: dict[str, str] | None = None,
) -> Iterator[DevServerProcess]:
    """Start the dev server, wait for its startup text, and stop it afterwards.

    It serves `tools_package` (the sample tools by default); None serves `tools`, as `make serve`
    does. `cwd` comes first on the server's import path, so a directory holding its own `tools`
    package serves those tools with this repository's handler and devserver.
    """
    port = free_port()
    log = log_dir / f"devserver-{port}.log"
    # Neither the tools package nor the stage or overrides a user's shell may set for their own tools.
    environment = {
        name: value
        for name, value in os.environ.items()
        if name not in (TOOLS_PACKAGE_ENV, STAGE_ENV) and not name.startswith(OVERRIDE_PREFIX)
    }
    environment.update({"PORT": str(port), "PYTHONPATH": str(REPO), **(env or {})})
    if tools_package is not None:
        environment[TOOLS_PACKAGE_ENV] = tools_package
    # The log goes to a file: a pipe nobody reads would block the server once it filled.
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "devserver"], cwd=cwd, env=environment, stdout=sink, stderr=subprocess.STDOUT
        )
    server = DevServerProcess(port, log, process)
    try:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while READY_LINE not in server.output():
            if process.poll() is not None:
                raise RuntimeError(f"the dev server exited with {process.returncode}:\n{server.output()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the dev server did not start in {START_TIMEOUT_SECONDS:.0f} s:\n{server.output()}")
            time.sleep(0.05)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def serving_local_aws(log_dir: Path, local_settings: str, seed_hook: str | None = None) -> Iterator[DevServerProcess]:
    """`make serve LOCAL_AWS=moto` in a project of its own, with no tool: moto seeded from its
    tools/settings.local.toml (`local_settings`) and, given one, its tests/tools/local_aws_seed.py."""
    root = log_dir / "project"
    (root / "tools").mkdir(parents=True)
    (root / "tools" / "__init__.py").write_text("", encoding="utf-8")
    (root / "tools" / "settings.local.toml").write_text(textwrap.dedent(local_settings), encoding="utf-8")
    if seed_hook is not None:
        (root / "tests" / "tools").mkdir(parents=True)
        (root / "tests" / "tools" / "local_aws_seed.py").write_text(seed_hook, encoding="utf-8")
    with running_devserver(log_dir, cwd=root, tools_package=None, env={"LOCAL_AWS": "moto"}) as server:
        yield server


@contextmanager
def serving_in_process(**limits: float) -> Iterator[DevServer]:
    """A `DevServer` on a free loopback port in this process, with the limits given (small, for tests)."""
    from devserver.server import DevServer

    with serving_in_a_thread(DevServer(0, **limits)) as server:  # type: ignore[arg-type]
        yield server


def read_answer(connection: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """The one answer on this connection: its status, headers and body."""
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = connection.recv(65536)
        assert chunk, f"the connection closed without an answer (after {received!r})"
        received += chunk
    top, _, body = received.partition(b"\r\n\r\n")
    status_line, *lines = top.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    while len(body) < int(headers["content-length"]):
        chunk = connection.recv(65536)
        assert chunk, "the connection closed in the middle of the answer"
        body += chunk
    return int(status_line.split()[1]), headers, body
