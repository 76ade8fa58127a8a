"""`make serve` on a port it cannot have says which port and how to pick another, in one line, with no traceback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from tests.devserver_process import REPO

if TYPE_CHECKING:
    from collections.abc import Iterator


def serve(port: str) -> subprocess.CompletedProcess[str]:
    """`python -m median_lambda.devserver` as `make serve` runs it, with PORT=port; it must exit by itself."""
    return subprocess.run(
        [sys.executable, "-m", "median_lambda.devserver"],
        cwd=REPO,
        env={**os.environ, "PORT": port},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A loopback port something else listens on while the test runs."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield int(holder.getsockname()[1])


def test_a_busy_port_is_named_with_how_to_pick_another(taken_port: int) -> None:
    # GIVEN a port another program listens on
    # WHEN make serve is asked to serve on it
    served = serve(str(taken_port))
    # THEN it stops with one line naming the port and the command for another, and no traceback
    assert served.returncode == 1
    assert served.stderr.splitlines() == [
        f"error: port {taken_port} is already in use on 127.0.0.1 (another make serve, or a make start-api?). "
        "Stop it, or pick another port: PORT=8080 make serve"
    ]
    assert "Serving" not in served.stderr + served.stdout


@pytest.mark.parametrize("port", ["http", "3000x", "-1", "70000"])
def test_a_port_that_is_no_port_number_says_which_to_give(port: str) -> None:
    # GIVEN PORT set to something that is no TCP port
    # WHEN make serve runs
    served = serve(port)
    # THEN it stops with one line saying what a port is, and no traceback
    assert served.returncode == 2
    assert served.stderr.splitlines() == [
        f"error: PORT={port} is not a port number; give one from 1024 to 65535: PORT=8080 make serve"
    ]
