"""`make start-api` on a busy port stops first and says which port and how to pick another."""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

from median_lambda.cli.port_free import main

if TYPE_CHECKING:
    import pytest


def test_a_busy_port_is_named_with_the_command_that_picks_another(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN something listening on a loopback port
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        # WHEN start-api's preflight checks it
        code = main([str(port), f"PORT={port + 100} make start-api"])
    # THEN it fails, naming the port, the likely holder and the way out
    error = capsys.readouterr().err
    assert code == 1
    assert f"Port {port} is already in use" in error
    assert "make serve" in error
    assert f"PORT={port + 100} make start-api" in error


def test_a_free_port_passes_silently(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a port nothing listens on
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # WHEN checked
    # THEN it passes and prints nothing
    assert main([str(port), "unused"]) == 0
    assert capsys.readouterr().err == ""
