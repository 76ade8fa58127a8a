"""The library's version: median_lambda/_version.py's, the wheel's, printed by `median --version`, and
carried by every line the function logs (median-lambda's CHANGELOG.md says what each changed)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING

from median_lambda.testing import MedianTestClient, signed_event

if TYPE_CHECKING:
    from tests.conftest import LogCapture

LIBRARY = Path(__file__).resolve().parents[2] / "median-lambda"
SOURCE_VERSION = re.search(
    r'^__version__ = "([^"]+)"$', (LIBRARY / "src" / "median_lambda" / "_version.py").read_text(encoding="utf-8"), re.M
)


def test_the_installed_library_is_the_version_its_source_says() -> None:
    # GIVEN the version written once, in _version.py, which the wheel's metadata takes (hatch's dynamic version)
    assert SOURCE_VERSION is not None
    assert "version" in tomllib.loads((LIBRARY / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dynamic"]
    # THEN the installed distribution carries it
    assert version("median-lambda") == SOURCE_VERSION[1]


def test_the_cli_prints_the_version() -> None:
    # WHEN `median --version` runs
    printed = subprocess.run(
        [sys.executable, "-m", "median_lambda", "--version"], capture_output=True, text=True, check=True
    ).stdout
    # THEN it names the library and its version
    assert SOURCE_VERSION is not None
    assert printed == f"median-lambda {SOURCE_VERSION[1]}\n"


def test_every_line_the_function_logs_says_its_version(logs: LogCapture) -> None:
    # GIVEN a request signed with another key than the function's, which the function logs
    event = signed_event("GET", key="mk_test_another_key")
    # WHEN it is answered
    answer = MedianTestClient().send(event)
    # THEN each line logged carries the library's version
    assert answer.status == 401
    records = logs.records()
    assert SOURCE_VERSION is not None
    assert records and all(record["median_lambda_version"] == SOURCE_VERSION[1] for record in records)
