"""The names a deploy is given, held to what AWS, GitHub and YAML take: samconfig.toml's stages and stacks.

Each config-env of samconfig.toml but `default` is a stage of the GitHub pipeline: a job and an
environment of .github/workflows/deploy.yml, which `copier copy` writes with its name unquoted, and
a stack, `stack_name`, whose resources pipeline/oidc-role.yaml's roles name by the stack's name. So a
stage's name is refused when it is

- not 1 to 16 lowercase letters, digits or -, starting with a letter (the template's Stage parameter);
- one of the deploy workflow's own jobs (`checks`): the workflow would hold that key twice;
- a word YAML reads as something other than a string (`null`, `true`, `on`, ...): the workflow's job
  and environment would have no name GitHub takes;

and a stack's name when it is not CloudFormation's letters, digits and - (the whole of it: a regular
expression's `$` also matches before a trailing newline, which samconfig.toml would then hold), or
when, for a stage, it is too long for a name CloudFormation generates from it to stay whole:
`<stack>-MedianToolsFunctionRole-<13 characters>` is an IAM role's name, at most 64 characters, and
CloudFormation cuts a longer one, after which the pipeline's exact pattern for it
(`${AppStackName}-MedianToolsFunctionRole-*`) no longer matches, and every deploy is denied. The
longest stack name is read from the pipeline's own patterns (`longest_stack_name`), so a role or a
queue you add there is held too.

copier.yml refuses the same names where they are chosen (`copier copy`: its questions' rules, in
copier-rules.j2, ask again at the prompt and stop an answer given with --data in one line), the
stack's name held to the longest of its stages; `make check` (and so the build) refuses them where
they may be edited later, in samconfig.toml. The tests hold the two to these rules
(tests/unit/test_deploy_names.py, tests/template/test_copier.py).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import yaml

# The deploy workflow's jobs beside one per stage (.github/workflows/deploy.yml).
RESERVED_JOBS = ("checks",)
# samconfig.toml's own config-env: `make deploy`'s, never a pipeline stage.
DEFAULT_CONFIG_ENV = "default"
STAGE_RULE = re.compile(r"\A[a-z][a-z0-9-]{0,15}\Z")
STACK_RULE = re.compile(r"\A[A-Za-z][A-Za-z0-9-]*\Z")
STACK_NAME_LIMIT = 128  # CloudFormation's own
# The words YAML 1.1's bool and null types read as no string (its specification's regular expressions), that
# a stage's own rule (lowercase, a letter first) lets through. YAML 1.2, which GitHub reads, keeps only true,
# false and null of them; PyYAML, y and n as strings. Refused all the same: each would be a job and an
# environment with no name to some YAML reader.
YAML_NON_STRINGS = ("y", "yes", "n", "no", "true", "false", "on", "off", "null")
# The most characters CloudFormation appends to a name it generates, "<stack>-<LogicalId>-<suffix>".
GENERATED_SUFFIX = 13
PIPELINE_STACK = "${AppStackName}"
# AWS's longest name for each kind of resource, by its ARN's service and resource type ("" where the
# ARN has no type: arn:aws:sqs:<region>:<account>:<name>).
NAME_LIMITS = {
    ("iam", "role"): 64,
    ("iam", "policy"): 128,
    ("lambda", "function"): 64,
    ("sqs", ""): 80,
    ("sns", ""): 256,
    ("dynamodb", "table"): 255,
    ("logs", "log-group"): 512,
    ("codedeploy", "application"): 100,
    ("codedeploy", "deploymentgroup"): 100,
    ("cloudwatch", "alarm"): 255,
    ("cloudwatch", "dashboard"): 255,
    ("cloudformation", "stack"): 128,
    ("secretsmanager", "secret"): 512,
    ("ssm", "parameter"): 2048,
}
KIND_NAMES = {
    ("iam", "role"): "an IAM role's name",
    ("iam", "policy"): "an IAM policy's name",
    ("lambda", "function"): "a Lambda function's name",
    ("sqs", ""): "an SQS queue's name",
    ("sns", ""): "an SNS topic's name",
    ("dynamodb", "table"): "a DynamoDB table's name",
    ("logs", "log-group"): "a log group's name",
    ("codedeploy", "application"): "a CodeDeploy application's name",
    ("codedeploy", "deploymentgroup"): "a CodeDeploy deployment group's name",
    ("cloudwatch", "alarm"): "an alarm's name",
    ("cloudwatch", "dashboard"): "a dashboard's name",
    ("cloudformation", "stack"): "a stack's name",
    ("secretsmanager", "secret"): "a secret's name",
    ("ssm", "parameter"): "a parameter's name",
}


@dataclass(frozen=True)
class Longest:
    """The longest stack name whose named resources all stay whole, and the name that sets it."""

    length: int
    because: str = ""


def yaml_reads_as_a_name(word: str) -> bool:
    """Whether a YAML reader takes the unquoted word as a string (GitHub reads the deploy workflow with one)."""
    return word.lower() not in YAML_NON_STRINGS and isinstance(yaml.safe_load(word), str)


def stage_problem(name: str) -> str | None:
    """Why a stage of this name cannot deploy through the pipeline, or None."""
    if not STAGE_RULE.match(name):
        return f"{name!r}: a stage is 1 to 16 lowercase letters, digits or -, starting with a letter"
    if name in RESERVED_JOBS:
        return (
            f"{name!r} is the deploy workflow's own job (.github/workflows/deploy.yml): a stage of that name "
            "would be a second job under the same key. Name the stage otherwise"
        )
    if not yaml_reads_as_a_name(name):
        return (
            f"{name!r} is {_as_yaml_reads_it(name)} to YAML, not a name: the deploy workflow's job and GitHub "
            "environment for it would have none. Name the stage otherwise"
        )
    return None


def _as_yaml_reads_it(word: str) -> str:
    value = yaml.safe_load(word)
    if value is None:
        return "null"
    if isinstance(value, bool) or word.lower() in YAML_NON_STRINGS:
        return "a boolean"
    return f"a {type(value).__name__}"


def stack_problem(name: str, longest: Longest) -> str | None:
    """Why a stack of this name cannot deploy, or None; `longest` is what the pipeline's patterns allow."""
    if not STACK_RULE.match(name):
        return f"stack_name {name!r}: a stack's name is letters, digits and -, starting with a letter"
    if len(name) > longest.length:
        return (
            f"stack_name {name!r} is {len(name)} characters, and at most {longest.length} deploy: "
            f"{longest.because}. Shorten the stack's name"
        )
    return None


def longest_stack_name(role_template: dict[str, Any] | None) -> Longest:
    """The longest stack name for which every name pipeline/oidc-role.yaml gives by it stays within AWS's limit."""
    longest = Longest(STACK_NAME_LIMIT, f"CloudFormation's limit on a stack's name is {STACK_NAME_LIMIT}")
    for pattern, kind in _named_by_the_stack(role_template or {}):
        fixed = len(pattern) - len(PIPELINE_STACK)
        generated = pattern.endswith("-*")
        if generated:  # "${AppStackName}-<LogicalId>-*": CloudFormation's suffix in place of the "*"
            fixed += GENERATED_SUFFIX - 1
        limit = NAME_LIMITS[kind]
        if limit - fixed < longest.length:
            shown = pattern.replace(PIPELINE_STACK, "<stack>").replace("-*", f"-<{GENERATED_SUFFIX} characters>")
            cut = (
                f"cuts a longer one, which pipeline/oidc-role.yaml's {pattern} then no longer matches"
                if generated
                else "refuses a longer one"
            )
            because = (
                f"CloudFormation names a resource {shown}, {KIND_NAMES[kind]} of at most {limit} characters, and {cut}"
            )
            longest = Longest(limit - fixed, because)
    return longest


def _named_by_the_stack(document: Any) -> list[tuple[str, tuple[str, str]]]:
    """Each name pipeline/oidc-role.yaml writes with the stage's stack name in it, and its kind of resource."""
    found: list[tuple[str, tuple[str, str]]] = []
    if isinstance(document, dict):
        resources = document.get("Resources")
        for resource in resources.values() if isinstance(resources, dict) else ():
            if isinstance(resource, dict) and resource.get("Type") == "AWS::IAM::ManagedPolicy":
                name = _text(resource.get("Properties", {}).get("ManagedPolicyName"))
                if name and name.startswith(PIPELINE_STACK):
                    found.append((name, ("iam", "policy")))
    for text in _texts(document):
        found += _arn_names(text)
    return found


def _texts(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [text for item in value.values() for text in _texts(item)]
    if isinstance(value, list):
        return [text for item in value for text in _texts(item)]
    return [value] if isinstance(value, str) and value.startswith("arn:") else []


def _text(value: Any) -> str | None:
    if isinstance(value, dict) and list(value) == ["Fn::Sub"] and isinstance(value["Fn::Sub"], str):
        return str(value["Fn::Sub"])
    return value if isinstance(value, str) else None


def _arn_names(arn: str) -> list[tuple[str, tuple[str, str]]]:
    """The names in an ARN (pattern) that start with the stage's stack name, each with its kind, if AWS limits it."""
    parts = re.sub(r"\$\{AWS::[A-Za-z]+\}", "x", arn).split(":", 5)  # no pseudo parameter's "::" left
    if len(parts) < 6 or PIPELINE_STACK not in parts[5]:
        return []
    service, resource = parts[2], parts[5]
    kind, names = (service, ""), resource
    if (service, "") not in NAME_LIMITS:
        found = re.match(r"(?P<type>[a-z-]+)[:/](?P<names>.*)", resource)
        if found is None:
            return []
        kind, names = (service, found["type"]), found["names"]
    if kind not in NAME_LIMITS:
        return []
    # A deployment group's ARN names its application first; a function's or log group's, a qualifier after.
    segments = re.split(r"[/:]", names)
    return [(segment, kind) for segment in segments if segment.startswith(PIPELINE_STACK)]


def config_env_problems(document: dict[str, Any], longest: Longest) -> list[str]:
    """What in samconfig.toml cannot deploy: its stages' names, and its stacks' names (`make deploy`'s held
    to CloudFormation's rules alone: no pipeline names its resources); `longest` is longest_stack_name's."""
    problems: list[str] = []
    for name, sections in document.items():
        if not isinstance(sections, dict) or ("deploy" not in sections and name != DEFAULT_CONFIG_ENV):
            continue
        # As TOML writes the table's name: quoted when it is not a bare key.
        where = f"samconfig.toml [{name if re.fullmatch(r'[A-Za-z0-9_-]+', name) else json.dumps(name)}]"
        pipeline_stage = name != DEFAULT_CONFIG_ENV
        named = stage_problem(name) if pipeline_stage else None
        if named:
            problems.append(f"{where}: {named}")
        config = {
            **sections.get("global", {}).get("parameters", {}),
            **sections.get("deploy", {}).get("parameters", {}),
        }
        stack = config.get("stack_name")
        if not isinstance(stack, str):  # none yet: the deploy asks for it, and it is held to these rules then
            continue
        unfit = stack_problem(stack, longest if pipeline_stage else Longest(STACK_NAME_LIMIT))
        if unfit:
            problems.append(f"{where}: {unfit}")
    return problems
