"""`make check` refuses a stage or stack name in samconfig.toml that cannot deploy, naming the rule it breaks.

The same rules as copier.yml's validators, where the names are first chosen (tests/template/test_copier.py):
each family is tested whole, against the deploy workflow and the pipeline's roles as they are.
"""

from __future__ import annotations

import shutil
import textwrap
import tomllib
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml
from median_lambda.authoring.settings import forget_configuration
from median_lambda.cli.commands import main
from median_lambda.project.deploy_names import (
    RESERVED_JOBS,
    YAML_NON_STRINGS,
    Longest,
    longest_stack_name,
    stack_problem,
)
from median_lambda.project.sam_config import load_template
from median_lambda.protocol import TOOLS_PACKAGE_ENV
from median_lambda.runtime.env import shown_path

if TYPE_CHECKING:
    from collections.abc import Iterator

    from median_lambda.authoring.registry import Registry

ROOT = Path(__file__).resolve().parents[2]
ROLES = ROOT / "pipeline" / "oidc-role.yaml"
# Words near YAML's non-strings (median_lambda.project.deploy_names.YAML_NON_STRINGS) that are names.
YAML_STRINGS = ("yess", "nope", "online", "nullable", "truest", "n1", "offline")


class Project:
    """A project root of the test's own: an empty tools package, template.yaml, the pipeline's roles, samconfig.toml."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def samconfig(self, stages: dict[str, str], default_stack: str = "median-tools") -> None:
        """samconfig.toml with `make deploy`'s stack and a pipeline stage per (config-env, stack_name)."""
        lines = ["version = 0.1", "[default.global.parameters]", f"stack_name = {_toml(default_stack)}"]
        lines += ["[default.deploy.parameters]", 'parameter_overrides = "MedianKeySecretName=median-tools/median-key"']
        for stage, stack in stages.items():
            lines += [f"[{_toml(stage)}.global.parameters]", f"stack_name = {_toml(stack)}"]
            lines += [f"[{_toml(stage)}.deploy.parameters]", "confirm_changeset = false"]
        (self.root / "samconfig.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
        forget_configuration()


def _toml(text: str) -> str:
    """A TOML basic string: what samconfig.toml holds once a name with a newline is written into it."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scratch_registry: Registry) -> Iterator[Project]:
    name = f"named_tools_{uuid.uuid4().hex[:8]}"
    tools = tmp_path / name
    tools.mkdir()
    (tools / "__init__.py").write_text("", encoding="utf-8")
    (tools / "settings.toml").write_text("[default]\n", encoding="utf-8")
    (tmp_path / "template.yaml").write_text(
        textwrap.dedent("""
            Parameters:
              Stage:
                Type: String
                Default: default
            Resources:
              MedianToolsFunction:
                Type: AWS::Serverless::Function
        """),
        encoding="utf-8",
    )
    (tmp_path / "pipeline").mkdir()
    shutil.copy2(ROLES, tmp_path / "pipeline" / "oidc-role.yaml")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(TOOLS_PACKAGE_ENV, name)
    yield Project(tmp_path)
    forget_configuration()


def check(capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(["check", "--no-local"])
    return code, capsys.readouterr().err.splitlines()


def test_the_reserved_names_are_the_deploy_workflows_own_jobs() -> None:
    # GIVEN the deploy workflow and the stages samconfig.toml deploys
    jobs = set(yaml.safe_load((ROOT / ".github/workflows/deploy.yml").read_text(encoding="utf-8"))["jobs"])
    samconfig = tomllib.loads((ROOT / "samconfig.toml").read_text(encoding="utf-8"))
    stages = {name for name, sections in samconfig.items() if isinstance(sections, dict) and name != "default"}
    # THEN its jobs are one per stage, and the reserved ones: no other name can collide with a job
    assert stages <= jobs
    assert jobs - stages == set(RESERVED_JOBS)


@pytest.mark.parametrize("name", RESERVED_JOBS)
def test_a_stage_named_as_a_job_of_the_deploy_workflow_is_refused(
    project: Project, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    # GIVEN a pipeline stage whose name is the deploy workflow's own job
    project.samconfig({name: f"median-tools-{name}"})
    # WHEN make check runs
    code, err = check(capsys)
    # THEN it fails on that stage, naming the collision
    assert code == 1
    assert (
        f"samconfig.toml [{name}]: {name!r} is the deploy workflow's own job (.github/workflows/deploy.yml): a stage "
        "of that name would be a second job under the same key. Name the stage otherwise"
    ) in err
    assert err[-1] == "1 deployment problem(s): samconfig.toml names what cannot deploy."


@pytest.mark.parametrize("name", YAML_NON_STRINGS)
def test_a_stage_yaml_reads_as_no_name_is_refused(
    project: Project, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    # GIVEN a pipeline stage named as YAML spells a boolean or null
    project.samconfig({name: f"median-tools-{name}"})
    # WHEN make check runs
    code, err = check(capsys)
    # THEN it fails, saying what YAML reads instead of a name
    shown = "null" if name == "null" else "a boolean"
    assert code == 1
    assert f"samconfig.toml [{name}]: {name!r} is {shown} to YAML, not a name" in err[0], err


@pytest.mark.parametrize("name", YAML_STRINGS)
def test_a_name_that_only_looks_like_a_yaml_word_deploys(
    project: Project, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    # GIVEN a stage whose name starts as a YAML word does, and is a name
    project.samconfig({name: f"median-tools-{name}"})
    # THEN make check passes
    assert check(capsys)[0] == 0


@pytest.mark.parametrize(
    ("stages", "default", "refused"),
    [
        ({"staging": "median-tools-staging\n"}, "median-tools", "samconfig.toml [staging]: stack_name "),
        ({"staging": "median-tools-staging"}, "median-tools\n", "samconfig.toml [default]: stack_name "),
        (
            {"staging\n": "median-tools-staging"},
            "median-tools",
            "samconfig.toml [\"staging\\n\"]: 'staging\\n': a stage",
        ),
        ({"Staging": "median-tools-staging"}, "median-tools", "samconfig.toml [Staging]: 'Staging': a stage"),
        ({"staging": "median_tools-staging"}, "median-tools", "samconfig.toml [staging]: stack_name "),
    ],
    ids=["stage-stack-newline", "default-stack-newline", "stage-newline", "uppercase-stage", "underscore-stack"],
)
def test_a_name_is_held_to_its_rule_whole_a_trailing_newline_included(
    project: Project, capsys: pytest.CaptureFixture[str], stages: dict[str, str], default: str, refused: str
) -> None:
    # GIVEN a name that matches its rule but for a last character (a trailing newline, which `$` lets through)
    project.samconfig(stages, default_stack=default)
    # WHEN make check runs
    code, err = check(capsys)
    # THEN it is refused, with its rule
    assert code == 1
    assert any(line.startswith(refused) for line in err), err


def test_the_longest_stage_stack_is_the_one_whose_function_role_keeps_its_name_whole() -> None:
    # GIVEN the pipeline's roles, which name the stage stack's resources by the names CloudFormation gives them
    longest = longest_stack_name(load_template(ROLES))
    # THEN the stack's name may be 26 characters: <stack>-MedianToolsFunctionRole-<13> is 64, IAM's limit on a role
    assert longest.length == 64 - len("-MedianToolsFunctionRole-") - 13 == 26
    assert "<stack>-MedianToolsFunctionRole-<13 characters>, an IAM role's name of at most 64" in longest.because


def test_the_longest_stage_stack_deploys_and_one_character_more_is_refused(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a stage whose stack's name is as long as the pipeline's roles allow
    longest = longest_stack_name(load_template(ROLES)).length
    fits = "median-tools-" + "s" * (longest - len("median-tools-"))
    project.samconfig({"staging": fits})
    # THEN make check passes
    assert check(capsys)[0] == 0
    # WHEN the name is one character longer
    project.samconfig({"staging": fits + "s"})
    code, err = check(capsys)
    # THEN it is refused, naming the role whose name CloudFormation would cut, and the pattern it would then miss
    assert code == 1
    assert err[0] == (
        f"samconfig.toml [staging]: stack_name '{fits}s' is {longest + 1} characters, and at most {longest} deploy: "
        "CloudFormation names a resource <stack>-MedianToolsFunctionRole-<13 characters>, an IAM role's name of at "
        "most 64 characters, and cuts a longer one, which pipeline/oidc-role.yaml's "
        "${AppStackName}-MedianToolsFunctionRole-* then no longer matches. Shorten the stack's name"
    )
    # AND `make deploy`'s own stack, which no pipeline role names, may be longer
    project.samconfig({}, default_stack=fits + "s")
    assert check(capsys)[0] == 0


def test_a_role_the_pipeline_names_with_a_longer_logical_id_shortens_the_stack_name() -> None:
    # GIVEN the pipeline's roles naming one more role of the stack, with a longer logical id
    roles = load_template(ROLES)
    resource = "arn:${AWS::Partition}:iam::${AWS::AccountId}:role/${AppStackName}-CompanyWarehouseReaderRole-*"
    statement = {"Effect": "Allow", "Action": "iam:GetRole", "Resource": {"Fn::Sub": resource}}
    execution = roles["Resources"]["CloudFormationExecutionRole"]["Properties"]["Policies"][0]["PolicyDocument"]
    execution["Statement"].append(statement)
    # WHEN the longest stack name is worked out
    longest = longest_stack_name(roles)
    # THEN that role's name sets it
    assert longest.length == 64 - len("-CompanyWarehouseReaderRole-") - 13
    assert "${AppStackName}-CompanyWarehouseReaderRole-*" in longest.because


def test_a_name_the_pipeline_writes_whole_is_refused_not_cut() -> None:
    # GIVEN the pipeline's roles, without those naming generated names
    roles = {"Resources": {"Boundary": {"Type": "AWS::IAM::ManagedPolicy", "Properties": {
        "ManagedPolicyName": {"Fn::Sub": "${AppStackName}-permissions-boundary"}}}}}  # fmt: skip
    # WHEN the longest stack name is worked out
    longest = longest_stack_name(roles)
    # THEN the boundary's name, which CloudFormation would refuse past IAM's 128, sets it
    assert longest == Longest(128 - len("-permissions-boundary"), longest.because)
    assert longest.because.endswith("an IAM policy's name of at most 128 characters, and refuses a longer one")
    assert stack_problem("a" * 108, longest) is not None and stack_problem("a" * 107, longest) is None


PARCELS_TEMPLATE = """\
Parameters:
  Stage:
    Type: String
    Default: default
  ParcelsTable:
    Type: String
    Default: parcels
Resources:
  MedianToolsFunction:
    Type: AWS::Serverless::Function
    Properties:
      Environment:
        Variables:
          MEDIAN_STAGE: !Ref Stage
"""


def parcels_project(project: Project, *, production: str, settings: str, template: str = PARCELS_TEMPLATE) -> None:
    """A company's table named twice: template.yaml's Parameter ParcelsTable, set for production in samconfig.toml,
    and tools/settings.toml's PARCELS_TABLE, `settings` its tables."""
    (project.root / "template.yaml").write_text(template, encoding="utf-8")
    [tools] = [path for path in project.root.iterdir() if path.name.startswith("named_tools_")]
    (tools / "settings.toml").write_text(settings, encoding="utf-8")
    overrides = _toml(f"Stage=production ParcelsTable={production}")
    (project.root / "samconfig.toml").write_text(
        'version = 0.1\n[default.global.parameters]\nstack_name = "median-tools"\n'
        '[production.global.parameters]\nstack_name = "median-tools-production"\n'
        f"[production.deploy.parameters]\nparameter_overrides = {overrides}\n",
        encoding="utf-8",
    )
    forget_configuration()


SETTINGS = '[default]\nPARCELS_TABLE = "parcels"\n\n[production]\nPARCELS_TABLE = "parcels-production"\n'


def test_a_table_named_otherwise_in_samconfig_and_settings_for_a_stage_is_named(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN production's table named parcels-prod in samconfig.toml, and parcels-production in tools/settings.toml
    parcels_project(project, production="parcels-prod", settings=SETTINGS)
    # WHEN make check runs
    code, err = check(capsys)
    # THEN it fails on that deploy, naming both values and where each is
    assert code == 1
    [tools] = [path for path in project.root.iterdir() if path.name.startswith("named_tools_")]
    assert (
        "samconfig.toml [production]: deploys stage production with ParcelsTable=parcels-prod but "
        f"{shown_path(str(tools / 'settings.toml'))} [production] has PARCELS_TABLE = 'parcels-production': the "
        "template grants the function what the one names, and the tool calls what the other does, which AWS would "
        "deny. Give both the same value"
    ) in err
    # AND make deploy's stage, the Parameter's default and [default]'s table alike, is not named
    assert not any(line.startswith("samconfig.toml [default]") for line in err)


def test_a_parameters_default_is_held_to_the_stages_setting_too(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN make deploy's stage taking the Parameter's default, parcels, while settings.toml names another
    parcels_project(project, production="parcels-production", settings=SETTINGS.replace('"parcels"', '"parcel"'))
    # WHEN make check runs
    code, err = check(capsys)
    # THEN it names make deploy's config-env and the Default it deploys with
    assert code == 1
    assert any(
        line.startswith("samconfig.toml [default]: deploys stage default with ParcelsTable's Default, parcels, but ")
        for line in err
    ), err


@pytest.mark.parametrize(
    "template",
    [PARCELS_TEMPLATE, PARCELS_TEMPLATE + "          MEDIAN_SETTING_PARCELS_TABLE: !Ref ParcelsTable\n"],
    ids=["the same value in both", "the Parameter passed to the tool"],
)
def test_one_name_for_the_table_passes(project: Project, capsys: pytest.CaptureFixture[str], template: str) -> None:
    # GIVEN the two files agreeing in every stage, or the template overriding the setting with the Parameter
    production = "parcels-production" if template == PARCELS_TEMPLATE else "parcels-prod"
    parcels_project(project, production=production, settings=SETTINGS, template=template)
    # WHEN make check runs
    # THEN it passes
    assert check(capsys)[0] == 0
