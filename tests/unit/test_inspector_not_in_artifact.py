"""The inspector is local only: nothing `sam build` packs may carry it."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from median_lambda.build.sources import copy_sources
from median_lambda.devserver.artifact_check import dev_server_parts_in, main
from median_lambda.devserver.inspector import PAGE_FILE

from tests.devserver_process import REPO

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def test_what_the_build_copies_carries_no_part_of_the_inspector(tmp_path: Path) -> None:
    # GIVEN an artifact of exactly what the build copies from this project: handler/, tools/ and
    # median_lambda's runtime, from where this venv has it
    copy_sources(tmp_path, REPO)
    assert (tmp_path / "median_lambda" / "app.py").is_file()
    # WHEN it is checked for the dev server
    # THEN none of it is there: the page and its API live in median_lambda/devserver/ alone, which stays behind
    assert dev_server_parts_in(tmp_path) == []
    assert PAGE_FILE.parent.name == "devserver" and not (tmp_path / "median_lambda" / "devserver").exists()


def test_the_check_fails_an_artifact_that_carries_the_dev_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN an artifact that wrongly packs the dev server too (as a copy of the whole library would)
    copy_sources(tmp_path, REPO)
    shutil.copytree(PAGE_FILE.parent, tmp_path / "median_lambda" / "devserver")
    # WHEN it is checked
    found = dev_server_parts_in(tmp_path)
    # THEN the inspector's page is named, and the check exits 1 saying it must not be deployed
    assert "median_lambda/devserver/inspector.html" in found
    assert main([str(tmp_path)]) == 1
    assert "is part of the local dev server and must not be deployed" in capsys.readouterr().err
