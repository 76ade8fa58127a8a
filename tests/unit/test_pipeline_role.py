"""pipeline/oidc-role.yaml against template.yaml: its roles deploy what the template declares, and no more.

template.yaml is read as SAM translates it (offline, as `sam deploy` would send it to
CloudFormation), so the resources SAM generates (the alias, CodeDeploy's application, the
function's role) are checked too. When a template change adds a resource type, the first test
here names it and says where the roles must grant it, before a deploy fails in AWS.
"""

from __future__ import annotations

import copy
import fnmatch
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from samtranslator.translator.transform import transform

from scripts.sam_settings import TEMPLATE, load_template

ROLE_TEMPLATE = Path(__file__).resolve().parents[2] / "pipeline" / "oidc-role.yaml"
OIDC_HOST = "token.actions.githubusercontent.com"

# For each resource type CloudFormation may create in the stack: an action that creating it
# takes, which the execution role must allow.
CREATED_BY = {
    "AWS::Lambda::Function": "lambda:CreateFunction",
    "AWS::Lambda::Version": "lambda:PublishVersion",
    "AWS::Lambda::Alias": "lambda:CreateAlias",
    "AWS::Lambda::Permission": "lambda:AddPermission",
    "AWS::Lambda::EventInvokeConfig": "lambda:PutFunctionEventInvokeConfig",
    "AWS::IAM::Role": "iam:CreateRole",
    "AWS::ApiGatewayV2::Api": "apigateway:POST",
    "AWS::ApiGatewayV2::Stage": "apigateway:POST",
    "AWS::Logs::LogGroup": "logs:CreateLogGroup",
    "AWS::Logs::QueryDefinition": "logs:PutQueryDefinition",
    "AWS::DynamoDB::Table": "dynamodb:CreateTable",
    "AWS::SNS::Topic": "sns:CreateTopic",
    "AWS::SNS::TopicPolicy": "sns:SetTopicAttributes",
    "AWS::SNS::Subscription": "sns:Subscribe",
    "AWS::SQS::Queue": "sqs:CreateQueue",
    "AWS::SQS::QueuePolicy": "sqs:SetQueueAttributes",
    "AWS::KMS::Key": "kms:CreateKey",
    "AWS::KMS::Alias": "kms:CreateAlias",
    "AWS::CloudWatch::Alarm": "cloudwatch:PutMetricAlarm",
    "AWS::CloudWatch::CompositeAlarm": "cloudwatch:PutCompositeAlarm",
    "AWS::CloudWatch::Dashboard": "cloudwatch:PutDashboard",
    "AWS::CodeDeploy::Application": "codedeploy:CreateApplication",
    "AWS::CodeDeploy::DeploymentGroup": "codedeploy:CreateDeploymentGroup",
}


class _NoManagedPolicies:
    """SAM's managed-policy loader, for a template that names managed policies by ARN only."""

    def load(self) -> dict[str, str]:
        return {}


@cache
def translated_template() -> dict[str, Any]:
    """template.yaml as SAM makes it into CloudFormation, with every optional part switched on."""
    template = copy.deepcopy(load_template(TEMPLATE))
    for resource in template["Resources"].values():
        if resource["Type"] == "AWS::Serverless::Function":
            resource["Properties"]["CodeUri"] = "s3://artifacts/build.zip"  # what sam deploy uploads
    parameters = {"EnableTracing": "true"}
    return transform(template, parameters, _NoManagedPolicies())  # type: ignore[no-any-return]


def deployed_types() -> set[str]:
    return {resource["Type"] for resource in translated_template()["Resources"].values()}


@cache
def role_template() -> dict[str, Any]:
    return load_template(ROLE_TEMPLATE)


def statements(role: str) -> list[dict[str, Any]]:
    properties = role_template()["Resources"][role]["Properties"]
    return [statement for policy in properties["Policies"] for statement in policy["PolicyDocument"]["Statement"]]


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def allowed_actions(role: str) -> set[str]:
    return {
        action.lower()
        for statement in statements(role)
        if statement["Effect"] == "Allow"
        for action in as_list(statement["Action"])
    }


def test_the_deploy_role_and_execution_role_cover_every_resource_the_stack_holds() -> None:
    # GIVEN template.yaml as CloudFormation receives it, and the roles the pipeline deploys with
    [create_change_set] = [
        s for s in statements("GitHubDeployRole") if s["Sid"] == "ChangeTheStackThroughTheExecutionRole"
    ]
    change_set_types = create_change_set["Condition"]["ForAllValues:StringLike"]["cloudformation:ResourceTypes"]
    execution_actions = allowed_actions("CloudFormationExecutionRole")
    # WHEN each resource type of the stack is looked up
    for resource_type in sorted(deployed_types() | {r["Type"] for r in load_template(TEMPLATE)["Resources"].values()}):
        where = (
            f"template.yaml deploys {resource_type}, which the pipeline's roles do not cover: add it to "
            "pipeline/oidc-role.yaml (the deploy role's cloudformation:ResourceTypes and a statement of the "
            "execution role's) and to CREATED_BY here"
        )
        # THEN a change set may hold it, and the execution role may create it
        assert any(fnmatch.fnmatchcase(resource_type, pattern) for pattern in change_set_types), where
        if not resource_type.startswith("AWS::Serverless::"):
            assert resource_type in CREATED_BY, where
            assert CREATED_BY[resource_type].lower() in execution_actions, where


def test_the_stacks_roles_may_get_only_the_managed_policies_sam_attaches() -> None:
    # GIVEN the managed policies SAM attaches to the roles it generates (the function's, CodeDeploy's)
    attached = {
        arn.replace("arn:aws:", "arn:${AWS::Partition}:")
        for resource in translated_template()["Resources"].values()
        if resource["Type"] == "AWS::IAM::Role"
        for arn in resource["Properties"].get("ManagedPolicyArns", [])
    }
    # WHEN the execution role's AttachRolePolicy condition is read
    [attach] = [s for s in statements("CloudFormationExecutionRole") if "iam:AttachRolePolicy" in s["Action"]]
    allowed = {entry["Fn::Sub"] for entry in attach["Condition"]["ArnEquals"]["iam:PolicyARN"]}
    # THEN it allows each of them, and only managed policies AWS publishes
    assert attached, "SAM attaches at least the basic execution role"
    assert attached <= allowed
    assert all(arn.startswith("arn:${AWS::Partition}:iam::aws:policy/") for arn in allowed)


def test_only_the_repositorys_jobs_in_its_environment_can_assume_the_deploy_role() -> None:
    # GIVEN the deploy role's trust policy
    [trust] = role_template()["Resources"]["GitHubDeployRole"]["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    # THEN only GitHub's OIDC tokens, for STS, of this repository's jobs in the one environment, match it,
    # and exactly: no wildcard, so no other repository, branch or pull request
    assert trust["Action"] == "sts:AssumeRoleWithWebIdentity"
    assert set(trust["Condition"]) == {"StringEquals"}
    assert trust["Condition"]["StringEquals"] == {
        f"{OIDC_HOST}:aud": "sts.amazonaws.com",
        f"{OIDC_HOST}:sub": {"Fn::Sub": "repo:${GitHubRepository}:environment:${GitHubEnvironment}"},
    }
    [provider] = [r for r in role_template()["Resources"].values() if r["Type"] == "AWS::IAM::OIDCProvider"]
    assert provider["Properties"]["Url"] == f"https://{OIDC_HOST}"
    assert provider["DeletionPolicy"] == "Retain", "one stage's deletion must not lock the other out"


def test_the_deploy_role_changes_the_stack_only_through_cloudformation_as_the_execution_role() -> None:
    # GIVEN the deploy role's statements
    granted = statements("GitHubDeployRole")
    # THEN it may create change sets only naming the execution role, may pass that role only to
    # CloudFormation, may not import existing resources, and may touch nothing but the stack and its bucket
    [change_set] = [s for s in granted if s["Sid"] == "ChangeTheStackThroughTheExecutionRole"]
    assert change_set["Condition"]["StringEquals"]["cloudformation:RoleArn"] == {
        "Fn::GetAtt": "CloudFormationExecutionRole.Arn"
    }
    [pass_role] = [s for s in granted if s["Effect"] == "Allow" and s["Action"] == "iam:PassRole"]
    assert pass_role["Resource"] == {"Fn::GetAtt": "CloudFormationExecutionRole.Arn"}
    assert pass_role["Condition"] == {"StringEquals": {"iam:PassedToService": "cloudformation.amazonaws.com"}}
    [no_imports] = [s for s in granted if s["Effect"] == "Deny"]
    assert no_imports["Condition"] == {"Null": {"cloudformation:ImportResourceTypes": "false"}}
    services = {action.split(":")[0] for action in allowed_actions("GitHubDeployRole")}
    assert services == {"cloudformation", "iam", "s3"}


@pytest.mark.parametrize("role", ["GitHubDeployRole", "CloudFormationExecutionRole"])
def test_no_statement_grants_a_whole_service(role: str) -> None:
    # GIVEN each statement of the role
    for statement in statements(role):
        # THEN it names actions one by one: no "*", no "service:*"
        for action in as_list(statement["Action"]):
            assert "*" not in action, f"{role} {statement['Sid']}: {action}"


def test_stack_scoped_statements_name_the_stage_stack() -> None:
    # GIVEN the execution role's statements whose resources carry names
    named = {
        "StackRoles",
        "StackFunction",
        "StackLogGroups",
        "StackTables",
        "StackTopics",
        "StackQueues",
        "StackAlarms",
        "StackDashboards",
        "StackGradualDeployments",
    }
    for statement in statements("CloudFormationExecutionRole"):
        if statement["Sid"] in named:
            # THEN each resource is one whose name starts with the stage's stack name
            for resource in as_list(statement["Resource"]):
                assert "${AppStackName}" in resource["Fn::Sub"], f"{statement['Sid']}: {resource}"
