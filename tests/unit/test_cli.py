"""`median`, median-lambda's command line: its commands, signing, sam local's events, and keys kept out of argv."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import string
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from aws_lambda_powertools.utilities.parser.models import APIGatewayProxyEventV2Model
from hypothesis import given, settings
from hypothesis import strategies as st
from median_lambda.app import lambda_handler
from median_lambda.cli.commands import main
from median_lambda.key.local_key import dev_key
from median_lambda.project.sam_config import load_template
from median_lambda.request.signature import matches, parse_header
from median_lambda.testing import TEST_KEY, FakeLambdaContext

from tests.project_copy import copy_project

if TYPE_CHECKING:
    from median_lambda.authoring.registry import Registry

TICKET_INPUT = '{"ticketNumber":"TCK-1042"}'
REPO = Path(__file__).resolve().parents[2]
# The console script median-lambda installs, which the Makefile's targets run: the venv's own.
MEDIAN = Path(sys.executable).with_name("median")
# What a user of the project reaches for, each a command of `median`.
USERS_COMMANDS = [
    *("serve", "new-tool", "test-tools", "check", "manifest", "stages"),
    *("call", "sign", "event", "local-env"),
    *("build", "validate", "deploy", "delete", "check-artifact", "smoke-check"),
    *("local invoke", "local start-api", "local check"),
    *("lock", "audit", "upgrade", "lint-workflows", "remove-examples", "tool-venv", "build-artifact"),
]


def run_cli(
    *arguments: str, env: dict[str, str] | None = None, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(  # noqa: S603 - this project's own CLI, no shell
        [str(MEDIAN), *arguments],
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


def test_median_help_lists_every_command_a_user_runs() -> None:
    # GIVEN the installed `median`, as the Makefile and a user's shell run it
    # WHEN asked for help
    result = run_cli("--help")
    # THEN it lists every command, each with what it does, and how to learn more
    listed = result.stdout.decode()
    assert result.returncode == 0, result.stderr
    for command in USERS_COMMANDS:
        assert re.search(rf"^  {re.escape(command)}  +\S", listed, re.MULTILINE), f"{command} is not listed"
    assert "median COMMAND --help" in listed


def test_every_make_target_runs_a_median_command_that_exists() -> None:
    # GIVEN each target `make help` lists, as make would run it (printed, not run)
    shown = subprocess.run(["make", "-s", "help"], cwd=REPO, capture_output=True, text=True, check=True)  # noqa: S607
    targets = re.findall(r"^  make (\S+)", shown.stdout, re.MULTILINE)
    listed = run_cli("--help").stdout.decode()
    called = {}
    for target in targets:
        recipe = subprocess.run(  # noqa: S603 - make, printing this repository's recipes only
            ["make", "-n", "-o", ".venv/.installed", target, "NAME=x", "ARTIFACTS_DIR=/nonexistent"],  # noqa: S607
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for line in recipe.splitlines():
            if line.startswith(".venv/bin/median "):
                called[target] = " ".join(line.split()[1:3])
    # THEN every median command a target runs is one `median --help` lists: none names one that is gone
    assert {"serve", "check", "build", "validate", "deploy", "invoke", "start-api", "call", "upgrade"} <= set(called)
    for target, command in called.items():
        name = command if command.startswith("local ") else command.split()[0]
        assert re.search(rf"^  {re.escape(name)}  ", listed, re.MULTILINE), f"make {target} runs median {command}"


def test_make_help_and_median_help_name_no_example_tool() -> None:
    # GIVEN the example tools, which make remove-examples deletes from a project
    manifest = json.loads(run_cli("manifest", env={"MEDIAN_TOOLS_PACKAGE": "tools"}).stdout)
    examples = [tool["name"] for tool in manifest["tools"]]
    assert examples, "the template repository's tools/ holds the example tools"
    # WHEN make help and median's help are read
    shown = subprocess.run(["make", "-s", "help"], cwd=REPO, capture_output=True, text=True, check=True)  # noqa: S607
    helps = shown.stdout + "".join(run_cli(*command.split(), "--help").stdout.decode() for command in USERS_COMMANDS)
    # THEN neither names one: both stay true once the examples are gone
    assert [name for name in examples if name in helps] == []


def test_make_help_and_median_help_say_what_a_deploy_asks_as_the_deploy_guide_does() -> None:
    # GIVEN the deploy guide, which says make deploy never runs sam deploy --guided
    guide = (REPO / "docs" / "deploy.md").read_text(encoding="utf-8")
    assert "`make deploy` never runs `sam deploy --guided`" in guide
    # WHEN make help and median's help describe the deploy
    shown = subprocess.run(["make", "-s", "help"], cwd=REPO, capture_output=True, text=True, check=True)  # noqa: S607
    [make_deploy] = [line for line in shown.stdout.splitlines() if line.startswith("  make deploy ")]
    median_deploy = run_cli("deploy", "--help").stdout.decode()
    # THEN both say the preflight asks what samconfig.toml lacks, once, and neither says the deploy is guided
    for described in (make_deploy, median_deploy, run_cli("--help").stdout.decode()):
        assert "guided" not in described
    assert "asks once what samconfig.toml lacks" in make_deploy
    assert "asks once what samconfig.toml lacks" in median_deploy


def test_make_event_passes_tool_and_input_to_median_intact(tmp_path: Path) -> None:
    # GIVEN a project, and an input whose JSON holds both quotes, spaces and a shell's special characters
    project = copy_project(tmp_path / "project")
    tool_input = '{"note": "it\'s \\"50% off\\" & `date`; exit 1", "count": 2}'
    # WHEN `make event` writes the event for sam local, as the README has a user run it
    made = project.make("event", "TOOL=ticketStatus", f"INPUT={tool_input}")
    # THEN the event's body calls that tool with that input, as given, and env.json is written beside it
    assert made.returncode == 0, made.stdout + made.stderr
    body = json.loads(json.loads((project.root / "events" / "ticketStatus.json").read_text())["body"])
    assert (body["tool"], body["input"]) == ("ticketStatus", json.loads(tool_input))
    assert (project.root / "events" / "env.json").is_file()


# Where a key typed on the command line may sit: every command, before or after its own arguments.
COMMANDS = [
    ["sign"],
    ["sign", "--body", "{}"],
    ["call", "http://127.0.0.1:9/"],
    ["event"],
    ["local-env"],
    ["check"],
    ["smoke-check", "https://example.com/"],
    ["local", "invoke"],
    ["deploy"],
]
LONG_KEY_OPTIONS = ["--key", "--median-key", "--secret"]
# Each long option, and each abbreviation or extension of it someone might type.
KEY_OPTION_NAMES = sorted(
    {option[:length] for option in LONG_KEY_OPTIONS for length in range(3, len(option) + 1)} - {"--key-file"[:3]}
    | {"--k", "--keys", "--key-value", "--secret-key", "--median-key-value", "--KEY", "--Median-Key", "--median_key"}
)
keys = st.text(alphabet=string.ascii_letters + string.digits + "_-+/=", min_size=12, max_size=40).map(
    lambda text: f"mk_live_{text}"
)


def spelled(option: str, key: str, form: str) -> list[str]:
    return {"separate": [option, key], "equals": [f"{option}={key}"], "attached": [f"{option}{key}"]}[form]


def run_main(arguments: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(arguments)
    return status, out.getvalue() + err.getvalue()


@settings(max_examples=150, deadline=None)
@given(
    command=st.sampled_from(COMMANDS),
    option=st.sampled_from([*KEY_OPTION_NAMES, "-k", "-K", "-key"]),
    form=st.sampled_from(["separate", "equals", "attached"]),
    key=keys,
    first=st.booleans(),
)
def test_every_spelling_of_a_key_option_is_refused_without_repeating_it(
    command: list[str], option: str, form: str, key: str, first: bool
) -> None:
    # GIVEN a command line that passes the key with any spelling of a key option, anywhere in it
    if option.startswith("--") and form == "attached":
        form = "equals"  # `--keymk_live_...` is a long option of its own name: covered by KEY_OPTION_NAMES
    key_arguments = spelled(option, key, form)
    arguments = [command[0], *key_arguments, *command[1:]] if first else [*command, *key_arguments]
    # WHEN the CLI reads it
    status, printed = run_main(arguments)
    # THEN it refuses, says where a key goes instead, and never prints the key back
    assert status == 2
    assert "MEDIAN_KEY" in printed and "--key-file" in printed
    assert key not in printed


@settings(max_examples=150, deadline=None)
@given(
    placement=st.sampled_from(
        [
            ["sign", "{key}"],  # a stray positional
            ["{key}"],  # in the command's place
            ["check", "{key}", "--also", "a.json"],
            ["sign", "--body", "{{}}", "{key}"],
            ["manifest", "--pretty={key}"],  # an explicit value to a flag that takes none
            ["call", "http://127.0.0.1:9/", "--timeout", "{key}"],  # a value of the wrong type
            ["call", "{key}"],  # in the URL's place
            ["call", "http://127.0.0.1:9/", "--diagnostics={key}"],
            ["sign", "--key-f", "{key}"],  # an abbreviation of --key-file, which is not taken
            ["sign", "-x{key}"],  # an unknown short option with the key attached
            ["event", "--{key}"],  # the key typed as an option
        ]
    ),
    key=keys,
)
def test_a_key_pasted_anywhere_argparse_complains_is_never_printed(placement: list[str], key: str) -> None:
    # GIVEN a key pasted where the command line has no room for it
    arguments = [argument.format(key=key) for argument in placement]
    # WHEN the CLI reads it
    status, printed = run_main(arguments)
    # THEN it is refused as wrong usage, and the error never repeats the key
    assert status == 2
    assert key not in printed
    assert "error:" in printed


def test_an_argparse_error_still_names_the_option_at_fault(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a flag given a value it does not take
    # WHEN the CLI reads it
    status = main(["manifest", "--pretty=mk_live_do_not_leak"])
    # THEN the message names the option and where to read the usage, with the value hidden
    err = capsys.readouterr().err
    assert status == 2
    assert "argument --pretty" in err and "median manifest --help" in err
    assert "mk_live_do_not_leak" not in err


def test_an_abbreviated_key_file_option_is_not_taken_for_key_file(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN `--key-f`, which argparse would otherwise expand to --key-file
    # WHEN it is given
    status = main(["sign", "--key-f", "some-file"])
    # THEN it is an unknown option, not a key file path
    assert status == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --key-f" in err
    assert "cannot read the key file" not in err


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
        (["call", "mk_live_pasted_key"], "give one like https://"),
    ],
)
def test_wrong_usage_says_what_to_do(arguments: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a command used wrongly
    # WHEN it runs
    status = main(arguments)
    # THEN it exits 2 with a message naming the mistake
    assert status == 2
    assert message in capsys.readouterr().err
