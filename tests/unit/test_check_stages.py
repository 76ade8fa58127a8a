"""`make check` holds the settings to every stage a deploy can serve, read from the samconfig.toml and
template.yaml beside the tools, and prints the value each stage gets and where it comes from."""

from __future__ import annotations

import textwrap
import uuid
from typing import TYPE_CHECKING

import pytest

from handler.authoring.settings import forget_configuration
from handler.cli.commands import main
from handler.protocol import TOOLS_PACKAGE_ENV
from handler.runtime.env import shown_path

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from handler.authoring.registry import Registry

TOOL = '''
from pydantic import BaseModel

from handler import Secret, Settings, tool


class CarrierSettings(Settings):
    carrier_base_url: str
    carrier_timeout_seconds: float = 5.0
    parcels_table: str


class ParcelInput(BaseModel):
    parcel: str


@tool(risk="low")
def parcel_eta(
    args: ParcelInput, settings: CarrierSettings, token: str = Secret(setting="CARRIER_TOKEN_SECRET")
) -> dict:
    """Ask the carrier when a parcel arrives."""
    return {}
'''
SETTINGS = """
[default]
CARRIER_BASE_URL = "https://sandbox.carrier.example"
CARRIER_TOKEN_SECRET = "median-tools/carrier-token"
PARCELS_TABLE = "parcels"

[staging]
CARRIER_TOKEN_SECRET = "median-tools-staging/carrier-token"

[production]
CARRIER_BASE_URL = "https://api.carrier.example"
CARRIER_TIMEOUT_SECONDS = 3
"""
# A template whose function overrides one setting for every deploy: the stack's own table.
TEMPLATE = """
Parameters:
  Stage:
    Type: String
    Default: default
Resources:
  ParcelsTable:
    Type: AWS::DynamoDB::Table
  MedianToolsFunction:
    Type: AWS::Serverless::Function
    Properties:
      Environment:
        Variables:
          MEDIAN_STAGE: !Ref Stage
          MEDIAN_SETTING_PARCELS_TABLE: !Ref ParcelsTable
          MEDIAN_SETTING_CARRIER_BASE_URL: ""
"""
SAMCONFIG = """
version = 0.1
[default.deploy.parameters]
parameter_overrides = "MedianKeySecretName=\\"median-tools/median-key\\""
[staging.deploy.parameters]
parameter_overrides = "Stage=staging"
[production.deploy.parameters]
parameter_overrides = "Stage=production"
"""


class Project:
    """A project root of the test's own: its tools package, settings, template.yaml and samconfig.toml."""

    def __init__(self, root: Path, tools: Path) -> None:
        self.root, self.tools = root, tools

    def write(self, relative: str, text: str) -> None:
        (self.root / relative).write_text(textwrap.dedent(text), encoding="utf-8")
        forget_configuration()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scratch_registry: Registry) -> Iterator[Project]:
    name = f"checked_tools_{uuid.uuid4().hex[:8]}"
    tools = tmp_path / name
    tools.mkdir()
    (tools / "__init__.py").write_text("", encoding="utf-8")
    (tools / "carrier.py").write_text(TOOL, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(TOOLS_PACKAGE_ENV, name)
    made = Project(tmp_path, tools)
    made.write(f"{name}/settings.toml", SETTINGS)
    made.write("template.yaml", TEMPLATE)
    made.write("samconfig.toml", SAMCONFIG)
    yield made
    forget_configuration()


def test_check_prints_the_value_each_stage_gets_and_where_it_comes_from(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN settings per stage, a template that overrides one for every deploy, and samconfig's two stages
    # WHEN `python -m handler check` runs
    code = main(["check"])
    # THEN it passes, and shows every stage a deploy serves, each value with its source
    assert code == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    file = shown_path(str(project.tools / "settings.toml"))
    shown = [" ".join(line.split()) for line in out.splitlines()]
    assert shown[shown.index("stage default (make deploy):") :] == [
        "stage default (make deploy):",
        f'CARRIER_BASE_URL = "https://sandbox.carrier.example" {file} [default]',
        "CARRIER_TIMEOUT_SECONDS = 5.0 CarrierSettings.carrier_timeout_seconds's default",
        "PARCELS_TABLE = !Ref ParcelsTable template.yaml's MEDIAN_SETTING_PARCELS_TABLE",
        f'CARRIER_TOKEN_SECRET = "median-tools/carrier-token" {file} [default]',
        "stage production (sam deploy --config-env production):",
        f'CARRIER_BASE_URL = "https://api.carrier.example" {file} [production]',
        f"CARRIER_TIMEOUT_SECONDS = 3 {file} [production]",
        "PARCELS_TABLE = !Ref ParcelsTable template.yaml's MEDIAN_SETTING_PARCELS_TABLE",
        f'CARRIER_TOKEN_SECRET = "median-tools/carrier-token" {file} [default]',
        "stage staging (sam deploy --config-env staging):",
        f'CARRIER_BASE_URL = "https://sandbox.carrier.example" {file} [default]',
        "CARRIER_TIMEOUT_SECONDS = 5.0 CarrierSettings.carrier_timeout_seconds's default",
        "PARCELS_TABLE = !Ref ParcelsTable template.yaml's MEDIAN_SETTING_PARCELS_TABLE",
        f'CARRIER_TOKEN_SECRET = "median-tools-staging/carrier-token" {file} [staging]',
    ]


def test_a_stage_samconfig_deploys_without_a_table_is_named_with_the_config_env(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a config-env whose Stage= is a typo of a table's name
    project.write("samconfig.toml", SAMCONFIG.replace("Stage=production", "Stage=prodution"))
    # WHEN `python -m handler check` runs
    code = main(["check"])
    # THEN it fails on that stage alone, naming what deploys it and the fix
    assert code == 1
    [line, summary] = capsys.readouterr().err.splitlines()
    assert line.startswith(
        "stage prodution (sam deploy --config-env production): a function deployed as prodution would refuse every "
        "request: MEDIAN_STAGE=prodution names no stage of "
    )
    assert line.endswith(
        "whose stages are default, production, staging: check its spelling, or add a [prodution] table to the "
        "file (it may be empty)"
    )
    assert summary == "1 configuration problem(s): the tools would fail to start where each applies."


def test_a_template_variable_under_a_settings_own_name_is_named_with_the_rename(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a template that sets a setting under its own name, as this project read settings before
    project.write("template.yaml", TEMPLATE.replace("MEDIAN_SETTING_PARCELS_TABLE: !Ref", "PARCELS_TABLE: !Ref"))
    # WHEN `python -m handler check` runs (and so the build)
    code = main(["check", "--no-local"])
    # THEN it fails: deployed, the variable would be ignored and settings.toml's "parcels" read instead
    assert code == 1
    [line, _] = capsys.readouterr().err.splitlines()
    assert line == (
        "template.yaml sets PARCELS_TABLE for the function, which is not read: a setting comes from "
        "tools/settings.toml, and a deploy overrides it only as MEDIAN_SETTING_PARCELS_TABLE. Rename the variable "
        "MEDIAN_SETTING_PARCELS_TABLE to keep its value (!Ref ParcelsTable), or drop it"
    )


def test_one_stage_alone_for_the_deploys_preflight(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN [default], and so production, without a secret's name; staging with its own
    without = SETTINGS.replace('CARRIER_TOKEN_SECRET = "median-tools/', 'UNRELATED = "')
    project.write(f"{project.tools.name}/settings.toml", without)
    # WHEN only staging is checked, then only production
    staging = main(["check", "--no-local", "--stage", "staging"])
    production = main(["check", "--no-local", "--stage", "production"])
    # THEN staging passes, and production names its own missing value only
    assert staging == 0
    err = capsys.readouterr().err
    assert "stage production: CARRIER_TOKEN_SECRET is not set" in err
    assert "stage staging" not in err and "stage default" not in err
    assert production == 1


def test_this_machines_values_are_shown_when_its_local_file_changes_them(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a local file that points the carrier at a stand-in
    project.write(f"{project.tools.name}/settings.local.toml", 'CARRIER_BASE_URL = "http://127.0.0.1:8081"\n')
    # WHEN make check runs
    assert main(["check"]) == 0
    # THEN the values this machine's runs read come last, with the local file as their source
    out = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
    machine = out[out.index("on this machine (stage default, as make serve and the tests read it):") :]
    local = shown_path(str(project.tools / "settings.local.toml"))
    assert f'CARRIER_BASE_URL = "http://127.0.0.1:8081" {local}' in machine
    # AND a build, which never reads it, shows no such section
    assert main(["check", "--no-local"]) == 0
    assert "on this machine" not in capsys.readouterr().out


NO_SETTINGS_TOOL = '''
from pydantic import BaseModel

from handler import tool


class ParcelInput(BaseModel):
    parcel: str


@tool(risk="low")
def parcel_eta(args: ParcelInput) -> dict:
    """Ask the carrier when a parcel arrives."""
    return {}
'''


def test_a_project_with_no_settings_at_all_deploys_to_every_stage_samconfig_names(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN tools that take no settings, no settings.toml at all, and samconfig's staging and production
    (project.tools / "carrier.py").write_text(NO_SETTINGS_TOOL, encoding="utf-8")
    (project.tools / "settings.toml").unlink()
    forget_configuration()
    # WHEN `python -m handler check` runs (the build's, too), and the build writes the stages a function may run as
    checked = main(["check", "--no-local"])
    err = capsys.readouterr().err
    stages = main(["stages"])
    written = capsys.readouterr().out.split()
    # THEN no stage is refused: none has a value of its own to miss
    assert checked == 0, err
    assert "refuse every request" not in err
    # AND the build tells the function so: any stage is one
    assert (stages, written) == (0, ["default", "*"])
    # AND a stage make serve or the tests run as is one too
    from handler.authoring.settings import this_stage_problem

    with pytest.MonkeyPatch.context() as environment:
        environment.setenv("MEDIAN_STAGE", "production")
        assert this_stage_problem() is None


def test_a_project_whose_settings_name_no_stage_still_refuses_one(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a settings.toml with [default] alone: the project has settings, and no staging table
    (project.tools / "carrier.py").write_text(NO_SETTINGS_TOOL, encoding="utf-8")
    project.write(f"{project.tools.name}/settings.toml", "[default]\nCARRIER_BASE_URL = 'https://x.example'\n")
    # WHEN `python -m handler check` runs
    checked = main(["check", "--no-local"])
    # THEN staging and production are refused as ever: a typo'd stage would miss the file's values
    err = capsys.readouterr().err
    assert checked == 1
    assert "stage staging (sam deploy --config-env staging): a function deployed as staging would refuse" in err
