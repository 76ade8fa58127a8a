"""The first `sam deploy --guided` asks only what differs per deployment: the pinned SAM CLI, run as a user runs it.

`make deploy` runs `sam deploy --guided` while the stack does not exist. The SAM CLI asks for every
one of template.yaml's Parameters, with no way to skip one (samcli's GuidedContext.prompt_parameters),
so what it asks is what the template declares: here it is run, from .venv/sam-cli (the SAM CLI
tooling/sam-cli.py.lock pins, which builds and deploys), on a copy of the project, offline and with
no credentials. It prompts first, each prompt answered as docs/deploy.md says (the defaults, and `y`
to the question about authentication), then fails at its first AWS call, so the test reads the
whole conversation a user has before anything reaches AWS.

The SAM CLI's venv is not the test suite's: `make sam-cli` (or `make build`, `make validate`) makes
it. Where it is absent these tests skip, saying so; .ci/run and the Checks workflow make it first and
set MEDIAN_SAM_CLI_TESTS=required, which turns that skip into a failure.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from median_lambda.cli.template_check import WRITTEN_IN_THE_TEMPLATE
from median_lambda.project.sam_config import SAMCONFIG, TEMPLATE, deploy_config, load_template, parameter_overrides

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
    "AlarmEmail",  # who is paged, per stage
    "DeploymentType",  # all at once in staging, a canary in production
    "ParametersSecretsExtensionLayerArn",  # AWS's for the region, `none` under sam local, pinned where unmapped
    "PermissionsBoundaryPolicy",  # the pipeline's per stage, none for an administrator
}
# A prompt: click writes "\t<text> [<default>]: " and waits for a line (bold codes on a terminal only).
PROMPT = re.compile(r"\t(?:\x1b\[1m)?(?P<text>[^\t\n]+?)(?:\x1b\[0m)? \[(?P<default>[^\]\n]*)\]: $")
PARAMETER = re.compile(r"^Parameter (?P<name>\w+)$")
NO_AUTHENTICATION = "has no authentication. Is this okay?"
WAIT_SECONDS = 180.0  # the CLI's first start compiles its modules; a prompt comes in seconds after


def _missing() -> str | None:
    if not SAM.exists():
        return (
            f"the pinned SAM CLI is not installed at {SAM} (make sam-cli makes it; make build and make validate do too)"
        )
    return None


@pytest.fixture(scope="module")
def guided(tmp_path_factory: pytest.TempPathFactory) -> Conversation:
    missing = _missing()
    if missing is not None:
        if os.environ.get(REQUIRE_ENV) == "required":
            pytest.fail(f"the SAM CLI's tests are required here ({REQUIRE_ENV}=required), but {missing}", pytrace=False)
        pytest.skip(f"sam deploy --guided not run: {missing}")
    return converse(tmp_path_factory.mktemp("guided"))


class Conversation:
    """What `sam deploy --guided` asked, in order (each prompt's text and the default it offered), and said."""

    def __init__(self, prompts: list[tuple[str, str]], transcript: str, returncode: int, project: Path) -> None:
        self.prompts = prompts
        self.transcript = transcript
        self.returncode = returncode
        self.project = project

    @property
    def parameters(self) -> dict[str, str]:
        """Each `Parameter X` prompt's parameter, and the default it offered."""
        return {found["name"]: default for text, default in self.prompts if (found := PARAMETER.match(text))}


def converse(directory: Path) -> Conversation:
    """Run the pinned `sam deploy --guided` in a copy of the project, answering each prompt as docs/deploy.md says."""
    for each in (TEMPLATE, SAMCONFIG):
        shutil.copy2(each, directory / each.name)
    home = directory / "home"
    home.mkdir()
    # Nothing of this machine's AWS set-up, and no way to reach AWS: a dummy region, no credentials
    # (the suite's fake ones would send the CLI to AWS), no instance metadata to ask.
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "AWS_DEFAULT_REGION": "eu-west-1",
        "AWS_CONFIG_FILE": str(home / "no-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(home / "no-credentials"),
        "AWS_EC2_METADATA_DISABLED": "true",
        "SAM_CLI_TELEMETRY": "0",
    }
    process = subprocess.Popen(  # noqa: S603 - the project's own pinned SAM CLI
        [str(SAM), "deploy", "--guided"],
        cwd=directory,
        env=environment,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert process.stdin is not None and process.stdout is not None
    output, answered, prompts = b"", 0, []
    deadline = time.monotonic() + WAIT_SECONDS
    try:
        while True:
            ready, _, _ = select.select([process.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                pytest.fail(f"sam deploy --guided said nothing more in {WAIT_SECONDS:.0f} s:\n{output.decode()}")
            chunk = os.read(process.stdout.fileno(), 65536)
            if not chunk:
                break
            output += chunk
            waiting = PROMPT.search(output[answered:].decode(errors="replace"))
            if waiting is None:
                continue
            prompts.append((waiting["text"], waiting["default"]))
            # The defaults, and `y` where the CLI asks whether an endpoint without IAM auth is fine:
            # Median's signature is the authentication (docs/deploy.md).
            process.stdin.write(b"y\n" if NO_AUTHENTICATION in waiting["text"] else b"\n")
            process.stdin.flush()
            answered = len(output)
        returncode = process.wait(timeout=WAIT_SECONDS)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return Conversation(prompts, output.decode(errors="replace"), returncode, directory)


def test_the_guided_deploy_asks_for_each_per_deployment_parameter_and_nothing_written_in_the_template(
    guided: Conversation,
) -> None:
    # GIVEN the first `sam deploy --guided` of a stack, as make deploy runs it
    asked = set(guided.parameters)
    # THEN the parameters it asks for are exactly what differs per deployment (and any a user's
    # project has added of its own), each once
    declared = set(load_template(TEMPLATE)["Parameters"])
    users_own = declared - PER_DEPLOYMENT
    assert asked == PER_DEPLOYMENT | users_own, guided.transcript
    assert len(guided.parameters) == sum(1 for text, _ in guided.prompts if PARAMETER.match(text))
    # AND nothing the template writes out is asked: not the architecture, memory, timeout, namespace,
    # retention, limits, thresholds nor SnapStart
    assert asked.isdisjoint(WRITTEN_IN_THE_TEMPLATE), asked & set(WRITTEN_IN_THE_TEMPLATE)


def test_each_parameter_is_offered_with_samconfigs_value_else_the_templates_default(guided: Conversation) -> None:
    # GIVEN the defaults the guided deploy offered, which a user accepts with Enter
    declared = load_template(TEMPLATE)["Parameters"]
    saved = parameter_overrides(deploy_config(SAMCONFIG))
    # THEN each is samconfig.toml's value (the secret's name) or else the template's default
    for name, offered in guided.parameters.items():
        assert offered == saved.get(name, str(declared[name].get("Default", ""))), name


def test_the_conversation_ends_at_the_first_aws_call_and_saves_nothing(guided: Conversation) -> None:
    # GIVEN the whole conversation, answered as docs/deploy.md says
    texts = [text for text, _ in guided.prompts]
    # THEN it asked the stack's name and region first, then the parameters, then SAM's own questions,
    # with `y` accepted for the unauthenticated routes (Median's signature is the authentication)
    assert texts[:2] == ["Stack Name", "AWS Region"]
    assert any(NO_AUTHENTICATION in text for text in texts)
    assert texts[-3:] == [
        "Save arguments to configuration file",
        "SAM configuration file",
        "SAM configuration environment",
    ]
    # AND only then it looked for AWS, and stopped there for want of credentials
    assert guided.returncode == 1
    after = guided.transcript.split("Looking for resources needed for deployment", 1)
    assert len(after) == 2, guided.transcript
    assert "Unable to locate credentials" in after[1]
    # AND the copy's samconfig.toml is as it was: nothing was saved from a deploy that never ran
    assert (guided.project / SAMCONFIG.name).read_bytes() == SAMCONFIG.read_bytes()
