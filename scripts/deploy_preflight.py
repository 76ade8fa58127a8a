"""Run by `make deploy` before `sam deploy`: stop with the fix instead of deploying an endpoint Median refuses,
and ask for what samconfig.toml lacks, and only that.

It checks, first and with no AWS call, the stage it deploys (samconfig.toml's `Stage=`, else the
template's default): that tools/settings.toml has it, and that every setting and secret's name
the tools take has a value in it, as `make check` does for every stage (a function deployed so
would refuse every request, or fail every call of a tool). Before those, that samconfig.toml
passes no parameter the template does not have: sam deploy would drop it without a word
(FunctionMemorySize, say, which the template writes out now).

Then what the deploy needs that samconfig.toml does not hold: the region (`copier copy` leaves it
empty for your profile's), and the stack's name or a Parameter with no default, if either is
gone. It asks for each on the terminal, offering your profile's region, and records the answers
in samconfig.toml's section for the config-env, so it asks once. `sam deploy --guided` would ask
18 to 20 questions for the same (every Parameter, the authentication of each route, whether to
save), with no way to skip one it already has an answer for (samcli's GuidedContext).

Then that AWS credentials work, and that the secret named by MedianKeySecretName exists in that
region (its value is never read): without it, every request would be answered `500 no_key`. And
the stack's state. It prints the flags for `sam deploy`, none: samconfig.toml holds the rest, so
`sam deploy` asks only to confirm the change set it shows (`confirm_changeset`).

    python -m scripts.deploy_preflight [--config samconfig.toml] [--config-env default]
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, NoRegionError

from scripts.check_template import not_a_parameter
from scripts.deploy_names import STACK_RULE
from scripts.sam_settings import SAMCONFIG, TEMPLATE, deploy_config, load_template, parameter_overrides

SECRET_PARAMETER = "MedianKeySecretName"  # noqa: S105 - the parameter's name, not a secret
STAGE_PARAMETER = "Stage"
REGION_RULE = re.compile(r"\A[a-z]{2}(-gov)?-[a-z]+-[0-9]\Z")  # copier.yml's region question holds the same
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
    from handler.cli.commands import stage_problems

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


@dataclass(frozen=True)
class Missing:
    """A value the deploy needs that samconfig.toml lacks: asked for once, and recorded."""

    label: str  # the question, as the SAM CLI words its own
    section: str  # samconfig.toml's section for it: global (every command) or deploy
    key: str  # stack_name, region, or a Parameter's name (one of parameter_overrides)
    default: str = ""
    pattern: re.Pattern[str] | None = None
    max_length: int | None = None
    rule: str = "a value"  # what a fitting answer is, as "'x' is not <rule>" says it

    def fits(self, answer: str) -> bool:
        return (
            bool(answer)
            and (self.pattern is None or self.pattern.fullmatch(answer) is not None)
            and (self.max_length is None or len(answer) <= self.max_length)
        )


def missing_values(config: dict[str, Any], template: Path, default_region: str | None) -> list[Missing]:
    """What `sam deploy` would need and samconfig.toml does not hold, in the order it is asked."""
    missing = []
    if not str(config.get("stack_name", "")).strip():
        rule = "a stack name: letters, digits and -, starting with a letter"
        missing.append(Missing("Stack Name", "global", "stack_name", pattern=STACK_RULE, max_length=128, rule=rule))
    if not str(config.get("region", "")).strip():
        rule = "an AWS region, such as eu-west-1"
        missing.append(Missing("AWS Region", "global", "region", default_region or "", REGION_RULE, rule=rule))
    given = parameter_overrides(config)
    for name, spec in load_template(template).get("Parameters", {}).items():
        if "Default" in spec or given.get(name, "").strip():
            continue
        allowed = spec.get("AllowedPattern")
        missing.append(
            Missing(
                f"Parameter {name}",
                "deploy",
                name,
                pattern=re.compile(str(allowed)) if allowed else None,
                max_length=int(spec["MaxLength"]) if "MaxLength" in spec else None,
                rule=str(spec.get("ConstraintDescription", "a value of its AllowedPattern")).rstrip("."),
            )
        )
    return missing


def ask(missing: Missing, answers: IO[str], config_env: str = "default") -> str:
    """One question on the terminal (on stderr: stdout carries the flags), answered on `answers`."""
    offered = f" [{missing.default}]" if missing.default else ""
    print(f"\t{missing.label}{offered}: ", end="", file=sys.stderr, flush=True)
    try:
        line = answers.readline()
    except OSError:  # no terminal at all: as a closed one
        line = ""
    if not line:
        raise PreflightError(
            f"samconfig.toml has no {missing.key}, and there is no terminal to ask for it on: "
            f"set {missing.key} in its [{config_env}.{missing.section}.parameters] section."
        )
    answer = line.strip() or missing.default
    if not missing.fits(answer):
        raise PreflightError(f"{answer!r} is not {missing.rule}: nothing was recorded.")
    return answer


def record(samconfig: Path, config_env: str, answers: dict[Missing, str]) -> None:
    """Write the answers into samconfig.toml's sections for `config_env`, where `sam deploy` reads them: each line
    set or added, the rest of the file as it was; PreflightError, and nothing written, if it would not read back."""
    text = samconfig.read_text(encoding="utf-8") if samconfig.exists() else ""
    lines = text.splitlines(keepends=True)
    for missing, answer in answers.items():
        if missing.section == "global":
            lines = _set_line(lines, f"{config_env}.global.parameters", missing.key, json.dumps(answer))
    pairs = [
        f"{missing.key}={json.dumps(answer)}" for missing, answer in answers.items() if missing.section == "deploy"
    ]
    if pairs:
        written = tomllib.loads(text).get(config_env, {}).get("deploy", {}).get("parameters", {})
        overrides = str(written.get("parameter_overrides", ""))
        lines = _set_line(
            lines,
            f"{config_env}.deploy.parameters",
            "parameter_overrides",
            json.dumps(" ".join([overrides, *pairs]).strip()),
        )
    recorded = "".join(lines)
    try:
        sections = tomllib.loads(recorded).get(config_env, {})
    except tomllib.TOMLDecodeError:  # a value written over several lines, which this does not edit
        sections = {}
    read = {**sections.get("global", {}).get("parameters", {}), **sections.get("deploy", {}).get("parameters", {})}
    for missing, answer in answers.items():
        if (
            read.get(missing.key) if missing.section == "global" else parameter_overrides(read).get(missing.key)
        ) != answer:
            table = f"[{config_env}.{missing.section}.parameters]"
            raise PreflightError(f"Could not record {missing.key} in {samconfig.name}: set it in its {table} yourself.")
    samconfig.write_text(recorded, encoding="utf-8")


def _set_line(lines: list[str], table: str, key: str, value: str) -> list[str]:
    """`key = value` in the TOML table `table`: its line replaced, or added first in the table, or a new table."""
    header = re.compile(r"^\s*\[\s*(?P<name>[^\[\]]+?)\s*\]\s*(#.*)?$")
    assignment = re.compile(rf"^\s*{re.escape(key)}\s*=")
    inside, start = False, None
    for number, line in enumerate(lines):
        found = header.match(line)
        if found:
            inside = re.sub(r"\s", "", found["name"]) == table
            if inside:
                start = number + 1
            continue
        if inside and assignment.match(line):
            return [*lines[:number], f"{key} = {value}\n", *lines[number + 1 :]]
    if start is not None:
        return [*lines[:start], f"{key} = {value}\n", *lines[start:]]
    ending = "" if not lines or lines[-1].endswith("\n") else "\n"
    return [*lines, f"{ending}\n[{table}]\n{key} = {value}\n"]


def preflight(
    config: dict[str, Any],
    template: Path = TEMPLATE,
    *,
    samconfig: Path | None = None,
    config_env: str = "default",
    answers: IO[str] | None = None,
) -> list[str]:
    """The flags for `sam deploy`, or PreflightError; what samconfig.toml lacks is asked on `answers` and recorded."""
    check_overrides(config, template)
    check_stage(deployed_stage(config, template))
    try:
        profile_region = boto3.Session(profile_name=config.get("profile")).region_name
    except BotoCoreError:  # no such profile: said by the credentials' check below
        profile_region = None
    missing = missing_values(config, template, profile_region)
    if missing:
        asked = {each: ask(each, answers if answers is not None else sys.stdin, config_env) for each in missing}
        if samconfig is not None:
            record(samconfig, config_env, asked)
            recorded = ", ".join(f"{each.key} = {answer}" for each, answer in asked.items())
            print(f"Recorded in {samconfig.name} [{config_env}]: {recorded}. Commit it.", file=sys.stderr)
        config = {**config, **{each.key: answer for each, answer in asked.items() if each.section == "global"}}
        overrides = {each.key: answer for each, answer in asked.items() if each.section == "deploy"}
        if overrides:
            pairs = " ".join(f"{name}={shlex.quote(value)}" for name, value in overrides.items())
            config["parameter_overrides"] = f"{config.get('parameter_overrides', '')} {pairs}".strip()
    session = boto3.Session(profile_name=config.get("profile"), region_name=config.get("region"))
    secret_name = parameter_overrides(config).get(SECRET_PARAMETER, "").strip()
    stack_name = str(config.get("stack_name", "")).strip()
    try:
        if secret_name:
            check_secret(session, secret_name)
        exists = stack_exists(session, stack_name)
    except (NoCredentialsError, NoRegionError):
        raise PreflightError(
            "No AWS credentials found: run `aws configure` or `aws sso login`, or set AWS_PROFILE."
        ) from None
    except ClientError as error:
        raise PreflightError(f"AWS refused a check: {error}") from None
    except BotoCoreError as error:
        raise PreflightError(f"Could not reach AWS: {error}") from None
    if not exists:
        print(
            f"First deploy of {stack_name} to {session.region_name}: sam deploy shows what it creates, and asks you "
            "to confirm it.",
            file=sys.stderr,
        )
    return []


def main(argv: list[str] | None = None) -> int:
    options = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    options.add_argument("--config", type=Path, default=SAMCONFIG, help="samconfig.toml to read")
    options.add_argument("--config-env", default="default", help="its environment (sam's --config-env)")
    options.add_argument("--template", type=Path, default=TEMPLATE, help="the SAM template it deploys")
    arguments = options.parse_args(argv)
    try:
        config = deploy_config(arguments.config, arguments.config_env)
        flags = preflight(config, arguments.template, samconfig=arguments.config, config_env=arguments.config_env)
    except (PreflightError, ValueError, OSError) as error:
        print(f"Not deploying. {error}", file=sys.stderr)
        return 1
    print(" ".join(flags))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
