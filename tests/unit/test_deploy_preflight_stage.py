"""`make deploy` (`median deploy`) checks the stage it deploys before anything is built or reaches AWS: a stage
settings.toml does not have, or a setting without a value in it, stops the deploy with the stage, the variable and
the fix; so does a value samconfig.toml passes for a parameter the template does not have, which sam deploy would
drop."""

from __future__ import annotations

import textwrap
import uuid
from typing import TYPE_CHECKING

import pytest
from median_lambda.authoring.settings import forget_configuration
from median_lambda.cli.commands import main
from median_lambda.protocol import TOOLS_PACKAGE_ENV

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from median_lambda.authoring.registry import Registry


def deploy(config: Path) -> int:
    """`median deploy` as `make deploy` runs it, with this samconfig.toml: the preflight stops it before sam runs."""
    return main(["deploy", "--preflight", "--config-file", str(config)])


TOOL = '''
from pydantic import BaseModel

from median_lambda import Secret, Settings, tool


class CarrierSettings(Settings):
    carrier_base_url: str


class ParcelInput(BaseModel):
    parcel: str


@tool(risk="low")
def parcel_eta(
    args: ParcelInput, settings: CarrierSettings, token: str = Secret(setting="CARRIER_TOKEN_SECRET")
) -> dict:
    """Ask the carrier when a parcel arrives."""
    return {}
'''
# Every value in staging and production, none in [default]: what `make deploy` deploys unless told.
SETTINGS = """
[staging]
CARRIER_BASE_URL = "https://staging.carrier.example"
CARRIER_TOKEN_SECRET = "median-tools-staging/carrier-token"

[production]
CARRIER_BASE_URL = "https://api.carrier.example"
CARRIER_TOKEN_SECRET = "median-tools-production/carrier-token"
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scratch_registry: Registry) -> Iterator[Path]:
    """A tools package of the test's own, served, whose values are staging's and production's only."""
    name = f"deployed_tools_{uuid.uuid4().hex[:8]}"
    tools = tmp_path / name
    tools.mkdir()
    (tools / "__init__.py").write_text("", encoding="utf-8")
    (tools / "carrier.py").write_text(TOOL, encoding="utf-8")
    (tools / "settings.toml").write_text(SETTINGS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(TOOLS_PACKAGE_ENV, name)
    # No region and no credentials: a refusal here is the stage's, made before any AWS call.
    for variable in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(variable, raising=False)
    forget_configuration()
    yield tmp_path
    forget_configuration()


def samconfig(directory: Path, stage: str | None, *more: str) -> Path:
    overrides = 'MedianKeySecretName=\\"median-tools/median-key\\"' + (f" Stage={stage}" if stage else "")
    overrides += "".join(f" {each}" for each in more)
    path = directory / "samconfig.toml"
    path.write_text(
        textwrap.dedent(f"""
            version = 0.1
            [default.global.parameters]
            stack_name = "median-tools"
            [default.deploy.parameters]
            parameter_overrides = "{overrides}"
        """),
        encoding="utf-8",
    )
    return path


def test_the_default_stage_without_its_values_stops_the_deploy_naming_each_and_the_fix(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN samconfig.toml naming no Stage: `make deploy` deploys the template's default, `default`
    config = samconfig(project, None)
    # WHEN the preflight runs
    status = deploy(config)
    # THEN it refuses before any AWS call, naming the stage, each setting and where to set it
    assert status == 1
    error = capsys.readouterr().err
    assert error.startswith("Not deploying. This deploy deploys stage default, where the tools would not serve:\n")
    assert "stage default: CarrierSettings cannot be read: CARRIER_BASE_URL is not set for stage default" in error
    assert "stage default: CARRIER_TOKEN_SECRET is not set, so parcel_eta's secret's name is unknown" in error
    assert "settings.toml [default]" in error
    assert "No AWS region" not in error and "credentials" not in error
    assert error.rstrip().endswith(
        "Fix each (make check shows every stage and the value each gets), then make deploy again."
    )


def test_a_misspelt_stage_stops_the_deploy_with_the_stages_there_are(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN samconfig.toml deploying Stage=prodution
    config = samconfig(project, "prodution")
    # WHEN the preflight runs
    status = deploy(config)
    # THEN it refuses: a function deployed as it would refuse every request
    assert status == 1
    error = capsys.readouterr().err
    assert "stage prodution (what this deploy deploys): a function deployed as prodution would refuse every" in error
    assert "whose stages are default, production, staging: check its spelling, or add a [prodution] table" in error


def test_a_stage_with_every_value_goes_on_to_the_aws_checks(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN samconfig.toml deploying Stage=production, whose table holds every value
    config = samconfig(project, "production")
    # WHEN the preflight runs, on a machine without AWS configured, and with no terminal to ask on
    status = deploy(config)
    # THEN the stage passes, and the next step (asking for the region) is the one that stops it
    assert status == 1
    error = capsys.readouterr().err
    assert "would not serve" not in error
    assert error == (
        "\tAWS Region: Not deploying. samconfig.toml has no region, and there is no terminal to ask for it on: "
        "set region in its [default.global.parameters] section.\n"
    )


def test_a_value_for_a_parameter_the_template_writes_out_stops_the_deploy_saying_where_it_belongs(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN samconfig.toml from before memory and the latency threshold were written in the template, still
    # passing them
    config = samconfig(project, "production", "FunctionMemorySize=1024", "ApiLatencyP99ThresholdMs=3000")
    # WHEN the preflight runs
    status = deploy(config)
    # THEN it refuses before anything else, naming each value, where it is written now, and why it
    # matters: sam deploy would drop it, and deploy the template's memory without a word
    assert status == 1
    error = capsys.readouterr().err
    assert error.startswith("Not deploying. samconfig.toml's parameter_overrides for this deploy pass:\n")
    assert "  FunctionMemorySize=1024, which template.yaml no longer takes" in error
    assert "(Globals: MemorySize)" in error
    assert "  ApiLatencyP99ThresholdMs=3000, which template.yaml no longer takes" in error
    assert "(ApiLatencyAlarm's Threshold)" in error
    assert "drop this value without a word" in error
    assert "No AWS region" not in error
