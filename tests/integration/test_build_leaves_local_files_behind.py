"""`make build` in a copy of the project: an editor's backup of the local settings never reaches the artifact.

The build is the one `sam build` runs (the Makefile's build-MedianToolsFunction, through the SAM
CLI), in a temporary copy holding a tool, tools/settings.toml, tools/settings.local.toml and the
copies of it that editors leave. The artifact holds the tool and its settings and none of the
local files, and the artifact check passes on it; copied in by hand, each local file fails it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import TYPE_CHECKING

import pytest

from tests.project_copy import _NOT_IN_A_USERS_SHELL, REPO, copy_project

if TYPE_CHECKING:
    from pathlib import Path

    from tests.project_copy import ProjectCopy

BUILD_TIMEOUT_SECONDS = 600  # the SAM CLI's own venv is made on first use
ARTIFACT = ".aws-sam/build/MedianToolsFunction"
LOCAL_FILES = (
    "tools/settings.local.toml",
    "tools/settings.local.toml~",
    "tools/.settings.local.toml.swp",
    "tools/#settings.local.toml#",
    "tools/settings.local.toml.bak",
)
SAMCONFIG = """\
version = 0.1

[default.global.parameters]
stack_name = "echo-tools"

[default.build.parameters]
cached = true
build_in_source = true
"""
TOOL = '''
"""A tool of the project's own."""

from __future__ import annotations

from pydantic import BaseModel, Field

from handler import tool


class EchoInput(BaseModel):
    text: str = Field(description="What to say back.")


@tool(risk="low")
def echo(args: EchoInput) -> dict[str, str]:
    """Say the text back."""
    return {"text": args.text}
'''


def run(copy: ProjectCopy, *command: str) -> subprocess.CompletedProcess[str]:
    # What a user's shell has: not the variables through which a test serves tools of its own.
    environment = {name: value for name, value in os.environ.items() if name not in _NOT_IN_A_USERS_SHELL}
    return subprocess.run(  # noqa: S603 - make and our own interpreter, in the copy, with our own arguments
        list(command),
        cwd=copy.root,
        env=environment,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_SECONDS,
        check=False,
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> ProjectCopy:
    """A copy of the project with a tool, its settings and local leftovers, built with `make build`."""
    copy = copy_project(tmp_path_factory.mktemp("build") / "project")
    for name in ("scripts", "devserver", "tooling"):
        shutil.copytree(REPO / name, copy.root / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(REPO / "template.yaml", copy.root / "template.yaml")
    # A samconfig.toml of the copy's own, whose one stage is `default`: the user's names stages of theirs.
    copy.write("samconfig.toml", SAMCONFIG)
    copy.write("tools/echo.py", TOOL)
    copy.write("tools/settings.toml", "[default]\n")
    for name in LOCAL_FILES:
        copy.write(name, 'CARRIER_TOKEN = "a developer\'s dummy token"\n')
    make = shutil.which("make")
    assert make
    # The SAM CLI's venv is made in this checkout first: made through the copy's .venv link, its
    # scripts would name the copy's path as their interpreter, and stop working once it is gone.
    made = subprocess.run(
        [make, "--no-print-directory", "-C", str(REPO), "sam-cli"], capture_output=True, text=True, check=False
    )  # noqa: S603
    assert made.returncode == 0, made.stdout + made.stderr
    finished = run(copy, make, "--no-print-directory", "build")
    assert finished.returncode == 0, finished.stdout + finished.stderr
    return copy


def test_the_artifact_holds_the_tools_and_their_settings_and_no_local_file(built: ProjectCopy) -> None:
    # GIVEN the project built with `make build`, its tools/ holding the local settings and editors' copies of them
    artifact = built.root / ARTIFACT
    # THEN the tool and settings.toml are in the artifact, and none of the local files
    shipped = {path.relative_to(artifact / "tools").as_posix() for path in (artifact / "tools").iterdir()}
    assert {"echo.py", "settings.toml", "__init__.py"} <= shipped
    assert not [name for name in LOCAL_FILES if (artifact / name).exists()]
    assert not [path for path in artifact.rglob("*") if "settings.local" in path.name]
    # AND the artifact check finds nothing wrong with it
    checked = run(built, str(built.root / ".venv" / "bin" / "python"), "-m", "scripts.check_artifact")
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize("local", LOCAL_FILES)
def test_a_local_file_put_into_the_built_artifact_fails_the_check(
    built: ProjectCopy, local: str, tmp_path: Path
) -> None:
    # GIVEN the built artifact, copied, with one local file put into it by hand
    artifact = shutil.copytree(built.root / ARTIFACT, tmp_path / "MedianToolsFunction", symlinks=True)
    shutil.copy2(built.root / local, artifact / local)
    # WHEN the artifact check runs on it
    checked = run(built, str(built.root / ".venv" / "bin" / "python"), "-m", "scripts.check_artifact", str(artifact))
    # THEN it fails, naming the file and why
    assert checked.returncode == 1
    assert f"artifact: {local} is in the artifact: a machine's local values or an editor's copy" in checked.stderr
