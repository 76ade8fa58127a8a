"""A 3.0.0 project takes SnapStart as a stage's parameter with nothing to do by hand.

Up to 3.0.0, SnapStart was switched on by editing one line of template.yaml, which the next version
rewrites: `copier update` (as `make upgrade` runs it, with the pinned Copier) would leave the two
between conflict markers. The upgrade's migration (median_lambda.project.migrations'
snapstart_as_a_parameter, which the upgrade guard runs after the merge) turns that edit into
`EnableSnapStart=true` in each deploy of samconfig.toml, and a project that never switched it on
gets no conflict and no such value. A line of the user's beside it (an alarm email in production's
overrides) is kept, as are the user's edits at the ends of .gitignore, pyproject.toml and the README,
beside which no later version may add its own lines (its `yours` blocks included).
"""

from __future__ import annotations

import tomllib
from typing import TYPE_CHECKING

import pytest
from median_lambda.project.sam_config import parameter_overrides

from maintainers.template_proof import template_clone
from tests.template.copier_runs import commit_all, copier, git

if TYPE_CHECKING:
    from pathlib import Path

SWITCH_OFF = 'SnapStartEnabled: !Equals ["off", "on"]'
SWITCH_ON = 'SnapStartEnabled: !Equals ["on", "on"]'
PRODUCTION = 'Stage=production DeploymentType=Canary10Percent10Minutes"'
WITH_AN_EMAIL = 'Stage=production DeploymentType=Canary10Percent10Minutes AlarmEmail=oncall@example.com"'
# What a user of 3.0.0 edits where the docs send them, at the files' ends, where later versions add lines too:
# (the text as 3.0.0 wrote it, the text as the user left it).
ORDINARY_EDITS = {
    ".gitignore": ("/tools/*settings.local.toml*\n", "/tools/*settings.local.toml*\n/notes/\n"),
    "pyproject.toml": ("include = []\n", 'include = ["tools/data/*.json"]\n'),
    "README.md": ("| [layout](", "| [runbook](docs/runbook.md) | what the on-call engineer does |\n| [layout]("),
}


@pytest.fixture(scope="module", params=["switched on", "as shipped"])
def upgraded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, Path]:
    """A 3.0.0 project, with SnapStart's line switched on or not and an alarm email of the user's, upgraded."""
    scratch = tmp_path_factory.mktemp("snapstart")
    template = template_clone(scratch)
    project = scratch / "project"
    copier(scratch, "copy", "--vcs-ref", "v3.0.0", str(template), str(project))
    text = (project / "template.yaml").read_text(encoding="utf-8")
    assert text.count(SWITCH_OFF) == 1, "3.0.0's template.yaml switches SnapStart by this line"
    if request.param == "switched on":
        (project / "template.yaml").write_text(text.replace(SWITCH_OFF, SWITCH_ON), encoding="utf-8")
    samconfig = (project / "samconfig.toml").read_text(encoding="utf-8")
    (project / "samconfig.toml").write_text(samconfig.replace(PRODUCTION, WITH_AN_EMAIL), encoding="utf-8")
    for name, (where, edit) in ORDINARY_EDITS.items():
        text = (project / name).read_text(encoding="utf-8")
        assert text.count(where) == 1, f"{name}: 3.0.0's file has {where!r} once"
        (project / name).write_text(text.replace(where, edit), encoding="utf-8")
    git(project, "init", "--quiet")
    commit_all(project, f"copier copy, SnapStart {request.param}, an alarm email, edits at the files' ends")
    copier(project, "update", "--vcs-ref", "HEAD", "--conflict", "inline")
    return str(request.param), project, template


def test_the_upgrade_leaves_no_conflict_and_the_templates_lines(upgraded: tuple[str, Path, Path]) -> None:
    # GIVEN the project after the upgrade
    _, project, template = upgraded
    # THEN nothing is left unmerged, and template.yaml is the new version's own
    assert git(project, "ls-files", "--unmerged") == ""
    text = (project / "template.yaml").read_text(encoding="utf-8")
    assert "<<<<<<<" not in text and ">>>>>>>" not in text
    assert text == (template / "template.yaml").read_text(encoding="utf-8")


def test_snapstart_stays_as_the_project_had_it_in_every_deploy(upgraded: tuple[str, Path, Path]) -> None:
    # GIVEN the project after the upgrade
    switched, project, _ = upgraded
    config = tomllib.loads((project / "samconfig.toml").read_text(encoding="utf-8"))
    deploys = {
        name: parameter_overrides(config[name]["deploy"]["parameters"]) for name in ("default", "staging", "production")
    }
    # THEN every stack it deploys has SnapStart on exactly when its line had switched it on, for all
    expected = "true" if switched == "switched on" else None
    assert {name: values.get("EnableSnapStart") for name, values in deploys.items()} == dict.fromkeys(deploys, expected)
    # AND the user's own value beside it is kept
    assert deploys["production"]["AlarmEmail"] == "oncall@example.com"


@pytest.mark.parametrize("name", sorted(ORDINARY_EDITS))
def test_a_users_edits_at_a_files_end_merge_with_what_the_version_adds(
    upgraded: tuple[str, Path, Path], name: str
) -> None:
    # GIVEN the project after the upgrade, edited by its user where 3.0.0's files end
    _, project, _ = upgraded
    _, edit = ORDINARY_EDITS[name]
    # THEN the file merged without a conflict, the user's edit in it
    assert git(project, "ls-files", "--unmerged", "--", name) == ""
    text = (project / name).read_text(encoding="utf-8")
    assert "<<<<<<<" not in text and ">>>>>>>" not in text
    assert edit in text
