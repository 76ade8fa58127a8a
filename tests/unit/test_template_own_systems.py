"""The IAM convention: a tool's own secret and parameter need no template edit, and grant nothing wider."""

from __future__ import annotations

from typing import Any

import pytest
from median_lambda.testing import Stack, translated

ROLE = "MedianToolsFunctionRole"
FUNCTION = "MedianToolsFunction"


def statements(stack: Stack) -> list[dict[str, Any]]:
    policies = stack.resolve(stack.properties(ROLE)["Policies"])
    return [statement for policy in policies for statement in policy["PolicyDocument"]["Statement"]]


def actions(statement: dict[str, Any]) -> list[str]:
    action = statement["Action"]
    return [action] if isinstance(action, str) else list(action)


def granting(stack: Stack, service: str) -> list[dict[str, Any]]:
    return [each for each in statements(stack) if any(action.startswith(f"{service}:") for action in actions(each))]


@pytest.mark.parametrize("stack_name", ["median-tools", "median-tools-staging"])
def test_the_function_may_read_any_secret_and_parameter_under_its_stacks_name(stack_name: str) -> None:
    # GIVEN the stack deployed under a name
    default = translated()
    stack = Stack(default.template, {**default.parameters, "AWS::StackName": stack_name})
    name = stack_name
    # THEN its function may read the secrets named `<stack>/...` and the parameters under `/<stack>/`
    resources = {each["Resource"] for each in granting(stack, "secretsmanager")}
    assert f"arn:aws:secretsmanager:eu-west-1:123456789012:secret:{name}/*" in resources
    [parameters] = granting(stack, "ssm")
    assert parameters["Resource"] == f"arn:aws:ssm:eu-west-1:123456789012:parameter/{name}/*"


def test_the_convention_grants_reading_only_and_only_under_the_stacks_prefix(stack: Stack) -> None:
    # GIVEN every statement of the function's role about Secrets Manager or Parameter Store
    name = stack.parameters["AWS::StackName"]
    key_secret = stack.parameters["MedianKeySecretName"]
    for statement in [*granting(stack, "secretsmanager"), *granting(stack, "ssm")]:
        # THEN each allows one read action, never a write, a list or a wildcard action
        assert statement["Effect"] == "Allow"
        assert actions(statement) in (["secretsmanager:GetSecretValue"], ["ssm:GetParameter"])
        # AND on this stack's names (or the Median key's own secret), never the account's others
        resource = statement["Resource"]
        assert isinstance(resource, str)
        assert resource.endswith((f":secret:{name}/*", f":parameter/{name}/*", f":secret:{key_secret}-??????"))


def test_the_extension_caches_no_parameter_either_and_bounds_its_calls(stack: Stack) -> None:
    # GIVEN the handler's own per-container cache of a tool's secrets and parameters
    variables = stack.properties(FUNCTION)["Environment"]["Variables"]
    # THEN the extension keeps no second copy of either, and its calls to AWS are bounded
    assert variables["SECRETS_MANAGER_TTL"] == "0"
    assert variables["SSM_PARAMETER_STORE_TTL"] == "0"
    assert variables["SSM_PARAMETER_STORE_TIMEOUT_MILLIS"] == variables["SECRETS_MANAGER_TIMEOUT_MILLIS"]
