"""The build (`make build`, `sam build`): what the function deploys holds handler/ and your tools,
the manifest GET answers, prebuilt, and nothing of your machine's.

The build is the project's own Makefile target, `build-MedianToolsFunction`, which `sam build`
runs (template.yaml: BuildMethod makefile), run in a copy of the project with the files an editor
leaves beside tools/settings.local.toml. One step is left out, through make's own variable:
installing the runtime wheels (`UV=true`), which fetches and unpacks ~20 MB and is what `make
build` and scripts/check_artifact.py check on every build, in CI too. Every other step runs as
`sam build` runs it: the sync-rule check, the copy, the bytecode, the prebuilt manifest.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

import pytest

from handler.protocol import TOOLS_PACKAGE_ENV
from handler.testing import signed_event

if TYPE_CHECKING:
    from tests.contract.deployed import Endpoint

PROJECT = Path(__file__).resolve().parents[2]
# What the build reads: the Makefile and what its recipe runs, and what it copies.
BUILD_INPUTS = (
    "Makefile",
    "pyproject.toml",
    "uv.lock",
    "template.yaml",
    "samconfig.toml",
    "handler",
    "tools",
    "scripts",
)
# Your machine's values, and what editors leave beside them: none may reach the function.
LOCAL_FILES = (
    "settings.local.toml",
    "settings.local.toml~",
    ".settings.local.toml.swp",
    "#settings.local.toml#",
    "settings.local.toml.bak",
)
# Set by make, or by a test of the framework's: a user's `make build` has neither.
_NOT_IN_A_BUILD = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", TOOLS_PACKAGE_ENV, "AWS_LAMBDA_FUNCTION_NAME")
_CACHES = shutil.ignore_patterns("__pycache__", "manifest.json")


def _files(folder: Path, *, leave_out: tuple[str, ...] = ()) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in folder.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and not any(part in path.name for part in leave_out)
    }


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The function's artifact as this project's Makefile builds it, from a copy with local files in tools/."""
    copy = tmp_path_factory.mktemp("project")
    for name in BUILD_INPUTS:
        source = PROJECT / name
        if source.is_dir():
            shutil.copytree(source, copy / name, ignore=_CACHES)
        elif source.is_file():
            shutil.copy2(source, copy / name)  # its time kept: make sees the venv as up to date
    (copy / ".venv").symlink_to(sys.prefix, target_is_directory=True)
    for name in LOCAL_FILES:
        if not (copy / "tools" / name).exists():
            (copy / "tools" / name).write_text('CARRIER_BASE_URL = "http://127.0.0.1:8081"\n', encoding="utf-8")
    artifact = copy / "artifact"
    environment = {name: value for name, value in os.environ.items() if name not in _NOT_IN_A_BUILD}
    # -o: the venv counts as installed, as it is (it is the one running this test).
    make = ["make", "--no-print-directory", "-o", ".venv/.installed", "build-MedianToolsFunction"]
    built = subprocess.run(  # noqa: S603 - make, on the project's own target, with our own arguments
        [*make, f"ARTIFACTS_DIR={artifact}", "UV=true"],
        cwd=copy,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    return artifact


def test_the_build_holds_handler_and_your_tools_and_nothing_local(build: Path) -> None:
    from scripts.artifact_sources import included_patterns, matches
    from scripts.check_artifact import stray_problems

    # GIVEN the artifact the build made from a project whose tools/ holds local values and an editor's copies
    # WHEN its folders are compared with the project's
    tools = _files(build / "tools")
    # THEN handler/ is there as it is in the project, with the prebuilt manifest beside app.py
    handler = _files(build / "handler")
    assert _files(PROJECT / "handler", leave_out=("manifest.json",)).items() <= handler.items()
    assert "manifest.json" in handler
    # AND tools/ is yours, file for file: your modules, settings.toml and the data files pyproject.toml's
    # [tool.median.artifact] include names, and neither your machine's values nor what editors left beside them
    included = included_patterns(PROJECT)
    yours = {
        name: content
        for name, content in _files(PROJECT / "tools", leave_out=("settings.local",)).items()
        if name.endswith(".py")
        or name == "settings.toml"
        or any(matches(PurePosixPath(f"tools/{name}"), glob) for glob in included)
    }
    assert tools == yours
    assert not [path for path in build.rglob("*") if "settings.local" in path.name]
    # AND nothing else of the workspace came along (tests, scripts, the dev server, caches)
    assert stray_problems(build) == []


def test_the_prebuilt_manifest_is_what_get_answers(build: Path, endpoint: Endpoint) -> None:
    # GIVEN the manifest the build wrote, which the deployed function serves as it is
    prebuilt = (build / "handler" / "manifest.json").read_text(encoding="utf-8")
    # WHEN Median GETs the manifest of your tools
    answered = endpoint.invoke(signed_event("GET"))
    # THEN they are the same bytes
    assert answered["statusCode"] == 200
    assert prebuilt.strip() == answered["body"]
