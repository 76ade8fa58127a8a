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

from tests.project_copy import REPO, ProjectCopy, copy_project

if TYPE_CHECKING:
    from pathlib import Path

PARAMETER = """\
  ParcelsTableName:
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
                Resource: !Sub arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${ParcelsTableName}
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
        samconfig = samconfig.replace(written, f" Stage={stage} ParcelsTableName=parcels-{stage}")
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
            f"stage {stage}: template.yaml grants the function dynamodb:GetItem on "
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
