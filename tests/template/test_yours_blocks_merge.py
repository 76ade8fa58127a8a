"""What a user writes between a file's `# >>> yours` lines (template.yaml's, the pipeline's, samconfig.toml's,
pyproject.toml's, .gitignore's, the README's) merges with a later version of the template that changes the line
right beside each block: `copier update`, as `make upgrade`
runs it with the pinned Copier, leaves both sides whole and no conflict.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from maintainers.template_proof import template_clone
from tests.template.copier_runs import commit_all, copier, git

if TYPE_CHECKING:
    from pathlib import Path

# What the user writes inside each block: the lines before its closing marker.
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
    "samconfig.toml": ("# <<< yours: config-envs", '[dev.global.parameters]\nstack_name = "median-tools-dev"\n'),
    "pyproject.toml": ("# <<< yours: settings", "[tool.coverage.run]\nbranch = true\n"),
    ".gitignore": ("# <<< yours: ignores", "/notes/\n"),
    "README.md": ("<!-- <<< yours: notes -->", "## Runbook\n\nPage the on-call engineer.\n"),
}
# What a later version of the template changes, in the file Copier renders each from: the line right before each
# block's opening line, or right after its closing line.
TEMPLATES = {
    "template.yaml": (
        "    ConstraintDescription: empty, or a managed policy's name (not its ARN).\n",
        "    ConstraintDescription: empty, or the name (not the ARN) of a managed policy.\n",
    ),
    "pipeline/oidc-role.yaml": (
        '            Action: cloudwatch:DescribeAlarms\n            Resource: "*"\n',
        '            Action: cloudwatch:DescribeAlarms\n            Resource: ["*"]\n',
    ),
    "samconfig.toml.jinja": ("version = 0.1\n\n", "version = 0.1  # the file's format\n\n"),
    "pyproject.toml.jinja": (
        "#                            parts (tests, make serve, the CLI), the linters, uv\n",
        "#                            parts (tests, make serve, the CLI), the linters and uv\n",
    ),
    # The block opens the file: the line right after it changes.
    ".gitignore.jinja": (".venv\n__pycache__/\n", ".venv/\n__pycache__/\n"),
    "README.md.jinja": (
        "| `.copier-answers.yml` | Copier's | rewrites it: never edit it |\n",
        "| `.copier-answers.yml` | Copier's | rewrites it; never edit it by hand |\n",
    ),
}


def rendered_from(name: str) -> str:
    """The project's file a template file renders: X from X.jinja."""
    return name.removesuffix(".jinja")


def shown(source: str) -> str:
    """A template file's text as its project's file holds it, where that text is Jinja's tags and plain lines."""
    return re.sub(r"\{%-?.*?-?%\}\n*", "", source)


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
        following = text[text.index(before) + len(before) :].lstrip().splitlines()
        preceding = text[: text.index(before)].rstrip().splitlines()
        beside = ">>> yours:" in following[0] or bool(preceding and "<<< yours:" in preceding[-1])
        assert beside, f"{name}: the change is not right beside the block"
        (template / name).write_text(text.replace(before, after), encoding="utf-8")
    commit_all(template, "A later version: the lines beside the yours blocks change")
    copier(project, "update", "--vcs-ref", "HEAD")
    return project


@pytest.mark.parametrize("name", sorted(USERS))
def test_the_users_lines_and_the_templates_change_beside_them_merge_cleanly(upgraded: Path, name: str) -> None:
    # GIVEN the project after the update
    text = (upgraded / name).read_text(encoding="utf-8")
    marker, users = USERS[name]
    [(before, after)] = [change for source, change in TEMPLATES.items() if rendered_from(source) == name]
    # THEN no conflict was left, the template's change is in, and the user's lines are where they wrote them
    assert "<<<<<<<" not in text and ">>>>>>>" not in text
    assert shown(after) in text
    assert not shown(before) or shown(before) not in text
    closing = next(line for line in text.splitlines() if marker in line)
    assert users + closing + "\n" in text
