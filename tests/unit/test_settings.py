"""A tool's configuration: settings.toml per stage, the local file, the environment, read into `Settings`."""

from __future__ import annotations

import inspect
import textwrap
import uuid
from typing import TYPE_CHECKING, Any

import pytest
from pydantic import BaseModel, Field

from handler import Settings, ToolContext, tool
from handler.authoring.registry import ToolDefinitionError
from handler.authoring.settings import STAGE_ENV, forget_configuration, problems_in_stages
from handler.manifest.build import build_manifest
from handler.protocol import TOOLS_PACKAGE_ENV
from handler.runtime.env import shown_path

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from handler.authoring.registry import Registry
    from handler.testing import MedianTestClient

THIS_FILE = shown_path(__file__)


class CarrierSettings(Settings):
    carrier_base_url: str
    carrier_retries: int = 2


CARRIER_SETTINGS_LINE = inspect.getsourcelines(CarrierSettings)[1]


class ParcelInput(BaseModel):
    parcel: str = Field(description="The parcel's number.")


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

    [production]
    CARRIER_BASE_URL = "https://production.example"
"""


@pytest.mark.parametrize(
    ("stage", "local", "environment", "expected"),
    [
        pytest.param(None, None, None, "https://default.example", id="[default] alone"),
        pytest.param("production", None, None, "https://production.example", id="the stage's table over [default]"),
        pytest.param("staging", None, None, "https://default.example", id="a stage without a table: [default]"),
        pytest.param(
            "production", 'CARRIER_BASE_URL = "http://localhost:8080"', None, "http://localhost:8080", id="local file"
        ),
        pytest.param(
            "production",
            'CARRIER_BASE_URL = "http://localhost:8080"',
            "https://env.example",
            "https://env.example",
            id="environment over all",
        ),
        pytest.param(None, None, "", "https://default.example", id="an empty variable counts as unset"),
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
    # GIVEN settings.toml, and maybe a stage, a local file and a variable in the environment
    folder.write("settings.toml", SETTINGS_TOML)
    if local is not None:
        folder.write("settings.local.toml", local)
    if stage is not None:
        monkeypatch.setenv(STAGE_ENV, stage)
    if environment is not None:
        monkeypatch.setenv("CARRIER_BASE_URL", environment)
    register_carrier_tool()
    # WHEN the tool is called
    answer = client.call("parcelStatus", {"parcel": "P-1"})
    # THEN it sees the value of the highest place that has one, typed by its Settings class
    assert answer.status == 200, answer.body
    assert answer.body["output"] == {"baseUrl": expected, "retries": 3}


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
    # GIVEN a tool whose settings were read at registration
    folder.write("settings.toml", SETTINGS_TOML)
    register_carrier_tool()
    # WHEN settings.toml changes under a running container (it cannot in Lambda; here, by hand)
    (folder.directory / "settings.toml").write_text('[default]\nCARRIER_BASE_URL = "https://changed"\n')
    answer = client.call("parcelStatus", {"parcel": "P-1"})
    # THEN the container goes on with what it read; a new container (a deploy) reads the new file
    assert answer.body["output"]["baseUrl"] == "https://default.example"
    forget_configuration()
    assert client.call("parcelStatus", {"parcel": "P-1"}).body["output"]["baseUrl"] == "https://changed"


def test_a_missing_value_fails_at_registration_naming_the_variable_the_class_and_where_to_set_it(
    folder: ToolsFolder, scratch_registry: Registry
) -> None:
    # GIVEN no value for a field without a default anywhere
    folder.write("settings.toml", "[default]\nCARRIER_RETRIES = 1\n")
    # WHEN a tool taking the Settings class is declared
    with pytest.raises(ToolDefinitionError) as refused:
        register_carrier_tool()
    # THEN the author reads the class's line, the variable, and the files to put it in
    message = str(refused.value)
    assert message.startswith(f"{THIS_FILE}:{CARRIER_SETTINGS_LINE}: CarrierSettings cannot be read: ")
    assert "CARRIER_BASE_URL is not set" in message
    assert "settings.toml [default]" in message
    assert "settings.local.toml" in message
    assert "(taken by parcel_status)" in message
    assert scratch_registry.tools == []


def test_a_malformed_value_names_the_variable_and_its_source_but_not_the_value(
    folder: ToolsFolder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN an integer setting given as a word, in the production table, in production
    folder.write("settings.toml", SETTINGS_TOML + '    CARRIER_RETRIES = "several-secret-words"\n')
    monkeypatch.setenv(STAGE_ENV, "production")
    # WHEN a tool taking it is declared
    with pytest.raises(ToolDefinitionError) as refused:
        register_carrier_tool()
    # THEN the variable and the table it came from are named; its value is not repeated
    message = str(refused.value)
    assert "CARRIER_RETRIES (from" in message
    assert "settings.toml [production]) is not valid" in message
    assert "several-secret-words" not in message


def test_get_answers_invalid_manifest_with_the_settings_line(folder: ToolsFolder, client: MedianTestClient) -> None:
    # GIVEN a tool module whose Settings has no value
    folder.write(
        "parcels.py",
        '''
        from __future__ import annotations

        from pydantic import BaseModel

        from handler import Settings, tool


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
    # THEN the answer is invalid_manifest with the author's line, not an internal error
    assert answer.status == 500
    assert answer.body["error"]["code"] == "invalid_manifest"
    message = answer.body["error"]["message"]
    assert "parcels.py:9: ParcelSettings cannot be read: PARCEL_API_URL is not set" in message


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
    # WHEN a tool taking settings is declared
    with pytest.raises(ToolDefinitionError) as refused:
        register_carrier_tool()
    # THEN the file is named as not valid TOML, with the parser's line
    assert "settings.toml: not valid TOML" in str(refused.value)
    assert "line 2" in str(refused.value)


def test_check_holds_every_stage_table_against_every_settings_class(folder: ToolsFolder) -> None:
    # GIVEN a staging table that leaves a required value unset, and a production one that sets it badly
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
    assert len(problems) == 2
    production, staging = sorted(problems)
    assert production.startswith(f"{location}: stage production: CarrierSettings cannot be read: CARRIER_RETRIES")
    assert "settings.toml [production]) is not valid" in production
    assert staging.startswith(f"{location}: stage staging: CarrierSettings cannot be read: CARRIER_BASE_URL is not set")
    assert "settings.toml [staging] or [default]" in staging


def test_check_and_the_build_need_no_values_on_the_machine_that_runs_them(folder: ToolsFolder) -> None:
    # GIVEN a tool whose value is set only in the stage tables, and a build machine with no local file
    folder.write(
        "settings.toml", "[staging]\nCARRIER_BASE_URL = 'https://s'\n[production]\nCARRIER_BASE_URL = 'https://p'\n"
    )
    folder.write(
        "parcels.py",
        """
        from pydantic import BaseModel

        from handler import tool
        from tests.unit.test_settings import CarrierSettings


        class ParcelInput(BaseModel):
            parcel: str


        @tool(risk="low")
        def parcel_status(args: ParcelInput, settings: CarrierSettings) -> dict:
            \"\"\"Tell where a parcel is.\"\"\"
            return {}
        """,
    )
    from handler.cli.commands import main

    # WHEN `python -m handler check` runs there
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
    # WHEN a tool taking settings is declared
    with pytest.raises(ToolDefinitionError) as refused:
        register_carrier_tool()
    # THEN the file and the value are named, with where it belongs
    assert expected in str(refused.value)


def test_check_fails_on_a_stage_without_its_value_and_says_it_is_configuration(
    folder: ToolsFolder, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a production table that lacks a value the tool's Settings requires
    folder.write("settings.toml", "[staging]\nCARRIER_BASE_URL = 'https://s'\n[production]\nCARRIER_RETRIES = 1\n")
    folder.write(
        "parcels.py",
        """
        from pydantic import BaseModel

        from handler import tool
        from tests.unit.test_settings import CarrierSettings


        class ParcelInput(BaseModel):
            parcel: str


        @tool(risk="low")
        def parcel_status(args: ParcelInput, settings: CarrierSettings) -> dict:
            \"\"\"Tell where a parcel is.\"\"\"
            return {}
        """,
    )
    from handler.cli.commands import main

    # WHEN `python -m handler check` runs
    code = main(["check"])
    # THEN it fails, naming the stage, the variable and the fix, and calls it configuration, not Median's refusal
    assert code == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith(f"{THIS_FILE}:{CARRIER_SETTINGS_LINE}: stage production: CarrierSettings cannot be read")
    assert "CARRIER_BASE_URL is not set for stage production" in lines[0]
    assert lines[1:] == ["1 configuration problem(s): the tools would fail to start where each applies."]


def test_check_holds_every_stage_to_the_setting_that_names_a_secret(
    folder: ToolsFolder, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a secret named by a setting that staging sets and production does not
    folder.write("settings.toml", "[staging]\nCARRIER_TOKEN_SECRET = 'median-tools-staging/token'\n[production]\n")
    folder.write(
        "parcels.py",
        """
        from pydantic import BaseModel

        from handler import Secret, tool


        class ParcelInput(BaseModel):
            parcel: str


        @tool(risk="low")
        def parcel_eta(args: ParcelInput, token: str = Secret(setting="CARRIER_TOKEN_SECRET")) -> dict:
            \"\"\"Ask the carrier when a parcel arrives.\"\"\"
            return {}
        """,
    )
    from handler.cli.commands import main

    # WHEN `python -m handler check` runs
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
