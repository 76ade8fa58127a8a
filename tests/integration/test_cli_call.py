"""`median call` (make call) against the dev server (`make serve`) over real HTTP."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from median_lambda.cli.commands import main
from median_lambda.testing import TEST_KEY

from tests.devserver_process import running_devserver
from tests.support.ports import free_port

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture(scope="module")
def dev_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`python -m median_lambda.devserver` on a free loopback port, verifying with the test key."""
    with running_devserver(tmp_path_factory.mktemp("devserver"), env={"MEDIAN_DEV_KEY": TEST_KEY}) as server:
        yield server.url


@pytest.fixture
def median_key(clean_env: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    clean_env.setenv("MEDIAN_KEY", TEST_KEY)
    return clean_env


def test_call_gets_the_manifest(
    dev_server: str, median_key: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the dev server and the key in $MEDIAN_KEY
    # WHEN `call` sends a signed GET
    status = main(["call", dev_server])
    # THEN it prints the status on stderr and the manifest as indented JSON on stdout
    out, err = capsys.readouterr()
    assert status == 0
    assert f"GET {dev_server} -> 200 OK" in err
    assert "ticketStatus" in {tool["name"] for tool in json.loads(out)["tools"]}
    assert out.startswith("{\n  ")


def test_call_runs_a_tool(dev_server: str, median_key: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN the dev server
    # WHEN `call` sends a signed tool call, as `make call TOOL=ticketStatus INPUT=...` does
    status = main(["call", dev_server, "--tool", "ticketStatus", "--input", '{"ticketNumber":"TCK-1042"}'])
    # THEN the tool's answer comes back with 200
    out, err = capsys.readouterr()
    assert status == 0 and "-> 200" in err
    assert json.loads(out)["output"]["status"] == "waiting"


def test_call_runs_diagnostics(
    dev_server: str, median_key: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the dev server, whose tools declare diagnostics
    # WHEN `call --diagnostics` runs
    status = main(["call", dev_server, "--diagnostics"])
    # THEN it is answered 200 ok
    out, _ = capsys.readouterr()
    assert status == 0 and json.loads(out)["ok"] is True


def test_call_reports_an_error_answer_and_exits_1(
    dev_server: str, clean_env: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a key file holding another key than the server's
    key_file = tmp_path / "key.txt"
    key_file.write_text("mk_not_the_servers_key\n")
    # WHEN `call` signs with it
    status = main(["call", dev_server, "--key-file", str(key_file)])
    # THEN the 401 and its error code are shown, and the exit status says it failed
    out, err = capsys.readouterr()
    assert status == 1
    assert "-> 401" in err
    assert json.loads(out)["error"]["code"] == "unauthorized"


def test_call_to_nothing_says_so(clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a port nothing listens on
    url = f"http://127.0.0.1:{free_port()}/"
    # WHEN `call` sends to it
    status = main(["call", url, "--timeout", "5"])
    # THEN it exits 1 saying the endpoint gave no answer, without a traceback
    err = capsys.readouterr().err
    assert status == 1
    assert "got no answer" in err and "Traceback" not in err
