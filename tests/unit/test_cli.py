"""`python -m handler`: signing, the events for sam local, and keys kept out of argv."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest
from aws_lambda_powertools.utilities.parser.models import APIGatewayProxyEventV2Model

from handler.app import lambda_handler
from handler.cli import main
from handler.local_key import dev_key
from handler.signature import matches, parse_header
from handler.testing import TEST_KEY, FakeLambdaContext
from scripts.sam_settings import load_template

if TYPE_CHECKING:
    from pathlib import Path

    from handler.registry import Registry

TICKET_INPUT = '{"ticketNumber":"TCK-1042"}'


def run_cli(
    *arguments: str, env: dict[str, str] | None = None, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(  # noqa: S603 - this project's own CLI, no shell
        [sys.executable, "-m", "handler", *arguments],
        input=stdin,
        capture_output=True,
        env={**os.environ, **(env or {})},
        check=False,
        timeout=60,
    )


@pytest.mark.parametrize("from_stdin", [False, True])
def test_sign_prints_a_header_that_verifies(from_stdin: bool) -> None:
    # GIVEN a call body and the key in $MEDIAN_KEY
    body = '{"version":1,"op":"call","tool":"ticketStatus","input":{"ticketNumber":"TCK-1042"}}'
    # WHEN `sign` signs it, from --body or from standard input
    arguments = ("sign", "--body", "-") if from_stdin else ("sign", "--body", body)
    result = run_cli(*arguments, env={"MEDIAN_KEY": TEST_KEY}, stdin=body.encode() if from_stdin else b"")
    # THEN it prints a median-signature header that verifies under that key, and only under it
    assert result.returncode == 0, result.stderr
    header = parse_header(result.stdout.decode().strip())
    assert matches(header, TEST_KEY, body.encode())
    assert not matches(header, "mk_other_key", body.encode())


@pytest.mark.parametrize(
    "arguments",
    [
        ["sign", "--key", "mk_live_do_not_leak"],
        ["sign", "--key=mk_live_do_not_leak"],
        ["call", "http://127.0.0.1:9/", "--key", "mk_live_do_not_leak"],
        ["event", "--median-key", "mk_live_do_not_leak"],
    ],
)
def test_a_key_given_as_an_argument_is_refused_without_repeating_it(
    arguments: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a command line that tries to pass the key itself
    # WHEN the CLI reads it
    status = main(arguments)
    # THEN it refuses, says where a key goes instead, and never prints the key back
    out, err = capsys.readouterr()
    assert status == 2
    assert "MEDIAN_KEY" in err and "--key-file" in err
    assert "mk_live_do_not_leak" not in out + err


def test_an_abbreviated_key_file_option_is_not_taken_for_key_file(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN `--key-f`, which argparse would otherwise expand to --key-file
    # WHEN it is given
    with pytest.raises(SystemExit) as exit_info:
        main(["sign", "--key-f", "some-file"])
    # THEN it is an unknown option, not a key file path
    assert exit_info.value.code == 2
    assert "cannot read the key file" not in capsys.readouterr().err


def sam_local_env(env_file: Path) -> dict[str, str]:
    """The environment `sam local invoke --env-vars env_file` gives the function."""
    overrides: dict[str, str] = json.loads(env_file.read_text())["Parameters"]
    return {"AWS_SAM_LOCAL": "true", "AWS_LAMBDA_FUNCTION_NAME": "MedianToolsFunction", **overrides}


def write_event(tmp_path: Path, *request: str) -> tuple[dict[str, Any], Path]:
    event_file, env_file = tmp_path / "event.json", tmp_path / "env.json"
    assert main(["event", *request, "--output", str(event_file)]) == 0
    assert main(["local-env", "--output", str(env_file)]) == 0
    return json.loads(event_file.read_text()), env_file


@pytest.mark.parametrize(
    ("request_options", "method"),
    [([], "GET"), (["--tool", "ticketStatus", "--input", TICKET_INPUT], "POST"), (["--diagnostics"], "POST")],
)
def test_generated_events_are_payload_2_events_that_sam_local_answers_200(
    sample_tools: Registry, tmp_path: Path, clean_env: pytest.MonkeyPatch, request_options: list[str], method: str
) -> None:
    # GIVEN an event and the --env-vars file written as `make invoke` writes them
    event, env_file = write_event(tmp_path, *request_options)
    # WHEN the handler runs it in the environment sam local invoke gives it
    for name, value in sam_local_env(env_file).items():
        clean_env.setenv(name, value)
    answer = lambda_handler(event, FakeLambdaContext())  # type: ignore[arg-type]
    # THEN the event is an API Gateway HTTP API payload 2.0 event, and the answer is 200
    parsed = APIGatewayProxyEventV2Model.model_validate(event)
    assert parsed.version == "2.0" and parsed.requestContext.http.method == method
    assert answer["statusCode"] == 200, answer["body"]
    if "--tool" in request_options:
        assert json.loads(answer["body"])["output"]["status"] == "waiting"


def test_events_are_signed_with_the_dev_key_so_a_real_key_never_lands_on_disk(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    # GIVEN a real key in $MEDIAN_KEY, as someone who just called the deployed endpoint has
    clean_env.setenv("MEDIAN_KEY", "mk_live_real_key_0123456789")
    # WHEN they write an event for sam local
    event, env_file = write_event(tmp_path, "--tool", "ticketStatus", "--input", TICKET_INPUT)
    # THEN neither file holds the real key: the event verifies under the local dev key
    written = (tmp_path / "event.json").read_text() + env_file.read_text()
    assert "mk_live_real_key" not in written
    header = parse_header(event["headers"]["median-signature"])
    assert matches(header, dev_key(), event["body"].encode())


def test_sam_local_can_set_every_variable_the_env_file_sets(tmp_path: Path) -> None:
    # GIVEN the --env-vars file and the template (sam local sets only variables the template declares)
    template = load_template()
    declared = {
        **template["Globals"]["Function"]["Environment"]["Variables"],
        **template["Resources"]["MedianToolsFunction"]["Properties"]["Environment"]["Variables"],
    }
    _, env_file = write_event(tmp_path)
    # WHEN the env file's variables are looked up in the template
    undeclared = set(sam_local_env(env_file)) - set(declared) - {"AWS_SAM_LOCAL", "AWS_LAMBDA_FUNCTION_NAME"}
    # THEN every one is declared, so the dev key does reach the function
    assert not undeclared


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["event", "--tool", "ticketStatus", "--input", "[1]"], "must be a JSON object"),
        (["event", "--tool", "ticketStatus", "--input", "{nope"], "is not JSON"),
        (["event", "--input", TICKET_INPUT], "--input goes with --tool"),
        (["call", "ftp://example.com/"], "is not an http(s) URL"),
    ],
)
def test_wrong_usage_says_what_to_do(arguments: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a command used wrongly
    # WHEN it runs
    status = main(arguments)
    # THEN it exits 2 with a message naming the mistake
    assert status == 2
    assert message in capsys.readouterr().err
