"""`make serve` says which table of settings.toml the tools read when $MEDIAN_STAGE names a stage, and
refuses to start as one that settings.toml does not have, as a deployed function refuses to serve:
`MEDIAN_STAGE=stagging make serve` would otherwise look like staging and serve [default]'s values.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import pytest
from median_lambda.authoring.settings import STAGE_ENV, forget_configuration
from median_lambda.devserver.__main__ import _refused_stage, _stage_line, main
from median_lambda.project.sam_config import named_as_deployed
from median_lambda.protocol import TOOLS_PACKAGE_ENV
from median_lambda.runtime.env import shown_path

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

SETTINGS = """
[default]
CARRIER_BASE_URL = "https://sandbox.carrier.example"

[staging]
CARRIER_BASE_URL = "https://staging.carrier.example"

[production]
CARRIER_BASE_URL = "https://api.carrier.example"
"""


@pytest.fixture
def settings_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A tools package with a settings.toml of three tables; the path as the terminal shows it."""
    name = f"staged_tools_{uuid.uuid4().hex[:8]}"
    directory = tmp_path / name
    directory.mkdir()
    (directory / "__init__.py").write_text("", encoding="utf-8")
    (directory / "settings.toml").write_text(SETTINGS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(TOOLS_PACKAGE_ENV, name)
    forget_configuration()
    yield shown_path(str(directory / "settings.toml"))
    forget_configuration()


def test_a_stage_with_a_table_is_named_with_what_the_tools_read(
    settings_file: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN MEDIAN_STAGE=staging, which settings.toml has a table for
    monkeypatch.setenv(STAGE_ENV, "staging")
    # WHEN make serve starts
    line = _stage_line()
    # THEN it says the tools read that table over [default]
    assert line == f"Stage staging: the tools read {settings_file} [staging], then [default]."


def test_a_misspelt_stage_is_refused_with_the_stages_there_are(
    settings_file: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN MEDIAN_STAGE=stagging, a stage settings.toml has no table for
    monkeypatch.setenv(STAGE_ENV, "stagging")
    # WHEN make serve starts
    refused = _refused_stage()
    # THEN it refuses, naming the stages there are and what to do, as a deployed function would refuse
    assert refused == (
        f"MEDIAN_STAGE=stagging names no stage of {settings_file}, whose stages are default, production, staging: "
        "check its spelling, or add a [stagging] table to the file (it may be empty)"
    )


def test_make_serve_exits_at_once_on_a_misspelt_stage(
    settings_file: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN MEDIAN_STAGE=stagging
    monkeypatch.setenv(STAGE_ENV, "stagging")
    # (make serve names its logs and metrics by the project's stack in its own process's environment: in this
    # one, for this test alone)
    for name in named_as_deployed():
        monkeypatch.setenv(name, "")
    # WHEN make serve starts
    code = main()
    # THEN it serves nothing and exits 2, with the reason on one line
    assert code == 2
    error = capsys.readouterr().err
    assert error.startswith("error: MEDIAN_STAGE=stagging names no stage of ")
    assert error.rstrip().endswith("A function deployed as it would refuse every request.")


@pytest.mark.parametrize("value", ["", "default"])
def test_the_default_stage_says_nothing(settings_file: str, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    # GIVEN no stage named, or the default one
    monkeypatch.setenv(STAGE_ENV, value)
    # WHEN make serve starts
    # THEN there is no stage line to read, and nothing refused
    assert _stage_line() is None
    assert _refused_stage() is None
