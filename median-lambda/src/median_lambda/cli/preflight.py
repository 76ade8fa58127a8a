"""Run by `median deploy` (make deploy) before `sam deploy`: stop with the fix instead of deploying an endpoint
Median refuses.

It checks, first and with no AWS call, the stage it deploys (samconfig.toml's `Stage=`, else the
template's default): that tools/settings.toml has it, and that every setting and secret's name
the tools take has a value in it, as `make check` does for every stage (a function deployed so
would refuse every request, or fail every call of a tool). Then that AWS credentials and a region
are set up, and that the secret named by MedianKeySecretName exists in that region (its value
is never read): without it, every request would be answered `500 no_key`. Before those, that
samconfig.toml passes no parameter the template does not have: sam deploy would drop it without
a word (FunctionMemorySize, say, which the template writes out now). It prints the flags
for `sam deploy`: `--guided` while the stack does not exist yet, so the first deploy asks for
the region and parameters and saves them in samconfig.toml; nothing once it does.
`median deploy --preflight` runs it alone, and prints those flags.
"""

from __future__ import annotations

import shlex
import sys
from typing import TYPE_CHECKING, Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, NoRegionError

from median_lambda.cli.checks import stage_problems
from median_lambda.cli.template_check import not_a_parameter
from median_lambda.project.sam_config import TEMPLATE, load_template, parameter_overrides

if TYPE_CHECKING:
    from pathlib import Path

SECRET_PARAMETER = "MedianKeySecretName"  # noqa: S105 - the parameter's name, not a secret
STAGE_PARAMETER = "Stage"
GUIDED = "--guided"
# A stack in these states cannot be updated; the message says what to do instead.
BLOCKED_STATES = {
    "ROLLBACK_COMPLETE": "its first deploy failed and was rolled back: run `make delete`, then `make deploy`",
    "ROLLBACK_FAILED": "a failed deploy could not be rolled back: see the stack's events, then `make delete`",
    "DELETE_FAILED": "deleting it failed: see the stack's events in the CloudFormation console",
}


class PreflightError(Exception):
    """A reason not to deploy, worded as what to do about it."""


def create_secret_hint(name: str, region: str) -> str:
    return (
        f"Create it (README, Deploy) with:\n"
        f"  aws secretsmanager create-secret --region {region} --name {shlex.quote(name)} "
        "--secret-string file://median-key.txt\n"
        f"or set {SECRET_PARAMETER} in samconfig.toml to the name of the secret that holds your Median key."
    )


def check_secret(session: boto3.Session, name: str) -> None:
    region = session.region_name
    try:
        secret = session.client("secretsmanager").describe_secret(SecretId=name)
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        if code == "ResourceNotFoundException":
            raise PreflightError(
                f"The secret {name!r} does not exist in {region}.\n{create_secret_hint(name, region)}"
            ) from None
        if code in ("AccessDeniedException", "AccessDenied"):
            print(f"note: not allowed to look up the secret {name!r}; deploying without that check.", file=sys.stderr)
            return
        raise
    if secret.get("DeletedDate"):
        raise PreflightError(
            f"The secret {name!r} in {region} is scheduled for deletion: restore it with\n"
            f"  aws secretsmanager restore-secret --region {region} --secret-id {shlex.quote(name)}"
        )


def stack_exists(session: boto3.Session, stack_name: str) -> bool:
    try:
        stacks = session.client("cloudformation").describe_stacks(StackName=stack_name)["Stacks"]
    except ClientError as error:
        if "does not exist" in str(error):
            return False
        raise
    status = stacks[0]["StackStatus"]
    if status in BLOCKED_STATES:
        raise PreflightError(f"The stack {stack_name!r} is {status}: {BLOCKED_STATES[status]}.")
    if status.endswith("_IN_PROGRESS"):
        raise PreflightError(f"The stack {stack_name!r} is {status}: wait until it settles, then run `make deploy`.")
    return True


def deployed_stage(config: dict[str, Any], template: Path = TEMPLATE) -> str:
    """The stage this deploy deploys: its config's Stage= override, else the template's default."""
    named = parameter_overrides(config).get(STAGE_PARAMETER, "").strip()
    return named or str(load_template(template)["Parameters"][STAGE_PARAMETER]["Default"])


def check_stage(stage: str) -> None:
    """PreflightError naming every problem of the tools in a function deployed as `stage`."""
    problems = stage_problems(stage)
    if problems:
        listed = "\n".join(f"  {problem}" for problem in problems)
        raise PreflightError(
            f"This deploy deploys stage {stage}, where the tools would not serve:\n{listed}\n"
            "Fix each (make check shows every stage and the value each gets), then make deploy again."
        )


def check_overrides(config: dict[str, Any], template: Path = TEMPLATE) -> None:
    """PreflightError naming each value samconfig.toml passes for a parameter the template does not have."""
    parameters = load_template(template).get("Parameters", {})
    lost = [(name, value) for name, value in parameter_overrides(config).items() if name not in parameters]
    if lost:
        listed = "\n".join(f"  {name}={value}, {not_a_parameter(name)}" for name, value in lost)
        raise PreflightError(f"samconfig.toml's parameter_overrides for this deploy pass:\n{listed}")


def preflight(config: dict[str, Any], template: Path = TEMPLATE) -> list[str]:
    """The flags for `sam deploy`, or PreflightError."""
    check_overrides(config, template)
    check_stage(deployed_stage(config, template))
    session = boto3.Session(profile_name=config.get("profile"), region_name=config.get("region"))
    if not session.region_name:
        raise PreflightError(
            "No AWS region is set: `aws configure set region <region>`, export AWS_REGION, "
            "or set region in samconfig.toml's deploy section."
        )
    secret_name = parameter_overrides(config).get(SECRET_PARAMETER, "").strip()
    stack_name = str(config.get("stack_name", "")).strip()
    try:
        if secret_name:
            check_secret(session, secret_name)
        exists = bool(stack_name) and stack_exists(session, stack_name)
    except (NoCredentialsError, NoRegionError):
        raise PreflightError(
            "No AWS credentials found: run `aws configure` or `aws sso login`, or set AWS_PROFILE."
        ) from None
    except ClientError as error:
        raise PreflightError(f"AWS refused a check: {error}") from None
    except BotoCoreError as error:
        raise PreflightError(f"Could not reach AWS: {error}") from None
    if not secret_name:
        print(f"note: samconfig.toml names no {SECRET_PARAMETER}; the guided deploy will ask for it.", file=sys.stderr)
        return [GUIDED]
    return [] if exists else [GUIDED]
