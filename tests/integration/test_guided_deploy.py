"""The first deploy asks only what samconfig.toml lacks: `make deploy`'s preflight and the pinned SAM CLI, run as a
user runs them, every question they ask counted.

`make deploy` runs the preflight (median_lambda/cli/preflight.py), which asks for what samconfig.toml lacks (the region,
which `copier copy` leaves to the first deploy) and records it, then `sam deploy` with samconfig.toml as it stands.
`sam deploy --guided` would ask 18 to 20 questions for the same (every Parameter, each route's authentication,
whether to save), and is never run. Here both steps run as the Makefile runs them, on a copy of the project, each
question answered as a user answers it (Enter, for what is offered): the preflight against moto's server, which
stands in for AWS (the key's secret is there, the stack is not); then the SAM CLI tooling/sam-cli.py.lock pins, from
.venv/sam-cli, offline and with no credentials, so that it stops at its first AWS call. What it would ask after
that is the change set's confirmation (samconfig.toml's `confirm_changeset`), once it has made one.

The SAM CLI's venv is not the test suite's: `make sam-cli` (or `make build`, `make validate`) makes it. Where it is
absent these tests skip, saying so; .ci/run and the Checks workflow make it first and set
MEDIAN_SAM_CLI_TESTS=required, which turns that skip into a failure.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import boto3
import pytest
from median_lambda.cli.template_check import WRITTEN_IN_THE_TEMPLATE
from median_lambda.project.sam_config import (
    ROOT,
    SAMCONFIG,
    TEMPLATE,
    deploy_config,
    load_template,
    parameter_overrides,
)
from median_lambda.testing.moto_server import aws_environment, run_credentials

if TYPE_CHECKING:
    from collections.abc import Iterator

# The venv the Makefile makes the SAM CLI in: $(VENV)/sam-cli, beside the one running the tests.
SAM = Path(sys.prefix) / "sam-cli" / "bin" / "sam"
REQUIRE_ENV = "MEDIAN_SAM_CLI_TESTS"
# What differs between two deployments of this template: a stage, an account. Everything else is
# written in template.yaml (Globals, or its resource) or chosen once at `copier copy`.
PER_DEPLOYMENT = {
    "MedianKeySecretName",  # each stage's own secret
    "Stage",  # which table of tools/settings.toml it serves
    "LogLevel",  # DEBUG where you debug, for an incident
    "EnableTracing",  # X-Ray where you investigate, billed per trace
    "EnableSnapStart",  # snapshots where a stage's cold starts are worth their bill
    "AlarmEmail",  # who is paged, per stage
    "DeploymentType",  # all at once in staging, a canary in production
    "ParametersSecretsExtensionLayerArn",  # AWS's for the region, `none` under sam local, pinned where unmapped
    "PermissionsBoundaryPolicy",  # the pipeline's per stage, none for an administrator
}
# A question, as click (the SAM CLI's) and the preflight write it: "\t<text> [<default>]: ", or with no default
# offered "\t<text>: ", then wait for a line (bold codes on a terminal only).
PROMPT = re.compile(r"\t(?:\x1b\[1m)?(?P<text>[^\t\n]+?)(?:\x1b\[0m)?(?: \[(?P<default>[^\]\n]*)\])?: $")
WAIT_SECONDS = 180.0  # the CLI's first start compiles its modules; a prompt comes in seconds after
PROFILE_REGION = "eu-west-1"  # the region of the user's AWS profile, which the first deploy offers


@dataclass
class Conversation:
    """What one command asked, in order (each question's text and the default it offered), and said."""

    prompts: list[tuple[str, str]]
    transcript: str
    returncode: int
    printed: str = ""  # what it printed apart from its questions: the preflight's flags for sam deploy


def converse(command: list[str], cwd: Path, environment: dict[str, str], prompts_on_stderr: bool) -> Conversation:
    """Run `command`, answering each question with Enter (what it offers), as a user does, and record them."""
    printed = tempfile.TemporaryFile()  # noqa: SIM115 - read back below, once the command is done
    process = subprocess.Popen(  # noqa: S603 - the project's own preflight, and its pinned SAM CLI
        command,
        cwd=cwd,
        env=environment,
        stdin=subprocess.PIPE,
        stdout=printed if prompts_on_stderr else subprocess.PIPE,
        stderr=subprocess.PIPE if prompts_on_stderr else subprocess.STDOUT,
    )
    talking = process.stderr if prompts_on_stderr else process.stdout
    assert process.stdin is not None and talking is not None
    output, answered, prompts = b"", 0, []
    deadline = time.monotonic() + WAIT_SECONDS
    try:
        while True:
            ready, _, _ = select.select([talking], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                pytest.fail(f"{command[0]} said nothing more in {WAIT_SECONDS:.0f} s:\n{output.decode()}")
            chunk = os.read(talking.fileno(), 65536)
            if not chunk:
                break
            output += chunk
            waiting = PROMPT.search(output[answered:].decode(errors="replace"))
            if waiting is None:
                continue
            prompts.append((waiting["text"], waiting["default"] or ""))
            process.stdin.write(b"\n")
            process.stdin.flush()
            answered = len(output)
        returncode = process.wait(timeout=WAIT_SECONDS)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    printed.seek(0)
    with printed:
        return Conversation(prompts, output.decode(errors="replace"), returncode, printed.read().decode())


@dataclass
class FirstDeploy:
    preflight: Conversation
    sam: Conversation
    samconfig_before: str
    samconfig_after: str

    @property
    def questions(self) -> list[str]:
        return [text for text, _ in [*self.preflight.prompts, *self.sam.prompts]]


def first_deploy(directory: Path, endpoint: str, samconfig: str) -> FirstDeploy:
    """`make deploy`'s two steps on a copy of the project whose samconfig.toml is `samconfig`, and whose stack does
    not exist yet: the preflight on moto's AWS, then `sam deploy` with the flags it printed, with no AWS at all."""
    shutil.copy2(TEMPLATE, directory / TEMPLATE.name)
    (directory / SAMCONFIG.name).write_text(samconfig, encoding="utf-8")
    home = directory / "home"
    home.mkdir()
    on_moto, unset = aws_environment(endpoint, PROFILE_REGION)
    shell = {name: value for name, value in os.environ.items() if name not in unset and not name.startswith("AWS_")}
    preflight = converse(
        [sys.executable, "-m", "median_lambda", "deploy", "--preflight", "--config-file", str(directory / SAMCONFIG.name)],  # noqa: E501
        ROOT,
        {**shell, **on_moto},
        prompts_on_stderr=True,
    )  # fmt: skip
    assert preflight.returncode == 0, preflight.transcript
    # Nothing of this machine's AWS set-up, and no way to reach AWS: no credentials (the suite's fake ones would
    # send the CLI to AWS), no profile, no instance metadata to ask.
    offline = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "AWS_CONFIG_FILE": str(home / "no-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(home / "no-credentials"),
        "AWS_EC2_METADATA_DISABLED": "true",
        "SAM_CLI_TELEMETRY": "0",
    }
    sam = converse([str(SAM), "deploy", *preflight.printed.split()], directory, offline, prompts_on_stderr=False)
    return FirstDeploy(preflight, sam, samconfig, (directory / SAMCONFIG.name).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def key_secret(median_aws_endpoint: str) -> Iterator[None]:
    """The key's secret samconfig.toml names, in the profile's region on moto: a first deploy has created it."""
    _, secret = names()
    credential = run_credentials()  # the run's own: the local moto answers no other
    client = boto3.client(
        "secretsmanager",
        endpoint_url=median_aws_endpoint,
        region_name=PROFILE_REGION,
        aws_access_key_id=credential.access_key_id,
        aws_secret_access_key=credential.secret_access_key,
    )
    client.create_secret(Name=secret, SecretString="mk_test_key")
    yield
    client.delete_secret(SecretId=secret, ForceDeleteWithoutRecovery=True)


def names() -> tuple[str, str]:
    """The stack's name and its key's secret, as samconfig.toml's default section gives them."""
    config = deploy_config(SAMCONFIG)
    return str(config["stack_name"]), parameter_overrides(config)["MedianKeySecretName"]


def _sam_missing() -> None:
    if not SAM.exists():
        missing = (
            f"the pinned SAM CLI is not installed at {SAM} (make sam-cli makes it; make build and make validate do too)"
        )
        if os.environ.get(REQUIRE_ENV) == "required":
            pytest.fail(f"the SAM CLI's tests are required here ({REQUIRE_ENV}=required), but {missing}", pytrace=False)
        pytest.skip(f"sam deploy not run: {missing}")


@pytest.fixture(scope="module")
def without_region(tmp_path_factory: pytest.TempPathFactory, median_aws_endpoint: str, key_secret: None) -> FirstDeploy:
    """The first deploy of a project copied without a region (your profile's, asked by the first deploy)."""
    _sam_missing()
    samconfig = SAMCONFIG.read_text(encoding="utf-8")
    assert "region" not in tomllib.loads(samconfig)["default"]["global"]["parameters"]
    return first_deploy(tmp_path_factory.mktemp("first-deploy"), median_aws_endpoint, samconfig)


@pytest.fixture(scope="module")
def with_region(tmp_path_factory: pytest.TempPathFactory, median_aws_endpoint: str, key_secret: None) -> FirstDeploy:
    """The first deploy of a project copied with its region (`copier copy --data region=eu-west-1`)."""
    _sam_missing()
    samconfig = SAMCONFIG.read_text(encoding="utf-8")
    stack_line = next(line for line in samconfig.splitlines(keepends=True) if line.startswith("stack_name = "))
    samconfig = samconfig.replace(stack_line, f'{stack_line}region = "{PROFILE_REGION}"\n', 1)
    return first_deploy(tmp_path_factory.mktemp("first-deploy-region"), median_aws_endpoint, samconfig)


def test_the_first_deploy_asks_only_the_region_samconfig_lacks(without_region: FirstDeploy) -> None:
    # GIVEN a project's first deploy, as make deploy runs it, up to the first call the SAM CLI makes to AWS
    # THEN one question was asked: the region, offering the profile's; no parameter, no route's
    # authentication, no "save arguments", nothing samconfig.toml or the template already holds
    assert without_region.questions == ["AWS Region"], (
        without_region.preflight.transcript + without_region.sam.transcript
    )
    assert without_region.preflight.prompts == [("AWS Region", PROFILE_REGION)]
    # AND the SAM CLI asked nothing before it went to AWS, where it stopped for want of credentials
    assert without_region.sam.prompts == []
    assert without_region.sam.returncode == 1
    assert without_region.sam.transcript.strip() == "Error: Unable to locate credentials"


def test_the_answer_is_recorded_where_sam_deploy_reads_it_so_it_is_asked_once(without_region: FirstDeploy) -> None:
    # GIVEN samconfig.toml after the first deploy's question
    before, after = without_region.samconfig_before, without_region.samconfig_after
    # THEN it holds the region in its default section, and every other line as it was
    assert after == before.replace(
        "[default.global.parameters]\n", f'[default.global.parameters]\nregion = "{PROFILE_REGION}"\n', 1
    )
    # AND the one question left, after SAM has made the change set, is its confirmation
    assert tomllib.loads(after)["default"]["deploy"]["parameters"]["confirm_changeset"] is True


def test_a_project_copied_with_its_region_is_asked_nothing_before_the_change_set(with_region: FirstDeploy) -> None:
    # GIVEN a first deploy whose samconfig.toml holds the region too
    # THEN neither step asked anything, and samconfig.toml is as it was
    assert with_region.questions == [], with_region.preflight.transcript
    assert with_region.sam.transcript.strip() == "Error: Unable to locate credentials"
    assert with_region.samconfig_after == with_region.samconfig_before


def test_the_templates_parameters_are_only_what_differs_per_deployment() -> None:
    # GIVEN the template's Parameters, which `sam deploy --guided` would ask for, each
    declared = set(load_template(TEMPLATE)["Parameters"])
    # THEN they are what differs per deployment (and any a user's project has added of its own), and nothing the
    # template writes out: not the architecture, memory, timeout, namespace, retention, limits, thresholds
    assert declared >= PER_DEPLOYMENT
    assert declared.isdisjoint(WRITTEN_IN_THE_TEMPLATE), declared & set(WRITTEN_IN_THE_TEMPLATE)
