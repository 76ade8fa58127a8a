"""The template's version: pyproject.toml's, printed by `python -m handler --version`, written into the
artifact by the build, and carried by every line the function logs (CHANGELOG.md says what each changed)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

from handler.runtime.env import read_template_version, template_version
from handler.testing import MedianTestClient, signed_event

if TYPE_CHECKING:
    from tests.conftest import LogCapture

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT_VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def test_a_checkout_reads_its_version_from_pyproject() -> None:
    # GIVEN this checkout, which has no version.txt in handler/ (only a build writes one)
    assert not (ROOT / "handler" / "version.txt").exists()
    # WHEN the function asks which version it is
    # THEN it is pyproject.toml's
    assert template_version() == PYPROJECT_VERSION


def test_an_artifact_reads_the_version_its_build_wrote(tmp_path: Path) -> None:
    # GIVEN an artifact: handler/ with the version.txt the build wrote, and no pyproject.toml beside it
    (tmp_path / "handler").mkdir()
    (tmp_path / "handler" / "version.txt").write_text("1.4.2\n")
    # WHEN the version is read there
    # THEN it is the build's, whatever the checkout now says
    assert read_template_version(str(tmp_path / "handler")) == "1.4.2"


def test_a_handler_with_neither_says_it_does_not_know(tmp_path: Path) -> None:
    # GIVEN handler/ with no version.txt, beside a pyproject.toml with no version, then none at all
    (tmp_path / "handler").mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    # THEN the version is "unknown", never an exception in a log line's making
    assert read_template_version(str(tmp_path / "handler")) == "unknown"
    (tmp_path / "pyproject.toml").unlink()
    assert read_template_version(str(tmp_path / "handler")) == "unknown"


def test_the_cli_prints_the_version() -> None:
    # WHEN `python -m handler --version` runs in this checkout
    printed = subprocess.run(
        [sys.executable, "-m", "handler", "--version"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    # THEN it names the project and pyproject.toml's version, as the build writes it into the artifact
    assert printed == f"median-tools {PYPROJECT_VERSION}\n"


def test_every_line_the_function_logs_says_its_version(logs: LogCapture) -> None:
    # GIVEN a request signed with another key than the function's, which the function logs
    event = signed_event("GET", key="mk_test_another_key")
    # WHEN it is answered
    answer = MedianTestClient().send(event)
    # THEN each line logged carries the template's version
    assert answer.status == 401
    records = logs.records()
    assert records and all(record["template_version"] == PYPROJECT_VERSION for record in records)
