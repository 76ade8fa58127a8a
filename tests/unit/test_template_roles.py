"""The stack's roles as CloudFormation creates them: the function's no wider than it needs, both capped by the boundary.

Read from the template as SAM translates it, for both values of EnableTracing: SAM's own role
for a function would carry AWSLambdaBasicExecutionRole (every log group of the account) and,
for any Tracing value, AWSXrayWriteOnlyAccess.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from median_lambda.testing import translated

if TYPE_CHECKING:
    from median_lambda.testing import Stack

ROLE = "AWS::IAM::Role"
BOUNDARY = "median-tools-permissions-boundary"
BOUNDARY_ARN = f"arn:aws:iam::123456789012:policy/{BOUNDARY}"
XRAY_ACTIONS = {
    "xray:PutTraceSegments",
    "xray:PutTelemetryRecords",
    "xray:GetSamplingRules",
    "xray:GetSamplingTargets",
    "xray:GetSamplingStatisticSummaries",
}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def function_role(stack: Stack) -> str:
    role = stack.properties("MedianToolsFunction")["Role"]
    name, attribute = role["Fn::GetAtt"].split(".")
    assert attribute == "Arn"
    assert stack.resources[name]["Type"] == ROLE, "the function runs as a role of the stack's own"
    return name


def statements(stack: Stack, role: str) -> list[dict[str, Any]]:
    policies = stack.properties(role).get("Policies", [])
    return [statement for policy in policies for statement in policy["PolicyDocument"]["Statement"]]


def granted(stack: Stack, role: str) -> dict[str, list[Any]]:
    """Each action the role's own policies allow, with the resources it is allowed on."""
    actions: dict[str, list[Any]] = {}
    for statement in statements(stack, role):
        assert statement["Effect"] == "Allow"
        for action in as_list(statement["Action"]):
            actions.setdefault(action, []).extend(as_list(statement["Resource"]))
    return actions


@pytest.mark.parametrize("tracing", ["true", "false"])
def test_the_function_role_carries_no_managed_policy(tracing: str) -> None:
    # GIVEN the stack, tracing on or off
    stack = translated(EnableTracing=tracing)
    # WHEN its function's role is read
    role = stack.properties(function_role(stack))
    # THEN no managed policy widens it: not AWSLambdaBasicExecutionRole (any log group of the
    # account), not AWSXrayWriteOnlyAccess; everything it may do is written in the template
    assert role.get("ManagedPolicyArns", []) == []
    # AND no role of the stack gets either, the one SAM would make for the function included
    attached = {arn for name in stack.of_type(ROLE) for arn in stack.properties(name).get("ManagedPolicyArns", [])}
    assert not {arn for arn in attached if "AWSLambdaBasicExecutionRole" in arn or "Xray" in arn}


def test_x_ray_is_granted_exactly_when_tracing_is_on() -> None:
    # GIVEN the stack with tracing on and with it off
    on, off = translated(EnableTracing="true"), translated(EnableTracing="false")
    # THEN with tracing on the function's role may send traces (and read sampling rules), as the X-Ray SDK does
    assert set(granted(on, function_role(on))) >= XRAY_ACTIONS
    assert on.properties("MedianToolsFunction")["TracingConfig"] == {"Mode": "Active"}
    # AND with it off the role has no X-Ray action at all
    assert not [action for action in granted(off, function_role(off)) if action.startswith("xray:")]


@pytest.mark.parametrize("tracing", ["true", "false"])
def test_the_function_writes_logs_only_to_its_own_log_group(tracing: str) -> None:
    # GIVEN the stack, tracing on or off, and the log group the function logs to
    stack = translated(EnableTracing=tracing)
    log_group = stack.properties("MedianToolsFunction")["LoggingConfig"]["LogGroup"]["Ref"]
    # WHEN the role's logs actions are read
    grants = granted(stack, function_role(stack))
    logs = {action: resources for action, resources in grants.items() if action.startswith("logs:")}
    # THEN it may write streams and events, in that group and nowhere else, and create no log group
    assert set(logs) == {"logs:CreateLogStream", "logs:PutLogEvents"}
    for resources in logs.values():
        assert resources == [{"Fn::GetAtt": f"{log_group}.Arn"}]


@pytest.mark.parametrize("tracing", ["true", "false"])
def test_every_grant_of_the_function_names_its_resource_but_x_ray(tracing: str) -> None:
    # GIVEN the function's role
    stack = translated(EnableTracing=tracing)
    # THEN each action is named one by one, and only X-Ray's (which has no resource to name) is on "*"
    for action, resources in granted(stack, function_role(stack)).items():
        assert "*" not in action
        if "*" in resources:
            assert action in XRAY_ACTIONS, f"{action} is granted on every resource"
    # AND the secrets it reads are the key's, with Secrets Manager's six-character suffix, and the tools'
    # own by the template's convention, named under this stack's name: no other
    secrets = granted(stack, function_role(stack))["secretsmanager:GetSecretValue"]
    assert sorted(secret.rsplit(":secret:", 1)[1] for secret in secrets) == [
        "median-tools/*",
        "median-tools/median-key-??????",
    ]
    [parameters] = granted(stack, function_role(stack))["ssm:GetParameter"]
    assert parameters.endswith(":parameter/median-tools/*")


def test_every_role_of_the_stack_carries_the_boundary_it_is_given() -> None:
    # GIVEN a stack deployed with the pipeline's permissions boundary
    stack = translated(PermissionsBoundaryPolicy=BOUNDARY)
    roles = stack.of_type(ROLE)
    # THEN each role it creates (the function's, CodeDeploy's, and any SAM makes) has it
    assert {function_role(stack), "CodeDeployServiceRole"} <= set(roles)
    for name in roles:
        assert stack.properties(name).get("PermissionsBoundary") == BOUNDARY_ARN, name
    # AND CodeDeploy runs as the role written in the template, not one SAM makes without the boundary
    [group] = stack.of_type("AWS::CodeDeploy::DeploymentGroup")
    assert stack.properties(group)["ServiceRoleArn"] == {"Fn::GetAtt": "CodeDeployServiceRole.Arn"}


def test_without_a_boundary_the_roles_have_none() -> None:
    # GIVEN a deploy with an administrator's own credentials, which names no boundary
    stack = translated()
    # THEN no role points at a policy that may not exist in that account
    for name in stack.of_type(ROLE):
        assert "PermissionsBoundary" not in stack.properties(name), name


def hook_role(stack: Stack) -> str:
    name, attribute = stack.properties("PreTrafficHook")["Role"]["Fn::GetAtt"].split(".")
    assert (attribute, stack.resources[name]["Type"]) == ("Arn", ROLE)
    return name


@pytest.mark.parametrize("tracing", ["true", "false"])
def test_the_pre_traffic_hook_may_do_only_what_hearing_a_version_and_pruning_old_ones_takes(tracing: str) -> None:
    # GIVEN the stack, tracing on or off, the version this deploy publishes, and the hook's role
    stack = translated(EnableTracing=tracing)
    version, _ = stack.one_of_type("AWS::Lambda::Version")
    function_arn = {"Fn::GetAtt": "MedianToolsFunction.Arn"}
    # WHEN the role's own grants are read
    grants = granted(stack, hook_role(stack))
    # THEN it may invoke that one version (never `live`, never another function), read the Median key,
    # report to this stack's deployment group, write its own log group, and list, read `live` of, and
    # delete this function's versions: nothing else, and no managed policy
    assert grants == {
        "lambda:InvokeFunction": [{"Ref": version}],
        "secretsmanager:GetSecretValue": [
            "arn:aws:secretsmanager:eu-west-1:123456789012:secret:median-tools/median-key-??????"
        ],
        "codedeploy:PutLifecycleEventHookExecutionStatus": [
            "arn:aws:codedeploy:eu-west-1:123456789012:deploymentgroup:"
            "${ServerlessDeploymentApplication}/${MedianToolsFunctionDeploymentGroup}"
        ],
        "logs:CreateLogStream": [{"Fn::GetAtt": "PreTrafficHookLogGroup.Arn"}],
        "logs:PutLogEvents": [{"Fn::GetAtt": "PreTrafficHookLogGroup.Arn"}],
        "lambda:ListVersionsByFunction": [function_arn],
        "lambda:GetAlias": [function_arn, "${MedianToolsFunction.Arn}:live"],
        "lambda:DeleteFunction": ["${MedianToolsFunction.Arn}:*"],
    }
    assert stack.properties(hook_role(stack)).get("ManagedPolicyArns", []) == []
    # AND the resources SAM and CloudFormation resolve those names to exist in the stack
    assert {"ServerlessDeploymentApplication", "MedianToolsFunctionDeploymentGroup", "PreTrafficHookLogGroup"} <= set(
        stack.resources
    )
    # AND the hook is never traced, so no X-Ray right is needed, whatever the stack's tracing
    assert stack.properties("PreTrafficHook")["TracingConfig"] == {"Mode": "PassThrough"}


def test_codedeploy_may_run_the_hook_by_the_name_cloudformation_gives_it(stack: Stack) -> None:
    # GIVEN CodeDeploy's role, whose managed policy invokes only functions named CodeDeployHook_*
    grants = granted(stack, "CodeDeployServiceRole")
    # THEN its own policy adds the hook, named as CloudFormation names it, and no other function
    assert grants == {
        "lambda:InvokeFunction": ["arn:aws:lambda:eu-west-1:123456789012:function:median-tools-PreTrafficHook-*"]
    }
