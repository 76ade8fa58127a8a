"""A user's own Parameter and company boundary statement, written between their `# >>> yours` lines, merge with a
later version of the template that changes the line right beside each block: `copier update`, as `make upgrade`
runs it with the pinned Copier, leaves both sides whole and no conflict.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from maintainers.template_proof import template_clone
from tests.template.copier_runs import commit_all, copier, git

if TYPE_CHECKING:
    from pathlib import Path

# What the user writes inside each block: the lines after the opening marker's comment.
USERS = {
    "template.yaml": (
        "# <<< yours: parameters",
        "  ParcelsTableName:\n    Type: String\n    Default: parcels\n",
    ),
    "pipeline/oidc-role.yaml": (
        "# <<< yours: company",
        "          - Sid: CompanyParcelsTable\n            Effect: Allow\n            Action: dynamodb:GetItem\n"
        "            Resource: !Sub arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/parcels\n",
    ),
}
# What a later version of the template changes: the line right before each block's opening line.
TEMPLATES = {
    "template.yaml": (
        "    ConstraintDescription: empty, or a managed policy's name (not its ARN).\n",
        "    ConstraintDescription: empty, or the name (not the ARN) of a managed policy.\n",
    ),
    "pipeline/oidc-role.yaml": (
        '            Action: cloudwatch:DescribeAlarms\n            Resource: "*"\n',
        '            Action: cloudwatch:DescribeAlarms\n            Resource: ["*"]\n',
    ),
}


def insert_before(text: str, marker: str, addition: str) -> str:
    assert text.count(marker) == 1, marker
    start = text.rindex("\n", 0, text.index(marker)) + 1
    return text[:start] + addition + text[start:]


@pytest.fixture(scope="module")
def upgraded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with the user's lines in the blocks, updated to a version that changed the lines beside them."""
    scratch = tmp_path_factory.mktemp("blocks")
    template = template_clone(scratch)
    project = scratch / "project"
    copier(scratch, "copy", "--vcs-ref", "HEAD", str(template), str(project))
    for name, (marker, lines) in USERS.items():
        path = project / name
        path.write_text(insert_before(path.read_text(encoding="utf-8"), marker, lines), encoding="utf-8")
    git(project, "init", "--quiet")
    commit_all(project, "copier copy, and a table of the company's")
    for name, (before, after) in TEMPLATES.items():
        text = (template / name).read_text(encoding="utf-8")
        following = text[text.index(before) + len(before) :]
        assert following.lstrip().startswith("# >>> yours:"), f"{name}: the change is not right beside the block"
        (template / name).write_text(text.replace(before, after), encoding="utf-8")
    commit_all(template, "A later version: the lines beside the yours blocks change")
    copier(project, "update", "--vcs-ref", "HEAD")
    return project


@pytest.mark.parametrize("name", sorted(USERS))
def test_the_users_lines_and_the_templates_change_beside_them_merge_cleanly(upgraded: Path, name: str) -> None:
    # GIVEN the project after the update
    text = (upgraded / name).read_text(encoding="utf-8")
    marker, users = USERS[name]
    before, after = TEMPLATES[name]
    # THEN no conflict was left, the template's change is in, and the user's lines are where they wrote them
    assert "<<<<<<<" not in text and ">>>>>>>" not in text
    assert after in text and before not in text
    closing = next(line for line in text.splitlines() if marker in line)
    assert users + closing + "\n" in text
