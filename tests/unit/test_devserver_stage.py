"""`make serve` says which table of settings.toml the tools read when $MEDIAN_STAGE names a stage.

A stage without a table reads [default] alone, which is right for a deployed stage that needs no
values of its own, and silent for a misspelt `MEDIAN_STAGE=stagging make serve`.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import pytest

from devserver.__main__ import _stage_line
from handler.authoring.settings import STAGE_ENV, forget_configuration
from handler.protocol import TOOLS_PACKAGE_ENV
from handler.runtime.env import shown_path

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


def test_a_misspelt_stage_is_warned_of_with_the_tables_there_are(
    settings_file: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN MEDIAN_STAGE=stagging, a stage settings.toml has no table for
    monkeypatch.setenv(STAGE_ENV, "stagging")
    # WHEN make serve starts
    line = _stage_line()
    # THEN it warns that [default] alone is read, names the tables there are, and says what to do
    assert line == (
        f"warning: MEDIAN_STAGE=stagging names no table of {settings_file} (it has default, production, staging), "
        "so the tools read [default] alone: check its spelling, or add a [stagging] table."
    )


@pytest.mark.parametrize("value", ["", "default"])
def test_the_default_stage_says_nothing(settings_file: str, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    # GIVEN no stage named, or the default one
    monkeypatch.setenv(STAGE_ENV, value)
    # WHEN make serve starts
    # THEN there is no stage line to read
    assert _stage_line() is None
