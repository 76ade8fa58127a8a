"""docs/your-own-systems.md runs as written: its settings, tools, tests and template fragments.

Each snippet whose first line is a `# <path>` comment (tools/..., tests/...) is a file a user
copies: here it is copied as it stands into a project with no other tools, where its tests
must pass and `make check`, ruff and mypy must accept it. Each YAML snippet whose first line
is `# template.yaml, under <where>:` is pasted there, in a copy of the template, which must
still pass `make validate`'s own check and translate to a role granting what the tools call.
"""

from __future__ import annotations

import fnmatch
import re
import shutil
import sys
import textwrap
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda.cli.template_check import check
from median_lambda.contract.test_permissions_boundary import (
    as_list,
    boundary_problems,
    boundary_statements,
    grants_beyond_the_boundary,
    pipeline_sub,
)
from median_lambda.project.sam_config import load_template
from median_lambda.testing import translated

from tests.project_copy import (
    REPO,
    TEMPLATE_PLACE,
    ProjectCopy,
    copy_project,
    fenced_snippets,
    paste_fragments,
    snippet_files,
)

if TYPE_CHECKING:
    from pathlib import Path

GUIDE = REPO / "docs" / "your-own-systems.md"


def files_to_copy() -> dict[str, str]:
    return snippet_files(GUIDE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def guide_project(tmp_path_factory: pytest.TempPathFactory) -> ProjectCopy:
    project = copy_project(tmp_path_factory.mktemp("guide") / "project")
    project.write_files(files_to_copy())
    return project


def test_the_guide_gives_settings_a_tool_and_its_tests() -> None:
    # GIVEN the guide
    # WHEN its copyable snippets are read
    # THEN they are the settings file, a tool module and its tests
    assert sorted(files_to_copy()) == ["tests/tools/test_parcels.py", "tools/parcels.py", "tools/settings.toml"]


def test_the_guides_tests_pass_as_written(guide_project: ProjectCopy) -> None:
    # WHEN the guide's tests run in the project, as `make test` would run them
    finished = guide_project.pytest("tests/tools/test_parcels.py")
    # THEN they pass: moto's AWS, the settings, the secret and the stand-in API behave as the guide says
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "7 passed" in finished.stdout


def test_make_check_and_make_lint_accept_the_guides_tools(guide_project: ProjectCopy) -> None:
    # WHEN `make check` and `make lint`'s ruff and mypy run on the project
    checked = guide_project.run("-m", "median_lambda", "check")
    linted = guide_project._run([sys.executable, "-m", "ruff", "check", "tools", "tests/tools"], None)
    formatted = guide_project._run([sys.executable, "-m", "ruff", "format", "--check", "tools", "tests/tools"], None)
    typed = guide_project._run([sys.executable, "-m", "mypy", "-p", "tools"], None)
    # THEN all accept it: every stage has its values, the Secret(...) default is no B008, and
    # `token: str = Secret(...)` type-checks as the str the tool receives
    assert checked.returncode == 0, checked.stderr
    assert "3/20 tools" in checked.stdout
    assert linted.returncode == 0, linted.stdout
    assert formatted.returncode == 0, formatted.stdout
    assert typed.returncode == 0, typed.stdout


def test_a_value_missing_from_a_stage_is_the_line_the_guide_shows(tmp_path_factory: pytest.TempPathFactory) -> None:
    # GIVEN the guide's project with PARCELS_TABLE taken out of settings.toml
    project = copy_project(tmp_path_factory.mktemp("guide-missing") / "project")
    for path, source in files_to_copy().items():
        project.write(path, source.replace('PARCELS_TABLE = "parcels"\n', ""))
    # WHEN Median GETs the manifest and calls a tool that takes ParcelSettings, as under make serve
    script = (
        "from median_lambda.testing import MedianTestClient; client = MedianTestClient(); "
        "print(client.manifest().status, client.call('parcelLocation', {'parcelNumber': 'P-1042'}).status)"
    )
    finished = project.run("-c", script)
    # THEN GET still answers, the call is a 500, and the output beside it carries the very line the guide prints
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.splitlines()[-1] == "200 500", finished.stdout
    guide = GUIDE.read_text(encoding="utf-8")
    shown = re.search(
        r"^(tools/parcels\.py:\d+: ParcelSettings cannot be read: .*?)\n```", guide, re.MULTILINE | re.DOTALL
    )
    assert shown is not None
    assert " ".join(shown[1].split()) in finished.stderr
    # AND make check names it in every stage, before any deploy
    checked = project.run("-m", "median_lambda", "check")
    assert checked.returncode == 1
    for stage in ("default", "production"):
        assert f"stage {stage}: ParcelSettings cannot be read: PARCELS_TABLE is not set for stage {stage}" in (
            checked.stderr
        )


def template_fragments(directory: Path) -> dict[str, Any]:
    """Each `# template.yaml, under <place>:` snippet (or the pipeline's), parsed as the templates are, by place:
    the snippets of one place together (a mapping's keys, or a list's items)."""
    fragments: dict[str, Any] = {}
    for number, (language, body) in enumerate(fenced_snippets(GUIDE.read_text(encoding="utf-8"))):
        placed = TEMPLATE_PLACE.match(body)
        if placed and language == "yaml":
            # Under a key of its own, so that a list (a role's policies) loads as a mapping's value.
            path = directory / f"fragment-{number}.yaml"
            path.write_text("Fragment:\n" + textwrap.indent(body, "  "), encoding="utf-8")
            fragment = load_template(path)["Fragment"]
            if placed["place"] in fragments:
                joined = fragments[placed["place"]]
                fragments[placed["place"]] = {**joined, **fragment} if isinstance(joined, dict) else joined + fragment
            else:
                fragments[placed["place"]] = fragment
    return fragments


def test_the_guides_template_fragments_grant_exactly_the_tools_calls_on_the_stages_table(tmp_path: Path) -> None:
    # GIVEN template.yaml with the guide's Parameter and policy pasted where the guide says
    fragments = template_fragments(tmp_path)
    assert sorted(fragments) == [
        "MedianToolsFunction's Environment Variables",
        "MedianToolsFunctionRole's Policies",
        "Parameters",
        "Resources",
        "StackRolesPermissionsBoundary's Statement",
        "StackTables' and FunctionKeepsCallRecords' Resource",
    ]
    template = load_template()
    template["Parameters"].update(fragments["Parameters"])
    template["Resources"].update(fragments["Resources"])
    template["Resources"]["MedianToolsFunctionRole"]["Properties"]["Policies"].extend(
        fragments["MedianToolsFunctionRole's Policies"]
    )
    # WHEN make validate's own check runs, and SAM translates it for staging's table name
    problems = check(template)
    role = translated(template, ParcelsTable="parcels-staging").properties("MedianToolsFunctionRole")
    # THEN the check is content (a policy is no part of a version), and the role may make the
    # tools' two calls on that one table, and nothing more on it
    assert problems == []
    [statement] = [
        statement
        for policy in role["Policies"]
        if policy["PolicyName"] == "read-and-book-parcels"
        for statement in policy["PolicyDocument"]["Statement"]
    ]
    assert statement["Action"] == ["dynamodb:GetItem", "dynamodb:UpdateItem"]
    assert statement["Resource"] == "arn:aws:dynamodb:eu-west-1:123456789012:table/parcels-staging"


@pytest.mark.parametrize("table", ["parcels", "parcels-staging"])
def test_the_guides_boundary_statement_allows_what_its_policy_grants_and_no_more(tmp_path: Path, table: str) -> None:
    # GIVEN the pipeline's boundary with the guide's statement pasted in, and the guide's policy for a stage's table
    fragments = template_fragments(tmp_path)
    boundary = [*boundary_statements(), *fragments["StackRolesPermissionsBoundary's Statement"]]
    template = load_template()
    template["Parameters"].update(fragments["Parameters"])
    template["Resources"].update(fragments["Resources"])
    template["Resources"]["MedianToolsFunctionRole"]["Properties"]["Policies"].extend(
        fragments["MedianToolsFunctionRole's Policies"]
    )
    role = translated(template, ParcelsTable=table).properties("MedianToolsFunctionRole")
    [granted] = [policy for policy in role["Policies"] if policy["PolicyName"] == "read-and-book-parcels"]
    # WHEN the boundary is asked about each grant
    for statement in granted["PolicyDocument"]["Statement"]:
        for action in as_list(statement["Action"]):
            # THEN a statement of it allows the grant, so the call is not denied in AWS
            resource = statement["Resource"]
            assert any(
                action in as_list(allowing["Action"])
                and any(fnmatch.fnmatchcase(resource, pipeline_sub(r)) for r in as_list(allowing["Resource"]))
                for allowing in boundary
            ), action
    # AND the boundary still names only the stack's own resources and the company's, one by one
    assert boundary_problems(boundary) == []


@pytest.fixture
def guides_stack_table(tmp_path: Path) -> Path:
    """template.yaml and the pipeline's roles with every fragment of the guide pasted where it says."""
    (tmp_path / "pipeline").mkdir()
    for name in ("template.yaml", "pipeline/oidc-role.yaml"):
        shutil.copy(REPO / name, tmp_path / name)
    pasted = paste_fragments(tmp_path, GUIDE.read_text(encoding="utf-8"))
    assert "Resources" in pasted
    return tmp_path


def test_the_guides_stack_table_is_what_make_validate_takes(guides_stack_table: Path) -> None:
    # GIVEN the guide's table, its variable and its policy in template.yaml's `yours` blocks
    template = load_template(guides_stack_table / "template.yaml")
    table = template["Resources"]["ShipmentNotesTable"]
    # THEN make validate's own check is content, and Checkov's demand for a customer managed key is skipped with
    # the reason a reviewer weighs, as the template's own tables carry it
    assert check(template) == []
    [skip] = table["Metadata"]["checkov"]["skip"]
    assert skip["id"] == "CKV_AWS_119"
    assert len(skip["comment"].split()) >= 15
    # AND the function gets the table's name as CloudFormation gives it, and may make the two calls on it alone
    stack = translated(template)
    variables = stack.properties("MedianToolsFunction")["Environment"]["Variables"]
    assert variables["MEDIAN_SETTING_SHIPMENT_NOTES_TABLE"] == {"Ref": "ShipmentNotesTable"}
    [statement] = [
        statement
        for policy in stack.properties("MedianToolsFunctionRole")["Policies"]
        if policy["PolicyName"] == "keep-shipment-notes"
        for statement in policy["PolicyDocument"]["Statement"]
    ]
    assert statement == {
        "Effect": "Allow",
        "Action": ["dynamodb:GetItem", "dynamodb:PutItem"],
        "Resource": {"Fn::GetAtt": "ShipmentNotesTable.Arn"},
    }


def _roles(root: Path) -> dict[str, Any]:
    resources: dict[str, Any] = load_template(root / "pipeline" / "oidc-role.yaml")["Resources"]
    return resources


def test_the_guides_pipeline_lines_let_the_stack_create_the_table_and_the_function_call_it(
    guides_stack_table: Path,
) -> None:
    # GIVEN the guide's line pasted between both `# >>> yours: tables` lines of the pipeline's roles
    roles = _roles(guides_stack_table)
    boundary = roles["StackRolesPermissionsBoundary"]["Properties"]["PolicyDocument"]["Statement"]
    stack = translated(
        load_template(guides_stack_table / "template.yaml"),
        stack_name="median-tools-staging",
        MedianKeySecretName="median-tools-staging/median-key",
    )
    # THEN the boundary allows every grant of the function's role, the table's included
    assert grants_beyond_the_boundary(stack, boundary) == []
    # AND the execution role may create that table, by its logical id in the stage's stack alone
    [creates] = [
        statement
        for policy in roles["CloudFormationExecutionRole"]["Properties"]["Policies"]
        for statement in policy["PolicyDocument"]["Statement"]
        if statement["Sid"] == "StackTables"
    ]
    table = "arn:aws:dynamodb:eu-west-1:123456789012:table/median-tools-staging-ShipmentNotesTable-ABC123"
    patterns = [pipeline_sub(resource, "median-tools-staging") for resource in creates["Resource"]]
    assert any(fnmatch.fnmatchcase(table, pattern) for pattern in patterns)
    assert not any(fnmatch.fnmatchcase(table.replace("staging", "staging-eu"), pattern) for pattern in patterns)
    # AND the boundary still names only the stack's own resources and the company's, one by one
    assert boundary_problems(boundary) == []
