"""The pipeline's permissions boundary: the stack's roles are created only under it, and it holds what they are granted.

pipeline/oidc-role.yaml makes the boundary and its CloudFormation role refuses to create or
widen a role without it; template.yaml sets it on its roles through a parameter that
samconfig.toml's stages fill in. So a change to main cannot give the function (or the PreTraffic
hook, or CodeDeploy) more than the boundary allows, and a change that needs more fails here first,
saying where to add it, rather than in a deploy.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from median_lambda.project.sam_config import SAMCONFIG, load_template, parameter_overrides
from median_lambda.testing import Stack, template_parameters, translated
from median_lambda.testing.template import ACCOUNT_ID, REGION, STACK_NAME

ROLE_TEMPLATE = Path.cwd() / "pipeline" / "oidc-role.yaml"
BOUNDARY = {"Ref": "StackRolesPermissionsBoundary"}
# The actions that give a role rights or set its boundary.
WIDENING = {"iam:createrole", "iam:putrolepolicy", "iam:attachrolepolicy", "iam:putrolepermissionsboundary"}
# A name CloudFormation generates for a stack's resource, "<stack>-<LogicalId>-<suffix>", and the ARN of
# each type a role is granted on by the resource's own ARN.
GENERATED_NAME = "{stack}-{name}-ABC123"
GENERATED_ARN = {
    "AWS::Logs::LogGroup": "arn:aws:logs:{region}:{account}:log-group:{stack}-{name}-ABC123:*",
    "AWS::DynamoDB::Table": "arn:aws:dynamodb:{region}:{account}:table/{stack}-{name}-ABC123",
    "AWS::Lambda::Function": "arn:aws:lambda:{region}:{account}:function:{stack}-{name}-ABC123",
}
# The boundary's statement for the stack's own tables, and the execution role's statement that creates them:
# each holds a `# >>> yours: tables` block, where a table of the user's goes by its logical id.
TABLE_STATEMENT = "FunctionKeepsCallRecords"
TABLE_CREATION = "StackTables"
STACK_TABLE = "arn:${{AWS::Partition}}:dynamodb:${{AWS::Region}}:${{AWS::AccountId}}:table/${{AppStackName}}-{}-*"
# Who each of the template's roles is, as a message names it.
GRANTEES = {
    "MedianToolsFunctionRole": "the function",
    "PreTrafficHookRole": "the PreTraffic hook",
    "CodeDeployServiceRole": "CodeDeploy",
}
# The number Lambda gives the version a deploy publishes (a `Ref` to it is the function's ARN and this).
PUBLISHED_VERSION = "7"
_SUB_REFERENCE = re.compile(r"\$\{(\w+)(?:\.(\w+))?\}")
PIPELINE_PARAMETERS = {
    "AWS::Partition": "aws",
    "AWS::Region": REGION,
    "AWS::AccountId": ACCOUNT_ID,
    "AppStackName": STACK_NAME,
}


@cache
def role_template() -> dict[str, Any]:
    template: dict[str, Any] = load_template(ROLE_TEMPLATE)  # scripts/ is not type-checked: its Any, named
    return template


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def execution_role_statements() -> list[dict[str, Any]]:
    properties = role_template()["Resources"]["CloudFormationExecutionRole"]["Properties"]
    return [statement for policy in properties["Policies"] for statement in policy["PolicyDocument"]["Statement"]]


def boundary_statements() -> list[dict[str, Any]]:
    boundary = role_template()["Resources"][BOUNDARY["Ref"]]
    assert boundary["Type"] == "AWS::IAM::ManagedPolicy"
    statements: list[dict[str, Any]] = boundary["Properties"]["PolicyDocument"]["Statement"]
    return statements


def pipeline_sub(value: Any, stack_name: str = STACK_NAME) -> str:
    """A resource of the pipeline's template as a glob, for the stage that deploys `stack_name`."""
    text = value if isinstance(value, str) else value["Fn::Sub"]
    parameters = {**PIPELINE_PARAMETERS, "AppStackName": stack_name}
    return re.sub(r"\$\{([^}]+)\}", lambda match: parameters[match.group(1)], text)


def test_the_execution_role_gives_a_role_rights_only_under_the_boundary() -> None:
    # GIVEN every statement of the CloudFormation role that allows creating a role or granting it rights
    widening = [
        statement
        for statement in execution_role_statements()
        if statement["Effect"] == "Allow" and {a.lower() for a in as_list(statement["Action"])} & WIDENING
    ]
    assert widening
    # THEN each allows it only on a role whose permissions boundary is the pipeline's
    for statement in widening:
        assert statement["Condition"]["StringEquals"]["iam:PermissionsBoundary"] == BOUNDARY, statement["Sid"]
    # AND every one of those actions is covered, so none is allowed unconditioned elsewhere
    assert {a.lower() for s in widening for a in as_list(s["Action"])} == WIDENING


def test_the_boundary_can_be_neither_removed_nor_rewritten_by_a_deploy() -> None:
    # GIVEN the CloudFormation role's explicit denials
    denied = [s for s in execution_role_statements() if s["Effect"] == "Deny"]
    actions = {a.lower() for s in denied for a in as_list(s["Action"])}
    # THEN it may not take a role's boundary off, nor change the boundary policy itself
    assert "iam:deleterolepermissionsboundary" in actions
    assert {"iam:createpolicyversion", "iam:setdefaultpolicyversion", "iam:deletepolicy"} <= actions
    assert any(BOUNDARY in as_list(s["Resource"]) for s in denied)
    # AND nothing it is allowed touches a managed policy
    allowed = {a.lower() for s in execution_role_statements() if s["Effect"] == "Allow" for a in as_list(s["Action"])}
    assert not {a for a in allowed if "policyversion" in a or a in {"iam:createpolicy", "iam:deletepolicy"}}


def pipeline_stages() -> list[str]:
    """The stages samconfig.toml holds beside default: the names `copier copy` was given, or a user's own."""
    # Read while pytest collects: a project without the file gets the test below's failure, not an
    # error that stops the whole suite.
    if not SAMCONFIG.is_file():
        return []
    document = tomllib.loads(SAMCONFIG.read_text(encoding="utf-8"))
    return [name for name, section in document.items() if isinstance(section, dict) and name != "default"]


@dataclass(frozen=True)
class Beyond:
    """A grant of a role of the stack in a stage that no Allow of the boundary allows: the action, the resource as
    CloudFormation names it for the stage's stack, the resource's logical id and type when it is the stack's, and
    the role's logical id."""

    action: str
    resource: str
    logical_id: str | None = None
    kind: str | None = None
    role: str = "MedianToolsFunctionRole"


def generated(stack: Stack, name: str, attribute: str | None = None) -> str:
    """What CloudFormation gives the stack's resource for a `Ref` (attribute None) or a `!GetAtt`'s attribute."""
    resource = stack.resources[name]
    if resource["Type"] == "AWS::Lambda::Version":
        return f"{generated(stack, resource['Properties']['FunctionName']['Ref'], 'Arn')}:{PUBLISHED_VERSION}"
    names = {"region": REGION, "account": ACCOUNT_ID, "stack": stack.parameters["AWS::StackName"], "name": name}
    if attribute == "Arn" and resource["Type"] not in GENERATED_ARN:
        # A type this suite does not name the ARN of: shown as written, which no boundary pattern matches.
        return f"the {attribute} of {name} ({resource['Type']})"
    return (GENERATED_ARN[resource["Type"]] if attribute == "Arn" else GENERATED_NAME).format(**names)


def referenced(resource: Any) -> tuple[str, str | None] | None:
    """The logical id a granted resource refers to, and the attribute (None for a `Ref`); None for a text."""
    if isinstance(resource, dict) and "Ref" in resource:
        return resource["Ref"], None
    if isinstance(resource, dict):
        getatt = resource["Fn::GetAtt"]
        name, attribute = getatt if isinstance(getatt, list) else getatt.split(".", 1)
        return name, attribute
    return None


def concrete(stack: Stack, resource: Any) -> str:
    """A granted resource as CloudFormation writes it for the stack: each of its references to a resource resolved."""
    reference = referenced(resource)
    if reference is not None:
        return generated(stack, *reference)
    return _SUB_REFERENCE.sub(
        lambda found: generated(stack, found[1], found[2]) if found[1] in stack.resources else found[0], str(resource)
    )


def grants_beyond_the_boundary(stack: Stack, boundary: list[dict[str, Any]]) -> list[Beyond]:
    """Each grant a role of the stack is given by its own policies that no Allow of the boundary allows, each
    resource as CloudFormation names it for the stack."""
    stack_name = str(stack.parameters["AWS::StackName"])
    allows = [s for s in boundary if s["Effect"] == "Allow"]
    beyond = []
    for role in stack.of_type("AWS::IAM::Role"):
        for policy in stack.properties(role).get("Policies", []):
            for statement in policy["PolicyDocument"]["Statement"]:
                for action in as_list(statement["Action"]):
                    for granted in as_list(statement["Resource"]):
                        resource = concrete(stack, granted)
                        if not any(
                            action in as_list(s["Action"])
                            and any(
                                fnmatch.fnmatchcase(resource, pipeline_sub(r, stack_name))
                                for r in as_list(s["Resource"])
                            )
                            for s in allows
                        ):
                            reference = referenced(granted)
                            logical_id = reference[0] if reference is not None else None
                            kind = stack.resources[logical_id]["Type"] if logical_id is not None else None
                            beyond.append(Beyond(action, resource, logical_id, kind, role))
    return beyond


def where_to_allow(stage: str, beyond: list[Beyond], boundary: list[dict[str, Any]]) -> str:
    """What the boundary lacks in this stage, resource by resource, and the lines of pipeline/oidc-role.yaml that
    allow it: a table the stack creates in its tables blocks, a resource of the company's in its own block."""
    [table_statement] = [statement for statement in boundary if statement.get("Sid") == TABLE_STATEMENT]
    table_calls = as_list(table_statement["Action"])
    by_resource: dict[Beyond, list[str]] = {}
    for grant in beyond:
        by_resource.setdefault(Beyond("", grant.resource, grant.logical_id, grant.kind, grant.role), []).append(
            grant.action
        )
    paragraphs = []
    for grant, actions in by_resource.items():
        grantee = GRANTEES.get(grant.role, grant.role)
        granted = f"stage {stage}: template.yaml grants {grantee} {', '.join(actions)} on {grant.resource}"
        if grant.kind == "AWS::DynamoDB::Table":
            line = "- !Sub " + STACK_TABLE.format(grant.logical_id)
            others = [action for action in actions if action not in table_calls]
            paragraphs.append(
                f"{granted}, the stack's own table {grant.logical_id}, which the permissions boundary does not "
                f"allow. In pipeline/oidc-role.yaml, add\n    {line}\nbetween the `# >>> yours: tables` lines of "
                f"StackRolesPermissionsBoundary's {TABLE_STATEMENT} (what the function may call on it), and between "
                f"those of the execution role's {TABLE_CREATION} (so that the pipeline may create it)"
                + (
                    f"; {TABLE_STATEMENT} allows {', '.join(table_calls)} only, so {', '.join(others)} needs a "
                    "statement of its own on that table, between the boundary's `# >>> yours: company` lines"
                    if others
                    else ""
                )
                + ". Then update each stage's pipeline stack before deploying."
            )
        else:
            paragraphs.append(
                f"{granted}, which the permissions boundary does not allow: add it to StackRolesPermissionsBoundary "
                "in pipeline/oidc-role.yaml (a resource of the company's, by its name, in a statement whose Sid "
                "starts with Company, between its `# >>> yours: company` lines), and update each stage's pipeline "
                "stack before deploying."
            )
    return "\n\n".join(paragraphs)


def deployed_stage(stage: str, tracing: str) -> Stack:
    """template.yaml as `sam deploy --config-env <stage>` deploys it: samconfig.toml's stack name and values for it."""
    document = tomllib.loads(SAMCONFIG.read_text(encoding="utf-8"))
    sections = document[stage]
    config = {**sections.get("global", {}).get("parameters", {}), **sections.get("deploy", {}).get("parameters", {})}
    declared = template_parameters()
    values: dict[str, Any] = {name: value for name, value in parameter_overrides(config).items() if name in declared}
    return translated(stack_name=str(config.get("stack_name", STACK_NAME)), **{**values, "EnableTracing": tracing})


def _none_to_check() -> Any:
    return pytest.param(None, id="none", marks=pytest.mark.skip(reason="samconfig.toml names no pipeline stage"))


@pytest.mark.parametrize("tracing", ["true", "false"])
@pytest.mark.parametrize("stage", pipeline_stages() or [_none_to_check()])
def test_the_boundary_allows_everything_each_role_of_the_stack_is_granted_in_each_stage(
    stage: str, tracing: str
) -> None:
    # GIVEN the stack's roles (the function's, the PreTraffic hook's, CodeDeploy's) as each pipeline stage deploys
    # them: samconfig.toml's values for that stage (a table's name of its own, say), each resource as
    # CloudFormation names it in the stage's stack
    stack = deployed_stage(stage, tracing)
    # WHEN the stage's boundary is asked whether it allows each grant
    boundary = boundary_statements()
    beyond = grants_beyond_the_boundary(stack, boundary)
    # THEN a statement of it does: a grant the boundary lacks would be denied in AWS, in that stage. Said whole,
    # with what to write where, at any verbosity (pytest cuts an assertion's message short of -vv)
    if beyond:
        pytest.fail(where_to_allow(stage, beyond, boundary), pytrace=False)


def boundary_problems(statements: list[dict[str, Any]]) -> list[str]:
    """What in these boundary statements reaches beyond the stage stack's own resources, or the company's named ones."""
    problems = []
    for statement in statements:
        sid = statement["Sid"]
        problems += [f"{sid}: {action} is not one action" for action in as_list(statement["Action"]) if "*" in action]
        for resource in as_list(statement["Resource"]):
            if resource == "*":
                if not all(a.startswith(("xray:", "cloudwatch:Describe")) for a in as_list(statement["Action"])):
                    problems.append(f"{sid}: only X-Ray's and CloudWatch's reads may be on every resource")
            elif sid.startswith("Company"):
                # A resource of the company's (docs/your-own-systems.md): in this account and region, by its name.
                text = resource["Fn::Sub"]
                if "${AWS::AccountId}" not in text or "${AWS::Region}" not in text or "*" in text:
                    problems.append(f"{sid}: {text} must name one resource of this account and region")
            elif "${AppStackName}" not in resource["Fn::Sub"]:
                problems.append(
                    f"{sid}: {resource} is not the stack's own; a company's resource goes in a Company... Sid"
                )
    return problems


def test_the_boundary_names_the_stacks_own_resources() -> None:
    # GIVEN the boundary's statements
    # THEN each action is named one by one, and each resource is the stage stack's, except where the
    # service names none (X-Ray), the action only reads (CodeDeploy's alarms), or a `Company...`
    # statement names a resource of the company's, one by one, in this account and region
    assert boundary_problems(boundary_statements()) == []


def test_a_boundary_statement_beyond_the_stack_is_named_with_the_fix() -> None:
    # GIVEN statements reaching another stack's table, and a company's tables by a pattern
    sub = "arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/"
    statements = [
        {"Sid": "Wide", "Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": {"Fn::Sub": sub + "other"}},
        {"Sid": "CompanyAll", "Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": {"Fn::Sub": sub + "p*"}},
    ]
    # WHEN they are checked
    problems = boundary_problems(statements)
    # THEN each is named, with where a company's resource belongs
    assert problems == [
        f"Wide: {{'Fn::Sub': '{sub}other'}} is not the stack's own; a company's resource goes in a Company... Sid",
        f"CompanyAll: {sub}p* must name one resource of this account and region",
    ]


def test_the_pipeline_has_stages_to_deploy() -> None:
    # GIVEN samconfig.toml, WHEN its pipeline stages are read, THEN there are some: the test below checks each
    assert pipeline_stages(), (
        "samconfig.toml is missing or names no stage beside [default]: the deploy workflow has none to deploy"
    )


@pytest.mark.parametrize("stage", pipeline_stages())
def test_each_stage_deploys_under_its_pipeline_stacks_boundary(stage: str) -> None:
    # GIVEN the stage's deploy settings in samconfig.toml, which the GitHub workflow deploys with
    document = tomllib.loads(SAMCONFIG.read_text(encoding="utf-8"))
    stack_name = document[stage]["global"]["parameters"]["stack_name"]
    overrides = parameter_overrides(document[stage]["deploy"]["parameters"])
    # THEN it names the boundary that stage's pipeline stack makes, by the name the stack gives it
    assert role_template()["Resources"][BOUNDARY["Ref"]]["Properties"]["ManagedPolicyName"] == {
        "Fn::Sub": "${AppStackName}-permissions-boundary"
    }
    assert overrides["PermissionsBoundaryPolicy"] == f"{stack_name}-permissions-boundary"
    # AND its key's secret is one the boundary lets the function read: named under the stack's name
    assert overrides["MedianKeySecretName"].startswith(f"{stack_name}/")
