"""`median local-env`: sam local's env.json carries the configuration `make serve` sees."""

from __future__ import annotations

import json
import shutil
import textwrap
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from median_lambda.authoring import settings
from median_lambda.authoring.settings import STAGE_ENV, forget_configuration
from median_lambda.cli.commands import main
from median_lambda.protocol import IDEMPOTENCY_TABLE_ENV, TOOLS_PACKAGE_ENV

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[2]
VARIABLES = ("CARRIER_BASE_URL", "CARRIER_RETRIES", "CARRIER_REGION", STAGE_ENV, "AWS_LAMBDA_FUNCTION_NAME")
SETTINGS_TOML = """
    [default]
    CARRIER_BASE_URL = "https://default.example"
    CARRIER_RETRIES = 3
    CARRIER_REGION = "eu"

    [staging]
    CARRIER_BASE_URL = "https://staging.example"
"""
LOCAL_TOML = """
    CARRIER_RETRIES = 0
    SANDBOX_ONLY_FLAG = true
    IDEMPOTENCY_TABLE = "someone-elses-table"

    [secrets]
    "median-tools/carrier-token" = "local-dev-token"

    [parameters]
    "/median-tools/carrier/account-id" = "ACME-LOCAL"
"""


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A tools package of the test's own, with settings.toml and a local file."""
    name = f"configured_tools_{uuid.uuid4().hex[:8]}"
    directory = tmp_path / name
    directory.mkdir()
    (directory / "__init__.py").write_text("", encoding="utf-8")
    (directory / "settings.toml").write_text(textwrap.dedent(SETTINGS_TOML), encoding="utf-8")
    (directory / "settings.local.toml").write_text(textwrap.dedent(LOCAL_TOML), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(TOOLS_PACKAGE_ENV, name)
    for variable in VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    forget_configuration()
    yield directory
    forget_configuration()


@pytest.fixture
def template(tmp_path: Path) -> Path:
    """template.yaml with the carrier's overrides declared, empty, as docs/configuration.md advises."""
    path = tmp_path / "template.yaml"
    shutil.copy(ROOT / "template.yaml", path)
    anchor = "          MEDIAN_STAGE: !Ref Stage\n"
    source = path.read_text(encoding="utf-8")
    assert source.count(anchor) == 1
    declared = "".join(
        f'          MEDIAN_SETTING_{name}: ""\n' for name in ("CARRIER_BASE_URL", "CARRIER_RETRIES", "CARRIER_REGION")
    )
    path.write_text(source.replace(anchor, anchor + declared), encoding="utf-8")
    return path


def local_env(tmp_path: Path, template: Path) -> dict[str, str]:
    output = tmp_path / "env.json"
    assert main(["local-env", "--output", str(output), "--template", str(template)]) == 0
    parameters: dict[str, str] = json.loads(output.read_text(encoding="utf-8"))["Parameters"]
    return parameters


@pytest.mark.usefixtures("tools")
def test_each_declared_variable_gets_the_value_make_serve_sees(
    tmp_path: Path, template: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the staging stage locally, one value overridden in the shell, and another set under its own name
    monkeypatch.setenv(STAGE_ENV, "staging")
    monkeypatch.setenv("MEDIAN_SETTING_CARRIER_REGION", "us")
    monkeypatch.setenv("CARRIER_BASE_URL", "https://not-an-override.example")
    # WHEN local-env writes sam local's env.json
    parameters = local_env(tmp_path, template)
    # THEN each declared override has its value by the one order: the shell's override, the local file, the
    # stage, [default]; a variable of the setting's own name is no override
    assert parameters["MEDIAN_SETTING_CARRIER_REGION"] == "us"
    assert parameters["MEDIAN_SETTING_CARRIER_RETRIES"] == "0"
    assert parameters["MEDIAN_SETTING_CARRIER_BASE_URL"] == "https://staging.example"
    assert "CARRIER_BASE_URL" not in parameters
    # AND the function under sam local reads settings.toml for the same stage
    assert parameters[STAGE_ENV] == "staging"


@pytest.mark.usefixtures("tools")
def test_the_frameworks_own_local_values_win_over_the_files(tmp_path: Path, template: Path) -> None:
    # GIVEN a local file that names an idempotency table
    # WHEN local-env writes env.json
    parameters = local_env(tmp_path, template)
    # THEN sam local still runs with no idempotency table, and the default stage
    assert parameters[IDEMPOTENCY_TABLE_ENV] == ""
    assert parameters[STAGE_ENV] == "default"


@pytest.mark.usefixtures("tools")
def test_a_local_value_the_template_does_not_declare_is_named_with_the_fix(
    tmp_path: Path, template: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a local value under a name the template does not declare
    # WHEN local-env writes env.json
    parameters = local_env(tmp_path, template)
    # THEN it is not there (sam local would drop it), and stderr says so, why, and how to pass it
    assert "SANDBOX_ONLY_FLAG" not in parameters
    note = capsys.readouterr().err
    assert (
        "sam local sets only the variables template.yaml declares, so IDEMPOTENCY_TABLE, SANDBOX_ONLY_FLAG from" in note
    )
    assert (
        "declare its override in the function's Environment.Variables with an empty value "
        '(MEDIAN_SETTING_IDEMPOTENCY_TABLE: "")' in note
    )
    # AND the local file's [secrets], which seed moto under make serve, are neither written nor taken for a value
    assert "local-dev-token" not in json.dumps(parameters)
    assert "secrets" not in note


def test_with_no_configuration_it_writes_what_it_always_did(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN the shipped template and a tools package with no settings files
    monkeypatch.setenv(TOOLS_PACKAGE_ENV, "tests.empty_tools")
    monkeypatch.delenv(STAGE_ENV, raising=False)
    forget_configuration()
    # WHEN local-env writes env.json
    parameters = local_env(tmp_path, ROOT / "template.yaml")
    forget_configuration()
    # THEN it holds the dev key, no key secret, no table, and the default stage
    assert parameters["MEDIAN_DEV_KEY"]
    assert (parameters["MEDIAN_KEY_SECRET_ID"], parameters[IDEMPOTENCY_TABLE_ENV]) == ("", "")
    assert parameters[STAGE_ENV] == "default"


def test_the_local_files_seed_tables_are_not_values_and_any_other_table_is_refused(tools: Path) -> None:
    # GIVEN the local file with [secrets] and [parameters], which seed moto under make serve
    # WHEN its values are read for this machine's runs
    values = settings.local_values()
    # THEN the tables are not among them, nor taken for a setting's value
    assert {"secrets", "parameters"}.isdisjoint(values)
    assert settings.value("secrets") is None
    # AND a stage's table there is refused, naming the two tables the file may hold
    (tools / "settings.local.toml").write_text('[production]\nCARRIER_BASE_URL = "https://x"\n', encoding="utf-8")
    forget_configuration()
    with pytest.raises(settings.ConfigurationError) as refused:
        settings.local_values()
    assert "[production] is a table" in str(refused.value)
    assert "the [secrets] and [parameters] tables that seed `make serve LOCAL_AWS=moto`" in str(refused.value)


@pytest.mark.usefixtures("tools")
def test_a_stage_settings_toml_does_not_have_stops_it_with_the_fix(
    tmp_path: Path, template: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a misspelt stage
    monkeypatch.setenv(STAGE_ENV, "stagging")
    # WHEN local-env runs, as make invoke and make start-api run it
    code = main(["local-env", "--output", str(tmp_path / "env.json"), "--template", str(template)])
    # THEN it writes nothing and says why: sam local would refuse every request
    assert code == 2
    assert not (tmp_path / "env.json").exists()
    error = capsys.readouterr().err
    assert error.startswith("error: MEDIAN_STAGE=stagging names no stage of ")
    assert "whose stages are default, staging: check its spelling, or add a [stagging] table" in error


def test_a_local_file_that_is_not_toml_is_named_as_this_machines(
    tools: Path, tmp_path: Path, template: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a local file with a TOML mistake
    (tools / "settings.local.toml").write_text('CARRIER_RETRIES = "0\n', encoding="utf-8")
    forget_configuration()
    # WHEN local-env runs
    code = main(["local-env", "--output", str(tmp_path / "env.json"), "--template", str(template)])
    # THEN it stops, naming the file and the parser's line
    assert code == 2
    error = capsys.readouterr().err
    assert "settings.local.toml: not valid TOML" in error
    assert "line 1" in error
