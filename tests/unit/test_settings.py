"""A tool's configuration: settings.toml per stage, the local file, the environment, read into `Settings`."""

from __future__ import annotations

import inspect
import json
import textwrap
import uuid
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda import Settings, ToolContext, tool
from median_lambda.authoring.settings import STAGE_ENV, ConfigurationError, forget_configuration, problems_in_stages
from median_lambda.manifest.build import build_manifest
from median_lambda.protocol import TOOLS_PACKAGE_ENV
from median_lambda.runtime.env import shown_path
from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from median_lambda.authoring.registry import Registry
    from median_lambda.testing import MedianTestClient

    from tests.conftest import LogCapture

THIS_FILE = shown_path(__file__)


class CarrierSettings(Settings):
    carrier_base_url: str
    carrier_retries: int = 2


CARRIER_SETTINGS_LINE = inspect.getsourcelines(CarrierSettings)[1]


class ParcelInput(BaseModel):
    parcel: str = Field(description="The parcel's number.")


# A tools module taking CarrierSettings, for `python -m median_lambda check` to find in the test's package.
PARCELS_TOOL = """
    from pydantic import BaseModel

    from median_lambda import tool
    from tests.unit.test_settings import CarrierSettings


    class ParcelInput(BaseModel):
        parcel: str


    @tool(risk="low")
    def parcel_status(args: ParcelInput, settings: CarrierSettings) -> dict:
        \"\"\"Tell where a parcel is.\"\"\"
        return {}
"""


class ToolsFolder:
    """A tools package of the test's own, served, with its settings files."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def write(self, name: str, text: str) -> None:
        (self.directory / name).write_text(textwrap.dedent(text), encoding="utf-8")
        forget_configuration()  # as a new container would read it


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scratch_registry: Registry) -> Iterator[ToolsFolder]:
    name = f"configured_tools_{uuid.uuid4().hex[:8]}"
    directory = tmp_path / name
    directory.mkdir()
    (directory / "__init__.py").write_text("", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(TOOLS_PACKAGE_ENV, name)
    for variable in ("CARRIER_BASE_URL", "CARRIER_RETRIES", STAGE_ENV, "AWS_LAMBDA_FUNCTION_NAME"):
        monkeypatch.delenv(variable, raising=False)
    forget_configuration()
    yield ToolsFolder(directory)
    forget_configuration()


def register_carrier_tool() -> None:
    @tool(risk="low")
    def parcel_status(args: ParcelInput, ctx: ToolContext, settings: CarrierSettings) -> dict[str, Any]:
        """Tell where a parcel is."""
        return {"baseUrl": settings.carrier_base_url, "retries": settings.carrier_retries}


SETTINGS_TOML = """
    [default]
    CARRIER_BASE_URL = "https://default.example"
    CARRIER_RETRIES = 3

    [staging]

    [production]
    CARRIER_BASE_URL = "https://production.example"
"""


@pytest.mark.parametrize(
    ("stage", "local", "environment", "expected"),
    [
        pytest.param(None, None, None, "https://default.example", id="[default] alone"),
        pytest.param("production", None, None, "https://production.example", id="the stage's table over [default]"),
        pytest.param("staging", None, None, "https://default.example", id="a stage whose table is empty: [default]"),
        pytest.param(
            "production", 'CARRIER_BASE_URL = "http://localhost:8080"', None, "http://localhost:8080", id="local file"
        ),
        pytest.param(
            "production",
            'CARRIER_BASE_URL = "http://localhost:8080"',
            "https://env.example",
            "https://env.example",
            id="an override in the environment over all",
        ),
        pytest.param(None, None, "", "https://default.example", id="an empty override counts as unset"),
    ],
)
def test_a_value_comes_from_the_first_place_that_sets_it(
    folder: ToolsFolder,
    monkeypatch: pytest.MonkeyPatch,
    client: MedianTestClient,
    stage: str | None,
    local: str | None,
    environment: str | None,
    expected: str,
) -> None:
    # GIVEN settings.toml, and maybe a stage, a local file and an override in the environment
    folder.write("settings.toml", SETTINGS_TOML)
    if local is not None:
        folder.write("settings.local.toml", local)
    if stage is not None:
        monkeypatch.setenv(STAGE_ENV, stage)
    if environment is not None:
        monkeypatch.setenv("MEDIAN_SETTING_CARRIER_BASE_URL", environment)
    register_carrier_tool()
    # WHEN the tool is called
    answer = client.call("parcelStatus", {"parcel": "P-1"})
    # THEN it sees the value of the highest place that has one, typed by its Settings class
    assert answer.status == 200, answer.body
    assert answer.body["output"] == {"baseUrl": expected, "retries": 3}


class RuntimeNamedSettings(Settings):
    """Fields named as variables the Lambda runtime, or a shell, sets of its own accord."""

    tz: str
    lang: str
    aws_region: str
    path: str
    carrier_base_url: str


RUNTIME_NAMED_TOML = """
    [default]
    TZ = "Europe/London"
    LANG = "en_GB"
    AWS_REGION = "eu-west-2"
    PATH = "/parcels"
    CARRIER_BASE_URL = "https://default.example"
"""


@pytest.mark.parametrize("deployed", [True, False], ids=["in a deployed function", "on the author's machine"])
def test_a_variable_named_as_a_setting_never_replaces_its_value_in_settings_toml(
    folder: ToolsFolder, monkeypatch: pytest.MonkeyPatch, deployed: bool
) -> None:
    # GIVEN settings.toml's values, and the variables Lambda's runtime sets itself under the same names
    folder.write("settings.toml", RUNTIME_NAMED_TOML)
    for name, runtime_value in {
        "TZ": ":UTC",
        "LANG": "en_US.UTF-8",
        "AWS_REGION": "us-east-1",
        "PATH": "/var/lang/bin:/usr/local/bin:/usr/bin/:/bin:/opt/bin",
        "CARRIER_BASE_URL": "https://a-shell-export.example",
    }.items():
        monkeypatch.setenv(name, runtime_value)
    if deployed:
        monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "median-tools")
    # WHEN the settings are read
    settings = RuntimeNamedSettings.current()
    # THEN every value is the file's, as make check shows it, whatever the runtime set
    assert settings.model_dump() == {
        "tz": "Europe/London",
        "lang": "en_GB",
        "aws_region": "eu-west-2",
        "path": "/parcels",
        "carrier_base_url": "https://default.example",
    }


def test_an_override_names_the_setting_after_the_prefix_and_wins_deployed_too(
    folder: ToolsFolder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN settings.toml's TZ, and a deploy that overrides it explicitly (template.yaml's MEDIAN_SETTING_TZ)
    folder.write("settings.toml", RUNTIME_NAMED_TOML)
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "median-tools")
    monkeypatch.setenv("TZ", ":UTC")
    monkeypatch.setenv("MEDIAN_SETTING_TZ", "America/New_York")
    # WHEN the settings are read
    # THEN the override wins, and the runtime's own TZ still does not
    assert RuntimeNamedSettings.current().tz == "America/New_York"


def test_a_variable_named_as_a_setting_is_said_to_be_unread_on_the_authors_machine(
    folder: ToolsFolder, monkeypatch: pytest.MonkeyPatch, logs: LogCapture
) -> None:
    # GIVEN a test (or a shell) that still sets the setting's own name, as this project once read it
    folder.write("settings.toml", SETTINGS_TOML)
    monkeypatch.setenv("CARRIER_BASE_URL", "http://127.0.0.1:8081")
    # WHEN the settings are read, twice in the process
    CarrierSettings.current()
    forget_configuration()
    CarrierSettings.current()
    # THEN a warning says which value was used instead, and which variable overrides it: once per read anew
    [warning] = [record for record in logs.records() if record.get("setting") == "CARRIER_BASE_URL"][:1]
    assert warning["level"] == "WARNING"
    assert warning["message"].startswith("CARRIER_BASE_URL is set in this environment and not read: the setting comes")
    assert "settings.toml [default]" in warning["message"]
    assert "set MEDIAN_SETTING_CARRIER_BASE_URL" in warning["message"]
    assert "127.0.0.1:8081" not in json.dumps(warning)


def test_a_stage_that_settings_toml_does_not_have_is_refused_on_every_request(
    folder: ToolsFolder, monkeypatch: pytest.MonkeyPatch, client: MedianTestClient, logs: LogCapture
) -> None:
    # GIVEN a typo in the stage: settings.toml has [default] and [production] only
    folder.write("settings.toml", SETTINGS_TOML)
    monkeypatch.setenv(STAGE_ENV, "prodution")
    register_carrier_tool()
    # WHEN Median GETs the manifest and calls the tool
    answers = [client.manifest(), client.call("parcelStatus", {"parcel": "P-1"})]
    # THEN both are refused with a 500 that names no internals, only the reference
    for answer in answers:
        assert answer.status == 500
        assert answer.body["error"]["code"] == "internal_error"
        assert answer.body["error"]["message"].startswith(
            "This endpoint's deployment is misconfigured, so it serves no request; reference "
        )
        assert "prodution" not in json.dumps(answer.body)
    # AND each is logged with the stage, the stages there are and the fix, and counted as a crash of every tool
    refusals = [record for record in logs.records() if record["message"].startswith("This function refuses")]
    assert len(refusals) == 2
    assert (
        "MEDIAN_STAGE=prodution names no stage of" in refusals[0]["message"]
        and "whose stages are default, production, staging: check its spelling, or add a [prodution] table"
        in refusals[0]["message"]
    )
    assert crashes_counted(logs) == ["(every tool)", "(every tool)"]


def test_a_deployed_function_never_reads_the_local_file(folder: ToolsFolder, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a local file that sets a value, in a process that is a deployed Lambda
    folder.write("settings.toml", SETTINGS_TOML)
    folder.write("settings.local.toml", 'CARRIER_BASE_URL = "http://localhost:8080"')
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "median-tools")
    # WHEN its settings are read
    settings = CarrierSettings.current()
    # THEN settings.toml's value is used: one machine's file is never a deployed function's configuration
    assert settings.carrier_base_url == "https://default.example"


def test_settings_are_read_once_per_container(folder: ToolsFolder, client: MedianTestClient) -> None:
    # GIVEN a tool whose settings were read at its first call
    folder.write("settings.toml", SETTINGS_TOML)
    register_carrier_tool()
    assert client.call("parcelStatus", {"parcel": "P-1"}).body["output"]["baseUrl"] == "https://default.example"
    # WHEN settings.toml changes under a running container (it cannot in Lambda; here, by hand)
    (folder.directory / "settings.toml").write_text('[default]\nCARRIER_BASE_URL = "https://changed"\n')
    answer = client.call("parcelStatus", {"parcel": "P-1"})
    # THEN the container goes on with what it read; a new container (a deploy) reads the new file
    assert answer.body["output"]["baseUrl"] == "https://default.example"
    forget_configuration()
    assert client.call("parcelStatus", {"parcel": "P-1"}).body["output"]["baseUrl"] == "https://changed"


def register_a_tool_without_settings() -> None:
    @tool(risk="low")
    def parcel_count(args: ParcelInput) -> dict[str, Any]:
        """Count the customer's parcels."""
        return {"parcels": 2}


def _did_not_run(logs: LogCapture, tool_name: str) -> dict[str, Any]:
    [record] = [
        r for r in logs.records() if r["message"] == f"Tool {tool_name} did not run: what it takes could not be read"
    ]
    return record


def test_a_missing_value_fails_that_tools_calls_alone_naming_the_variable_the_class_and_where_to_set_it(
    folder: ToolsFolder, client: MedianTestClient, logs: LogCapture, scratch_registry: Registry
) -> None:
    # GIVEN no value anywhere for a field without a default, and a tool that takes no settings beside it
    folder.write("settings.toml", "[default]\nCARRIER_RETRIES = 1\n")
    register_carrier_tool()
    register_a_tool_without_settings()
    # WHEN Median GETs the manifest and calls each tool
    manifest = client.manifest()
    broken = client.call("parcelStatus", {"parcel": "P-1"})
    working = client.call("parcelCount", {"parcel": "P-1"})
    # THEN GET lists both, the other tool answers, and the one without its value answers 500: it did not run
    assert [entry["name"] for entry in manifest.body["tools"]] == ["parcelStatus", "parcelCount"]
    assert working.body["output"] == {"parcels": 2}
    assert broken.status == 500
    assert broken.body["error"]["message"].startswith("The tool could not read its configuration or secrets")
    assert "CARRIER_BASE_URL" not in json.dumps(broken.body)
    # AND the log names the class's line, the variable and where to set it
    cause = _did_not_run(logs, "parcelStatus")["cause"]
    assert cause.startswith(f"{THIS_FILE}:{CARRIER_SETTINGS_LINE}: CarrierSettings cannot be read: ")
    assert "CARRIER_BASE_URL is not set: add `CARRIER_BASE_URL = ...` to " in cause
    assert "settings.toml [default] or a stage's table, or for your own machine to " in cause
    # AND the call counts as a crash of that tool, which the crash alarm and a rollout's rollback watch
    assert crashes_counted(logs) == ["parcelStatus"]


def crashes_counted(logs: LogCapture) -> list[str]:
    """The `tool` of each ToolCrashes in the EMF lines printed so far."""
    metrics = logs.metrics()
    return [metric["tool"] for metric in metrics if "ToolCrashes" in metric]


def test_deployed_the_cause_names_the_stages_table_and_no_local_file(
    folder: ToolsFolder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a deployed function of stage production, whose settings.toml lacks a value
    folder.write("settings.toml", "[default]\nCARRIER_RETRIES = 1\n[production]\n")
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "median-tools")
    monkeypatch.setenv(STAGE_ENV, "production")
    # WHEN the tool's settings are read, at its first call
    with pytest.raises(ConfigurationError) as refused:
        CarrierSettings.current()
    # THEN the cause its log line carries says where to set it for that stage, and no machine's own file
    assert str(refused.value) == (
        f"{THIS_FILE}:{CARRIER_SETTINGS_LINE}: CarrierSettings cannot be read: CARRIER_BASE_URL is not set: add "
        f"`CARRIER_BASE_URL = ...` to {shown_path(str(folder.directory))}/settings.toml [production] or [default]"
    )


def test_on_the_authors_machine_the_cause_is_printed_beside_the_answer(
    folder: ToolsFolder, client: MedianTestClient, logs: LogCapture
) -> None:
    # GIVEN a tool whose value is set nowhere
    folder.write("settings.toml", "[default]\n")
    register_carrier_tool()
    # WHEN it is called from a test (or make serve)
    answer = client.call("parcelStatus", {"parcel": "P-1"})
    # THEN the terminal says what is wrong in words, with the answer's reference
    reference = answer.body["error"]["message"].rsplit("Reference ", 1)[1].rstrip(".")
    printed = [line for line in logs.lines() if line.startswith("Tool parcelStatus did not run")]
    assert printed == [
        f"Tool parcelStatus did not run, answered 500 internal_error (reference {reference}): "
        f"{THIS_FILE}:{CARRIER_SETTINGS_LINE}: CarrierSettings cannot be read: CARRIER_BASE_URL is not set: add "
        f"`CARRIER_BASE_URL = ...` to {shown_path(str(folder.directory))}/settings.toml [default] or a stage's table, "
        f"or for your own machine to {shown_path(str(folder.directory))}/settings.local.toml"
    ]


def test_a_malformed_value_names_the_variable_and_its_source_but_not_the_value(
    folder: ToolsFolder, monkeypatch: pytest.MonkeyPatch, client: MedianTestClient, logs: LogCapture
) -> None:
    # GIVEN an integer setting given as a word, in the production table, in production
    folder.write("settings.toml", SETTINGS_TOML + '    CARRIER_RETRIES = "several-secret-words"\n')
    monkeypatch.setenv(STAGE_ENV, "production")
    register_carrier_tool()
    # WHEN the tool taking it is called
    answer = client.call("parcelStatus", {"parcel": "P-1"})
    # THEN it did not run; the log names the variable and the table it came from, never its value
    assert answer.status == 500
    cause = _did_not_run(logs, "parcelStatus")["cause"]
    assert "CARRIER_RETRIES (from" in cause
    assert "settings.toml [production]) is not valid" in cause
    assert "several-secret-words" not in logs.text()


def test_get_serves_a_tool_whose_settings_cannot_be_read(folder: ToolsFolder, client: MedianTestClient) -> None:
    # GIVEN a tool module whose Settings has no value
    folder.write(
        "parcels.py",
        '''
        from __future__ import annotations

        from pydantic import BaseModel

        from median_lambda import Settings, tool


        class ParcelSettings(Settings):
            parcel_api_url: str


        class ParcelInput(BaseModel):
            parcel: str


        @tool(risk="low")
        def parcel_status(args: ParcelInput, settings: ParcelSettings) -> dict:
            """Tell where a parcel is."""
            return {}
        ''',
    )
    # WHEN Median GETs the manifest
    answer = client.manifest()
    # THEN the tool is listed: its configuration is one stage's, and stops its calls, not the endpoint's sync
    assert answer.status == 200, answer.body
    assert [entry["name"] for entry in answer.body["tools"]] == ["parcelStatus"]


def test_a_field_alias_names_its_variable(folder: ToolsFolder) -> None:
    # GIVEN a field whose variable is named by its alias
    class AliasedSettings(Settings):
        url: str = Field(alias="CARRIER_BASE_URL")

    folder.write("settings.toml", SETTINGS_TOML)
    # WHEN it is read
    # THEN the aliased variable fills it
    assert AliasedSettings.current().url == "https://default.example"
    assert AliasedSettings.variables() == {"CARRIER_BASE_URL": "url"}


def test_the_schema_never_shows_what_the_framework_fills(folder: ToolsFolder, scratch_registry: Registry) -> None:
    # GIVEN a tool taking an input, a context and settings
    folder.write("settings.toml", SETTINGS_TOML)
    register_carrier_tool()
    # WHEN the manifest is built
    manifest, problems = build_manifest(scratch_registry)
    # THEN its schema holds the input's fields only
    assert problems == []
    [entry] = manifest["tools"]
    assert list(entry["inputSchema"]["properties"]) == ["parcel"]


def test_settings_toml_that_is_not_toml_is_named(folder: ToolsFolder) -> None:
    # GIVEN a settings.toml with a TOML mistake
    folder.write("settings.toml", "[default]\nCARRIER_BASE_URL = https://unquoted\n")
    # WHEN a tool's settings are read
    with pytest.raises(ConfigurationError) as refused:
        CarrierSettings.current()
    # THEN the file is named as not valid TOML, with the parser's line
    assert "settings.toml: not valid TOML" in str(refused.value)
    assert "line 2" in str(refused.value)


def test_check_holds_every_stage_table_against_every_settings_class(folder: ToolsFolder) -> None:
    # GIVEN [default] and a staging table that leave a required value unset, and a production one that sets it badly
    folder.write(
        "settings.toml",
        """
        [default]
        CARRIER_RETRIES = 1

        [staging]
        CARRIER_RETRIES = 2

        [production]
        CARRIER_BASE_URL = "https://production.example"
        CARRIER_RETRIES = "many"
        """,
    )
    # WHEN make check's stage check runs over the class
    problems = problems_in_stages([CarrierSettings])
    # THEN each stage's problem is one line at the class's line, naming the stage, the variable and the fix
    location = f"{THIS_FILE}:{CARRIER_SETTINGS_LINE}"
    assert len(problems) == 3
    default, production, staging = sorted(problems)
    assert default.startswith(f"{location}: stage default: CarrierSettings cannot be read: CARRIER_BASE_URL is not set")
    assert default.endswith("settings.toml [default]")
    assert production.startswith(f"{location}: stage production: CarrierSettings cannot be read: CARRIER_RETRIES")
    assert "settings.toml [production]) is not valid" in production
    assert staging.startswith(f"{location}: stage staging: CarrierSettings cannot be read: CARRIER_BASE_URL is not set")
    assert "settings.toml [staging] or [default]" in staging


def test_check_holds_the_default_stage_too_which_make_deploy_deploys(
    folder: ToolsFolder, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a tool whose value is set only in the staging and production tables
    folder.write(
        "settings.toml", "[staging]\nCARRIER_BASE_URL = 'https://s'\n[production]\nCARRIER_BASE_URL = 'https://p'\n"
    )
    folder.write("parcels.py", PARCELS_TOOL)
    from median_lambda.cli.commands import main

    # WHEN `python -m median_lambda check` runs, as make check and the build run it
    code = main(["check"])
    # THEN it fails on [default], the stage a plain `make deploy` serves, naming the variable and the fix
    assert code == 1
    [line, summary] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"{THIS_FILE}:{CARRIER_SETTINGS_LINE}: stage default: CarrierSettings cannot be read")
    assert "CARRIER_BASE_URL is not set for stage default: add `CARRIER_BASE_URL = ...` to " in line
    assert line.endswith("settings.toml [default]")
    assert summary == "1 configuration problem(s): the tools would fail to start where each applies."


def test_check_and_the_build_need_no_values_on_the_machine_that_runs_them(folder: ToolsFolder) -> None:
    # GIVEN a tool whose value is set in [default] and overridden per stage, and a machine with no local file
    folder.write(
        "settings.toml",
        "[default]\nCARRIER_BASE_URL = 'https://d'\n[staging]\nCARRIER_BASE_URL = 'https://s'\n"
        "[production]\nCARRIER_BASE_URL = 'https://p'\n",
    )
    folder.write("parcels.py", PARCELS_TOOL)
    from median_lambda.cli.commands import main

    # WHEN `python -m median_lambda check` runs there
    # THEN it passes: every stage it would deploy has its values
    assert main(["check"]) == 0


@pytest.mark.parametrize(
    ("file", "text", "expected"),
    [
        pytest.param(
            "settings.toml",
            'CARRIER_BASE_URL = "https://x"\n[default]\n',
            "settings.toml: CARRIER_BASE_URL is outside every table; put it under [default]",
            id="a value above every table",
        ),
        pytest.param(
            "settings.toml",
            'default = "https://x"\n',
            "settings.toml: default is outside every table",
            id="a stage written as a value",
        ),
        pytest.param(
            "settings.local.toml",
            '[production]\nCARRIER_BASE_URL = "https://x"\n',
            "settings.local.toml: [production] is a table; this file holds NAME = value lines only",
            id="a table in the local file",
        ),
    ],
)
def test_a_value_that_would_apply_to_no_stage_is_refused_not_ignored(
    folder: ToolsFolder, file: str, text: str, expected: str
) -> None:
    # GIVEN a settings file whose value would silently apply nowhere
    folder.write("settings.toml", SETTINGS_TOML)
    folder.write(file, text)
    # WHEN a tool's settings are read
    with pytest.raises(ConfigurationError) as refused:
        CarrierSettings.current()
    # THEN the file and the value are named, with where it belongs
    assert expected in str(refused.value)


def test_check_fails_on_a_stage_without_its_value_and_says_it_is_configuration(
    folder: ToolsFolder, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN [default] and production tables that lack a value the tool's Settings requires
    folder.write(
        "settings.toml",
        "[default]\nCARRIER_RETRIES = 1\n[staging]\nCARRIER_BASE_URL = 'https://s'\n"
        "[production]\nCARRIER_RETRIES = 1\n",
    )
    folder.write("parcels.py", PARCELS_TOOL)
    from median_lambda.cli.commands import main

    # WHEN `python -m median_lambda check` runs
    code = main(["check"])
    # THEN it fails, naming the stage, the variable and the fix, and calls it configuration, not Median's refusal
    assert code == 1
    lines = capsys.readouterr().err.splitlines()
    location = f"{THIS_FILE}:{CARRIER_SETTINGS_LINE}"
    assert lines[0].startswith(f"{location}: stage default: CarrierSettings cannot be read")
    assert lines[1].startswith(f"{location}: stage production: CarrierSettings cannot be read")
    assert "CARRIER_BASE_URL is not set for stage production" in lines[1]
    assert lines[2:] == ["2 configuration problem(s): the tools would fail to start where each applies."]


def test_check_holds_every_stage_to_the_setting_that_names_a_secret(
    folder: ToolsFolder, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a secret named by a setting that [default] and staging set, and production's table empties
    folder.write(
        "settings.toml",
        "[default]\nCARRIER_TOKEN_SECRET = 'median-tools/token'\n"
        "[staging]\nCARRIER_TOKEN_SECRET = 'median-tools-staging/token'\n[production]\nCARRIER_TOKEN_SECRET = ''\n",
    )
    folder.write(
        "parcels.py",
        """
        from pydantic import BaseModel

        from median_lambda import Secret, tool


        class ParcelInput(BaseModel):
            parcel: str


        @tool(risk="low")
        def parcel_eta(args: ParcelInput, token: str = Secret(setting="CARRIER_TOKEN_SECRET")) -> dict:
            \"\"\"Ask the carrier when a parcel arrives.\"\"\"
            return {}
        """,
    )
    from median_lambda.cli.commands import main

    # WHEN `python -m median_lambda check` runs
    code = main(["check"])
    # THEN production's missing name is one line at the tool's declaration, with the fix
    assert code == 1
    [line, summary] = capsys.readouterr().err.splitlines()
    assert line.endswith(
        "parcels.py:11: stage production: CARRIER_TOKEN_SECRET is not set, so parcel_eta's secret's name is "
        f"unknown: add `CARRIER_TOKEN_SECRET = ...` to {shown_path(str(folder.directory / 'settings.toml'))} "
        "[production] or [default]"
    )
    assert summary == "1 configuration problem(s): the tools would fail to start where each applies."
