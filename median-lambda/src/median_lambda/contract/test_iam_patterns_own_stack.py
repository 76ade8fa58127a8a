"""Every IAM resource pattern, in template.yaml and pipeline/oidc-role.yaml, reaches its own stack's resources only.

Stack names are letters, digits and `-`, so `<stack>-*` also matches every resource of stack
`<stack>-eu` (and `<stack>*` those of `<stack>2`): a stage's function could write a neighbour
stage's logs and call records, and a stage's CloudFormation role could delete its roles. Each
pattern here is held against the names a neighbour stack's resources get, as CloudFormation
names them: `<stack>-<LogicalId>-<suffix>` where the template names none, the template's own
names (alarms, the dashboard) where it does, and the conventions the docs give (secrets
`<stack>/...`, parameters under `/<stack>/`).

Where CloudFormation generates the name, the patterns name the logical id: IAM's wildcards have
no character class, so only a neighbour whose own name is `<stack>-<LogicalId>` (a stack called
`median-tools-IdempotencyTable`) would still match. The second half of each test holds the other
direction: every resource the stack holds is reached by the pattern meant for it, so a narrowed
pattern never turns a deploy into an AccessDenied.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest

from median_lambda.contract.test_permissions_boundary import ROLE_TEMPLATE, as_list
from median_lambda.contract.test_pipeline_role import CREATED_BY
from median_lambda.project.sam_config import load_template
from median_lambda.testing.template import ACCOUNT_ID, REGION, STACK_NAME, Stack, translated

# Stacks whose names start with this one's: another stage, region or copy in the same account.
NEIGHBOURS = (f"{STACK_NAME}-eu", f"{STACK_NAME}-staging", f"{STACK_NAME}-2", f"{STACK_NAME}2", f"{STACK_NAME}-dev-eu")
SUFFIX = "1A2B3C4D5E6F"  # the random part CloudFormation appends to a name it generates
# How an ARN names a resource of each type the stack holds, from its name.
ARN_OF = {
    "AWS::DynamoDB::Table": ("arn:aws:dynamodb:{region}:{account}:table/{name}",),
    "AWS::Logs::LogGroup": (
        "arn:aws:logs:{region}:{account}:log-group:{name}",
        "arn:aws:logs:{region}:{account}:log-group:{name}:*",
        "arn:aws:logs:{region}:{account}:log-group:{name}:log-stream:2026/12/01/[$LATEST]abc",
    ),
    "AWS::Lambda::Function": (
        "arn:aws:lambda:{region}:{account}:function:{name}",
        "arn:aws:lambda:{region}:{account}:function:{name}:live",
    ),
    "AWS::IAM::Role": ("arn:aws:iam::{account}:role/{name}",),
    "AWS::SNS::Topic": ("arn:aws:sns:{region}:{account}:{name}",),
    "AWS::SQS::Queue": ("arn:aws:sqs:{region}:{account}:{name}",),
    "AWS::CloudWatch::Alarm": ("arn:aws:cloudwatch:{region}:{account}:alarm:{name}",),
    "AWS::CloudWatch::Dashboard": ("arn:aws:cloudwatch::{account}:dashboard/{name}",),
    "AWS::CodeDeploy::Application": ("arn:aws:codedeploy:{region}:{account}:application:{name}",),
    "AWS::CodeDeploy::DeploymentGroup": ("arn:aws:codedeploy:{region}:{account}:deploymentgroup:{name}",),
}
# The name property, where a type has one the template may set.
NAME_PROPERTY = {"AWS::CloudWatch::Alarm": "AlarmName", "AWS::CloudWatch::Dashboard": "DashboardName"}
# What the docs' conventions name after the stack: its secrets and its parameters.
CONVENTIONS = (
    "arn:aws:secretsmanager:{region}:{account}:secret:{stack}/median-key-AbCdEf",
    "arn:aws:secretsmanager:{region}:{account}:secret:{stack}/carrier-token-AbCdEf",
    "arn:aws:ssm:{region}:{account}:parameter/{stack}/carrier/base-url",
    "arn:aws:cloudformation:{region}:{account}:stack/{stack}/0a1b2c3d-0000-0000-0000-000000000000",
    "arn:aws:iam::{account}:policy/{stack}-permissions-boundary",
)


@dataclass(frozen=True)
class Pattern:
    where: str  # the file, the policy and the statement that hold it
    text: str  # as IAM reads it for the stack STACK_NAME


@cache
def stack() -> Stack:
    return translated()


def resource_name(resource_id: str, resource: dict[str, Any], stack_name: str) -> str:
    """The resource's name in stack `stack_name`: the template's own, or the one CloudFormation generates."""
    name_property = NAME_PROPERTY.get(resource["Type"])
    written = resource.get("Properties", {}).get(name_property) if name_property else None
    if written is not None:
        named = Stack(stack().template, {**stack().parameters, "AWS::StackName": stack_name}).resolve(written)
        assert isinstance(named, str), f"{resource_id}'s {name_property} does not resolve to a name: {named}"
        return named
    return f"{stack_name}-{resource_id}-{SUFFIX}"


def resource_arns(stack_name: str) -> dict[str, list[str]]:
    """Every ARN of the stack's named resources and its conventions, as they are in stack `stack_name`."""
    arns: dict[str, list[str]] = {}
    resources = stack().resources
    for resource_id, resource in resources.items():
        forms = ARN_OF.get(resource["Type"])
        if forms is None:
            continue
        name = resource_name(resource_id, resource, stack_name)
        if resource["Type"] == "AWS::CodeDeploy::DeploymentGroup":
            application = resource["Properties"]["ApplicationName"]["Ref"]
            name = f"{resource_name(application, resources[application], stack_name)}/{name}"
        arns[resource_id] = [form.format(region=REGION, account=ACCOUNT_ID, name=name) for form in forms]
    arns["conventions"] = [form.format(region=REGION, account=ACCOUNT_ID, stack=stack_name) for form in CONVENTIONS]
    return arns


def statements_of(document: Any) -> list[dict[str, Any]]:
    return as_list(document.get("Statement", [])) if isinstance(document, dict) else []


def arn_texts(statement: dict[str, Any]) -> list[Any]:
    """What an Allow statement reaches: its resources, and the ARNs its conditions compare with (aws:SourceArn).

    A Deny may be as wide as it likes, and a resource of "*" is one the service names no other way
    (X-Ray, a KMS key's own policy, reading alarms): the other tests of the roles hold those.
    """
    if statement.get("Effect") != "Allow":
        return []
    texts = [text for text in as_list(statement.get("Resource", [])) if text != "*"]
    for operator, tests in statement.get("Condition", {}).items():
        if operator.startswith(("Arn", "StringLike", "ForAllValues:ArnLike", "ForAnyValue:ArnLike")):
            texts += [value for values in tests.values() for value in as_list(values)]
    return texts


def template_patterns() -> list[Pattern]:
    """Every ARN pattern of the template's policies: the roles', the topic's, the queue's and the key's."""
    found = []
    for resource_id in stack().resources:
        properties = stack().properties(resource_id)
        documents = [
            (policy.get("PolicyName", "?"), policy["PolicyDocument"]) for policy in properties.get("Policies", [])
        ]
        documents += [("PolicyDocument", properties["PolicyDocument"])] if "PolicyDocument" in properties else []
        documents += [("KeyPolicy", properties["KeyPolicy"])] if "KeyPolicy" in properties else []
        for name, document in documents:
            for statement in statements_of(document):
                for text in arn_texts(statement):
                    # A Ref or GetAtt names one resource of this stack: exact by construction.
                    if isinstance(text, str):
                        sid = statement.get("Sid", "?")
                        found.append(Pattern(f"template.yaml {resource_id} {name} {sid}", text))
    return found


PIPELINE_VALUES = {
    "AWS::Partition": "aws",
    "AWS::Region": REGION,
    "AWS::AccountId": ACCOUNT_ID,
    "AppStackName": STACK_NAME,
}


def pipeline_text(value: Any) -> str | None:
    """A pipeline ARN as IAM reads it for the stage that deploys STACK_NAME; None for a Ref or GetAtt (exact)."""
    if isinstance(value, str):
        return value
    if "Fn::Sub" in value and isinstance(value["Fn::Sub"], str):
        text: str = value["Fn::Sub"]
        return re.sub(r"\$\{([^}]+)\}", lambda match: PIPELINE_VALUES.get(match.group(1), match.group(0)), text)
    return None


def pipeline_patterns() -> list[Pattern]:
    """Every ARN pattern of pipeline/oidc-role.yaml: its roles' policies and the permissions boundary."""
    found = []
    for resource_id, resource in load_template(ROLE_TEMPLATE)["Resources"].items():
        properties = resource.get("Properties", {})
        documents = [(policy["PolicyName"], policy["PolicyDocument"]) for policy in properties.get("Policies", [])]
        documents += [("PolicyDocument", properties["PolicyDocument"])] if "PolicyDocument" in properties else []
        for name, document in documents:
            for statement in statements_of(document):
                for value in arn_texts(statement):
                    text = pipeline_text(value)
                    if text is not None:
                        found.append(Pattern(f"pipeline/oidc-role.yaml {resource_id} {name} {statement['Sid']}", text))
    return found


def neighbour_matches(patterns: list[Pattern], neighbours: tuple[str, ...] = NEIGHBOURS) -> list[str]:
    """Each pattern that reaches a neighbour stack's resource, with the resource: one line each."""
    problems = []
    for neighbour in neighbours:
        theirs = [arn for arns in resource_arns(neighbour).values() for arn in arns]
        for pattern in patterns:
            problems += [
                f"{pattern.where}: {pattern.text} also matches stack {neighbour}'s {arn}: name the stack's own "
                "resource (its logical id, or its exact name), not a prefix"
                for arn in theirs
                if fnmatch.fnmatchcase(arn, pattern.text)
            ]
    return problems


@pytest.mark.parametrize("source", ["template.yaml", "pipeline/oidc-role.yaml"])
def test_no_pattern_reaches_a_neighbour_stacks_resources(source: str) -> None:
    # GIVEN every ARN pattern the file's policies hold, for the stack median-tools
    patterns = template_patterns() if source == "template.yaml" else pipeline_patterns()
    assert any(STACK_NAME in pattern.text for pattern in patterns)
    # WHEN each is held against the resources of stacks whose names start with median-tools
    # THEN none matches any of theirs
    assert neighbour_matches(patterns) == []


def test_a_prefix_pattern_is_named_with_the_neighbour_it_reaches() -> None:
    # GIVEN the patterns this test exists to catch: a table by the stack's prefix, a dashboard by its name's start
    patterns = [
        Pattern("boundary Tables", f"arn:aws:dynamodb:{REGION}:{ACCOUNT_ID}:table/{STACK_NAME}-*"),
        Pattern("role Dashboards", f"arn:aws:cloudwatch::{ACCOUNT_ID}:dashboard/{STACK_NAME}*"),
    ]
    # WHEN they are held against the neighbour stacks
    problems = neighbour_matches(patterns, (f"{STACK_NAME}-eu", f"{STACK_NAME}2"))
    # THEN each reach is named: the pattern, the neighbour and its resource, with the fix
    assert (
        f"boundary Tables: {patterns[0].text} also matches stack {STACK_NAME}-eu's "
        f"arn:aws:dynamodb:{REGION}:{ACCOUNT_ID}:table/{STACK_NAME}-eu-IdempotencyTable-{SUFFIX}: name the stack's own "
        "resource (its logical id, or its exact name), not a prefix"
    ) in problems
    assert any(f"{STACK_NAME}2's arn:aws:cloudwatch::{ACCOUNT_ID}:dashboard/{STACK_NAME}2" in line for line in problems)


def execution_role_resources(action: str) -> list[str]:
    """The resources the pipeline's CloudFormation role allows `action` on, for the stage of STACK_NAME."""
    role = load_template(ROLE_TEMPLATE)["Resources"]["CloudFormationExecutionRole"]["Properties"]
    return [
        text
        for policy in role["Policies"]
        for statement in policy["PolicyDocument"]["Statement"]
        if statement["Effect"] == "Allow" and action in as_list(statement["Action"])
        for text in (pipeline_text(value) for value in as_list(statement["Resource"]))
        if text is not None
    ]


def test_the_execution_role_reaches_every_resource_the_stack_holds() -> None:
    # GIVEN each named resource of the stack, as CloudFormation names it in stack median-tools
    missing = []
    for resource_id, arns in resource_arns(STACK_NAME).items():
        if resource_id == "conventions":
            continue
        resource_type = stack().resources[resource_id]["Type"]
        action = CREATED_BY[resource_type]
        # WHEN the CloudFormation role is asked whether it may create it
        allowed = execution_role_resources(action)
        # THEN a pattern of the statement for that action reaches it
        if not any(fnmatch.fnmatchcase(arns[0], pattern) for pattern in allowed):
            missing.append(
                f"{resource_id} ({resource_type}, {arns[0]}): the pipeline's CloudFormation role may not {action} it; "
                f"add {STACK_NAME}-{resource_id}-* (as ${{AppStackName}}-{resource_id}-*) to that statement in "
                "pipeline/oidc-role.yaml"
            )
    assert missing == []


def test_every_alarm_that_notifies_the_topic_may_publish_to_it() -> None:
    # GIVEN the alarms whose actions notify the alarm topic
    notifying = {
        resource_id
        for resource_id, resource in stack().of_type("AWS::CloudWatch::Alarm").items()
        if {"Ref": "AlarmTopic"} in resource["Properties"].get("AlarmActions", [])
    }
    assert notifying
    # WHEN the topic's policy names the alarms that may publish
    policy = stack().properties("AlarmTopicPolicy")["PolicyDocument"]
    [allow] = [statement for statement in policy["Statement"] if statement["Effect"] == "Allow"]
    sources = as_list(allow["Condition"]["ArnEquals"]["aws:SourceArn"])
    admitted = {entry["Fn::GetAtt"].split(".")[0] for entry in sources}
    # THEN each is admitted by its own ARN, and nothing else is
    assert admitted == notifying, "list each alarm that notifies AlarmTopic in AlarmTopicPolicy's aws:SourceArn"
