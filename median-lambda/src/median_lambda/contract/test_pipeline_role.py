"""pipeline/oidc-role.yaml against template.yaml: its roles deploy what the template declares, and no more.

template.yaml's AWS::Serverless resources are expanded into the CloudFormation resources SAM
makes of them (SAM's "generated resources": the function's role, its alias and versions,
CodeDeploy's application, the API's stage), so those are checked too. SAM's own translator is
not used: it pins pydantic below what the endpoint runs on, so it stays in .venv/sam-cli. When a
template change adds a resource type, or a SAM feature this expansion does not know, the first
test here names it and says where the roles must grant it, before a deploy fails in AWS.
"""

from __future__ import annotations

import fnmatch
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from median_lambda.project.sam_config import TEMPLATE, load_template

ROLE_TEMPLATE = Path.cwd() / "pipeline" / "oidc-role.yaml"
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

MANAGED = "arn:${AWS::Partition}:iam::aws:policy/"
BASIC_EXECUTION = MANAGED + "service-role/AWSLambdaBasicExecutionRole"
XRAY_WRITE = MANAGED + "AWSXrayWriteOnlyAccess"
CODEDEPLOY_FOR_LAMBDA = MANAGED + "service-role/AWSCodeDeployRoleForLambda"
# The function events whose only resource of their own is the permission to invoke it.
PERMISSION_ONLY_EVENTS = {"HttpApi", "Api"}


def teach(what: str) -> AssertionError:
    return AssertionError(
        f"template.yaml uses {what}: add what SAM makes of it to sam_generated() here, and grant "
        "it in pipeline/oidc-role.yaml"
    )


def sam_generated(resource: dict[str, Any], globals_: dict[str, Any]) -> tuple[set[str], set[str]]:
    """What SAM makes of one AWS::Serverless resource: CloudFormation types, and the managed policies it attaches."""
    kind, properties = resource["Type"], resource.get("Properties", {})
    if kind == "AWS::Serverless::Function":
        types, policies = {"AWS::Lambda::Function"}, set()
        if "Role" not in properties:
            types.add("AWS::IAM::Role")
            policies.add(BASIC_EXECUTION)
            if "Tracing" in properties or "Tracing" in globals_.get("Function", {}):
                policies.add(XRAY_WRITE)
        for event in properties.get("Events", {}).values():
            if event["Type"] not in PERMISSION_ONLY_EVENTS:
                raise teach(f"a function event of type {event['Type']}")
            types.add("AWS::Lambda::Permission")
        if "AutoPublishAlias" in properties:
            types |= {"AWS::Lambda::Version", "AWS::Lambda::Alias"}
        if "DeploymentPreference" in properties:
            types |= {"AWS::CodeDeploy::Application", "AWS::CodeDeploy::DeploymentGroup"}
            if "Role" not in properties["DeploymentPreference"]:
                types.add("AWS::IAM::Role")
                policies.add(CODEDEPLOY_FOR_LAMBDA)
        if "EventInvokeConfig" in properties:
            types.add("AWS::Lambda::EventInvokeConfig")
        for unknown in ("FunctionUrlConfig", "ProvisionedConcurrencyConfig", "CodeSigningConfigArn"):
            if unknown in properties:
                raise teach(f"the function property {unknown}")
        return types, policies
    if kind == "AWS::Serverless::HttpApi":
        for unknown in ("Domain", "Auth"):
            if unknown in properties:
                raise teach(f"the HTTP API property {unknown}")
        return {"AWS::ApiGatewayV2::Api", "AWS::ApiGatewayV2::Stage"}, set()
    if kind.startswith("AWS::Serverless::"):
        raise teach(kind)
    if kind == "AWS::IAM::Role":
        return {kind}, {arn["Fn::Sub"] for arn in properties.get("ManagedPolicyArns", [])}
    return {kind}, set()


@cache
def deployed() -> tuple[frozenset[str], frozenset[str]]:
    """Every resource type the stack will hold, and every managed policy its roles get (from SAM or the template)."""
    template = load_template(TEMPLATE)
    types: set[str] = set()
    policies: set[str] = set()
    for resource in template["Resources"].values():
        made, attached = sam_generated(resource, template.get("Globals", {}))
        types |= made
        policies |= attached
    return frozenset(types), frozenset(policies)


@cache
def role_template() -> dict[str, Any]:
    template: dict[str, Any] = load_template(ROLE_TEMPLATE)  # scripts/ is not type-checked: its Any, named
    return template


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
    # GIVEN the resources of template.yaml, as CloudFormation receives them, and the pipeline's roles
    [create_change_set] = [
        s for s in statements("GitHubDeployRole") if s["Sid"] == "ChangeTheStackThroughTheExecutionRole"
    ]
    change_set_types = create_change_set["Condition"]["ForAllValues:StringLike"]["cloudformation:ResourceTypes"]
    execution_actions = allowed_actions("CloudFormationExecutionRole")
    declared = {resource["Type"] for resource in load_template(TEMPLATE)["Resources"].values()}
    types, _ = deployed()
    # WHEN each resource type of the stack is looked up
    for resource_type in sorted(types | declared):
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


def test_the_stacks_roles_may_get_only_the_managed_policies_the_template_attaches() -> None:
    # GIVEN the managed policies the stack's roles get, written in template.yaml or attached by SAM
    _, attached = deployed()
    # WHEN the execution role's AttachRolePolicy condition is read
    [attach] = [s for s in statements("CloudFormationExecutionRole") if "iam:AttachRolePolicy" in as_list(s["Action"])]
    allowed = {entry["Fn::Sub"] for entry in attach["Condition"]["ArnEquals"]["iam:PolicyARN"]}
    # THEN it allows each of them, only managed policies AWS publishes, and not the wide ones
    # the function's role no longer needs (any log group; X-Ray whether traced or not)
    assert attached <= allowed
    assert all(arn.startswith(MANAGED) for arn in allowed)
    assert not allowed & {BASIC_EXECUTION, XRAY_WRITE}


@pytest.mark.parametrize(
    ("resource", "what"),
    [
        ({"Type": "AWS::Serverless::Function", "Properties": {"Events": {"Q": {"Type": "SQS"}}}}, "SQS"),
        ({"Type": "AWS::Serverless::Function", "Properties": {"FunctionUrlConfig": {}}}, "FunctionUrlConfig"),
        ({"Type": "AWS::Serverless::HttpApi", "Properties": {"Domain": {}}}, "Domain"),
        ({"Type": "AWS::Serverless::StateMachine", "Properties": {}}, "AWS::Serverless::StateMachine"),
    ],
)
def test_a_sam_feature_the_expansion_does_not_know_is_named(resource: dict[str, Any], what: str) -> None:
    # GIVEN a SAM resource or property whose generated resources this test does not list
    # WHEN it is expanded
    # THEN the test says what to teach it, instead of passing on a partial list
    with pytest.raises(AssertionError, match=what):
        sam_generated(resource, {})


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
        "StackRolesOnlyWithinTheBoundary",
        "StackRolesGetOnlyTheTemplatesManagedPolicy",
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
