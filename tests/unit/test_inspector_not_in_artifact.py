"""The inspector is local only: nothing `sam build` packs may carry it."""

from __future__ import annotations

import shutil
import subprocess
from typing import TYPE_CHECKING

import pytest
from median_lambda.devserver.artifact_check import dev_server_parts_in, main
from median_lambda.devserver.inspector import PAGE_FILE

from tests.devserver_process import REPO

if TYPE_CHECKING:
    from pathlib import Path

# What the build copies into the artifact (issue 3: handler/ and tools/, and nothing else).
ARTIFACT_PACKAGES = ("handler", "tools")
BUILD_TARGET = "build-MedianToolsFunction"


def artifact_of(packages: tuple[str, ...], into: Path) -> Path:
    for package in packages:
        shutil.copytree(REPO / package, into / package, ignore=shutil.ignore_patterns("__pycache__"))
    return into


def test_the_packages_the_artifact_holds_carry_no_part_of_the_inspector(tmp_path: Path) -> None:
    # GIVEN an artifact of exactly the packages the build copies
    artifact = artifact_of(ARTIFACT_PACKAGES, tmp_path)
    # WHEN it is checked for the dev server
    # THEN none of it is there: the page and its API live in devserver/ alone
    assert dev_server_parts_in(artifact) == []
    assert PAGE_FILE.parent == REPO / "median_lambda.devserver"


def test_the_check_fails_an_artifact_that_carries_the_dev_server(tmp_path: Path) -> None:
    # GIVEN an artifact that wrongly packs the dev server too (as `CodeUri: .` without a build target would)
    artifact = artifact_of((*ARTIFACT_PACKAGES, "median_lambda.devserver"), tmp_path)
    # WHEN it is checked
    found = dev_server_parts_in(artifact)
    # THEN the inspector's page is named, and the command exits 1
    assert "devserver/inspector.html" in found
    assert main([str(artifact)]) == 1


def test_the_build_target_copies_only_handler_and_tools(tmp_path: Path) -> None:
    # GIVEN the Makefile's SAM build target
    # WHEN make shows what it would run, without running it
    dry_run = subprocess.run(  # noqa: S603 - make, on this repository's own Makefile
        ["make", "-n", "-C", str(REPO), BUILD_TARGET, f"ARTIFACTS_DIR={tmp_path}"],  # noqa: S607
        capture_output=True,
        text=True,
        check=False,
    )
    if "No rule to make target" in dry_run.stderr:
        pytest.skip(f"no {BUILD_TARGET} in the Makefile yet (the SAM build, issue 3)")
    # THEN it copies handler/ and tools/ and never names the dev server
    assert dry_run.returncode == 0, dry_run.stderr
    assert all(package in dry_run.stdout for package in ARTIFACT_PACKAGES)
    assert "median_lambda.devserver" not in dry_run.stdout
