"""The contract suite holds the pipeline's permissions boundary to the function's role in each stage, with that
stage's own values from samconfig.toml: a user's table Parameter set per stage is checked at each stage's value,
not only at its default.

A project copy (tests/project_copy.py) with docs/your-own-systems.md's Parameter and policy in template.yaml's
`# >>> yours` blocks, samconfig.toml's stages setting the table per stage, and the boundary's `Company`
statement in pipeline/oidc-role.yaml's: the contract suite's boundary test runs there as `make test` runs it.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from median_lambda.contract.test_permissions_boundary import Beyond, boundary_statements, where_to_allow

from tests.project_copy import REPO, ProjectCopy, copy_project, paste_fragments

if TYPE_CHECKING:
    from pathlib import Path

PARAMETER = """\
  ParcelsTable:
    Type: String
    Description: The company's parcels table, which tools/parcels.py reads and updates.
    Default: parcels
    AllowedPattern: "^[A-Za-z0-9_.-]{3,255}$"
"""
POLICY = """\
        - PolicyName: read-and-book-parcels
          PolicyDocument:
            Version: "2012-10-17"
            Statement:
              - Effect: Allow
                Action:
                  - dynamodb:GetItem
                  - dynamodb:UpdateItem
                Resource: !Sub arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${ParcelsTable}
"""
TABLE_ARN = "              - !Sub arn:${{AWS::Partition}}:dynamodb:${{AWS::Region}}:${{AWS::AccountId}}:table/{table}\n"
BOUNDARY = """\
          - Sid: CompanyParcelsTable
            Effect: Allow
            Action:
              - dynamodb:GetItem
              - dynamodb:UpdateItem
            Resource:
"""
# The contract suite's boundary tests, as a project runs them (its one file for median-lambda's contract suite).
BOUNDARY_TEST = ("tests/test_median_contract.py", "-k", "boundary")


def insert_before(text: str, marker: str, addition: str) -> str:
    """`addition` on the lines before the one holding `marker` (a `# <<< yours: ...` line)."""
    assert text.count(marker) == 1, marker
    start = text.rindex("\n", 0, text.index(marker)) + 1
    return text[:start] + addition + text[start:]


def project_with_parcels(root: Path, boundary_tables: list[str]) -> ProjectCopy:
    """The guide's table Parameter and policy; staging and production each with a table of its own; the boundary
    naming `boundary_tables`."""
    project = copy_project(root)
    shutil.copytree(REPO / "pipeline", root / "pipeline")
    template = project.read("template.yaml")
    template = insert_before(template, "# <<< yours: parameters", PARAMETER)
    template = insert_before(template, "# <<< yours: policies", POLICY)
    (root / "template.yaml").write_text(template, encoding="utf-8")
    samconfig = (REPO / "samconfig.toml").read_text(encoding="utf-8")
    for stage in ("staging", "production"):
        written = f" Stage={stage}"  # in the stage's parameter_overrides, and nowhere else
        assert samconfig.count(written) == 1
        samconfig = samconfig.replace(written, f" Stage={stage} ParcelsTable=parcels-{stage}")
    (root / "samconfig.toml").write_text(samconfig, encoding="utf-8")
    roles = project.read("pipeline/oidc-role.yaml")
    statement = BOUNDARY + "".join(TABLE_ARN.format(table=table) for table in boundary_tables)
    (root / "pipeline" / "oidc-role.yaml").write_text(
        insert_before(roles, "# <<< yours: company", statement), encoding="utf-8"
    )
    return project


def test_a_stages_table_missing_from_the_boundary_fails_the_contract_naming_the_stage(tmp_path: Path) -> None:
    # GIVEN a boundary that names the Parameter's default table only, while each stage deploys a table of its own
    project = project_with_parcels(tmp_path / "project", ["parcels"])
    # WHEN the contract suite's boundary test runs
    finished = project.pytest(*BOUNDARY_TEST)
    # THEN it fails for staging and production, each naming its own table and where to add it
    assert finished.returncode == 1, finished.stdout
    for stage in ("staging", "production"):
        assert (
            f"stage {stage}: template.yaml grants the function dynamodb:GetItem, dynamodb:UpdateItem on "
            f"arn:aws:dynamodb:eu-west-1:123456789012:table/parcels-{stage}, which the permissions boundary does "
            "not allow: add it to StackRolesPermissionsBoundary in pipeline/oidc-role.yaml"
        ) in finished.stdout
    # AND only that test failed, once for each stage, traced or not
    # (a wide terminal appends " - <the message>" to each FAILED line of pytest's summary)
    failed = sorted(
        line.split("::")[1].split(" - ")[0] for line in finished.stdout.splitlines() if line.startswith("FAILED")
    )
    assert failed == [
        f"test_the_boundary_allows_everything_each_role_of_the_stack_is_granted_in_each_stage[{stage}-{tracing}]"
        for stage in ("production", "staging")
        for tracing in ("false", "true")
    ]


def test_with_each_stages_table_in_the_boundary_the_contract_passes(tmp_path: Path) -> None:
    # GIVEN the boundary naming every stage's table
    project = project_with_parcels(tmp_path / "project", ["parcels", "parcels-staging", "parcels-production"])
    # WHEN the contract suite's boundary test runs
    finished = project.pytest("-vv", *BOUNDARY_TEST)
    # THEN it passes, with both stages checked
    assert finished.returncode == 0, finished.stdout
    for stage in ("staging", "production"):
        assert f"is_granted_in_each_stage[{stage}-false] PASSED" in finished.stdout


def test_a_stack_table_and_a_company_table_missing_from_the_pipeline_are_each_said_whole_where_they_go(
    tmp_path: Path,
) -> None:
    # GIVEN docs/your-own-systems.md's template fragments, a company's table and one the stack creates, pasted
    # into template.yaml, and none of its lines in pipeline/oidc-role.yaml
    project = copy_project(tmp_path / "project")
    shutil.copytree(REPO / "pipeline", tmp_path / "project" / "pipeline")
    shutil.copy(REPO / "samconfig.toml", tmp_path / "project" / "samconfig.toml")
    paste_fragments(project.root, (REPO / "docs" / "your-own-systems.md").read_text(encoding="utf-8"))
    shutil.copy(REPO / "pipeline" / "oidc-role.yaml", tmp_path / "project" / "pipeline" / "oidc-role.yaml")
    # WHEN the contract suite's boundary test runs as make test runs it, at pytest's default verbosity
    finished = project.pytest(*BOUNDARY_TEST)
    # THEN each stage's failure says, whole, the stack's own table's line and both blocks it goes in
    assert finished.returncode == 1, finished.stdout
    for stage in ("staging", "production"):
        stack = f"median-tools-{stage}"
        assert (
            f"stage {stage}: template.yaml grants the function dynamodb:GetItem, dynamodb:PutItem on "
            f"arn:aws:dynamodb:eu-west-1:123456789012:table/{stack}-ShipmentNotesTable-ABC123, the stack's own table "
            "ShipmentNotesTable, which the permissions boundary does not allow. In pipeline/oidc-role.yaml, add\n"
            "    - !Sub arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/"
            "${AppStackName}-ShipmentNotesTable-*\n"
            "between the `# >>> yours: tables` lines of StackRolesPermissionsBoundary's FunctionKeepsCallRecords "
            "(what the function may call on it), and between those of the execution role's StackTables (so that the "
            "pipeline may create it). Then update each stage's pipeline stack before deploying."
        ) in finished.stdout
        # AND the company's table, by its name, in a Company statement of the company's block
        assert (
            f"stage {stage}: template.yaml grants the function dynamodb:GetItem, dynamodb:UpdateItem on "
            "arn:aws:dynamodb:eu-west-1:123456789012:table/parcels, which the permissions boundary does not allow: "
            "add it to StackRolesPermissionsBoundary in pipeline/oidc-role.yaml (a resource of the company's, by its "
            "name, in a statement whose Sid starts with Company, between its `# >>> yours: company` lines), and "
            "update each stage's pipeline stack before deploying."
        ) in finished.stdout
    assert "truncated" not in finished.stdout


def test_a_call_the_tables_statement_does_not_allow_is_sent_to_a_statement_of_its_own() -> None:
    # GIVEN the function granted a Query, beside a GetItem, on a table the stack creates, which the boundary lacks
    table = "arn:aws:dynamodb:eu-west-1:123456789012:table/median-tools-staging-ShipmentNotesTable-ABC123"
    beyond = [
        Beyond(action, table, "ShipmentNotesTable", "AWS::DynamoDB::Table")
        for action in ("dynamodb:GetItem", "dynamodb:Query")
    ]
    # WHEN what to write is said
    said = where_to_allow("staging", beyond, boundary_statements())
    # THEN both calls are named once, with the line for the tables blocks, and the Query's own statement
    assert said.count("stage staging:") == 1
    assert "grants the function dynamodb:GetItem, dynamodb:Query on " in said
    assert (
        "; FunctionKeepsCallRecords allows dynamodb:GetItem, dynamodb:PutItem, dynamodb:UpdateItem, "
        "dynamodb:DeleteItem only, so dynamodb:Query needs a statement of its own on that table, between the "
        "boundary's `# >>> yours: company` lines. Then update each stage's pipeline stack before deploying."
    ) in said
