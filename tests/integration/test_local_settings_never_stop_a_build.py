"""A tools/settings.local.toml that is not TOML, or holds a stage's table, never stops `make build` or
`make deploy`'s preflight (the file never ships), and is named as this machine's own where it matters."""

from __future__ import annotations

import shutil
import subprocess
from typing import TYPE_CHECKING

import pytest

from tests.project_copy import REPO, ProjectCopy, copy_project

if TYPE_CHECKING:
    from pathlib import Path

TOOL = '''
from pydantic import BaseModel

from handler import Settings, tool


class CarrierSettings(Settings):
    carrier_base_url: str


class ParcelInput(BaseModel):
    parcel: str


@tool(risk="low")
def parcel_eta(args: ParcelInput, settings: CarrierSettings) -> dict:
    """Ask the carrier when a parcel arrives."""
    return {"baseUrl": settings.carrier_base_url}
'''
SETTINGS = """
[default]
CARRIER_BASE_URL = "https://sandbox.carrier.example"

[staging]

[production]
CARRIER_BASE_URL = "https://api.carrier.example"
"""
BROKEN_LOCAL_FILES = [
    pytest.param('CARRIER_BASE_URL = "http://127.0.0.1:8081\n', "not valid TOML", id="not TOML"),
    pytest.param('[production]\nCARRIER_BASE_URL = "http://x"\n', "[production] is a table", id="a stage's table"),
]


@pytest.fixture
def project(tmp_path: Path) -> ProjectCopy:
    copy = copy_project(tmp_path / "project")
    copy.write("tools/carrier.py", TOOL)
    copy.write("tools/settings.toml", SETTINGS)
    return copy


def the_builds_handler_commands(artifacts: Path) -> list[str]:
    """The lines of the Makefile's build recipe that run the handler's CLI, as `make -n` prints them."""
    make = shutil.which("make")
    assert make
    recipe = subprocess.run(  # noqa: S603 - make with our own arguments, printing the recipe only
        [make, "-n", "-o", ".venv/.installed", "build-MedianToolsFunction", f"ARTIFACTS_DIR={artifacts}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = [line for line in recipe.splitlines() if line.startswith(".venv/bin/python -m handler")]
    assert [line.split()[3] for line in lines] == ["check", "manifest", "stages", "tool-modules", "--version"]
    return lines


@pytest.mark.parametrize(("local", "named"), BROKEN_LOCAL_FILES)
def test_the_build_and_the_preflight_go_on_and_this_machines_runs_name_the_file(
    project: ProjectCopy, tmp_path: Path, local: str, named: str
) -> None:
    # GIVEN this machine's settings.local.toml, broken
    project.write("tools/settings.local.toml", local)
    artifacts = tmp_path / "artifact"
    (artifacts / "handler").mkdir(parents=True)
    bash = shutil.which("bash")
    assert bash
    # WHEN the build's own handler commands run in the project, as sam build runs them
    for line in the_builds_handler_commands(artifacts):
        built = project._run([bash, "-c", line], None)
        # THEN each succeeds, reading none of it
        assert built.returncode == 0, f"{line}\n{built.stderr}"
    assert (artifacts / "handler" / "stages.txt").read_text(encoding="utf-8").split() == [
        "default",
        "production",
        "staging",
    ]
    # AND the deploy's preflight finds nothing wrong with the stage it deploys
    preflight = project.run("-c", "from handler.cli.commands import stage_problems; print(stage_problems('default'))")
    assert preflight.stdout.strip() == "[]", preflight.stderr
    # AND make check, which speaks for this machine too, names the file as this machine's own
    checked = project.run("-m", "handler", "check")
    assert checked.returncode == 1
    assert "on this machine: tools/settings.local.toml: " in checked.stderr and named in checked.stderr
    assert "the build and deploys never do" in checked.stderr
    # AND a test of the tool (make test-tools) says it beside the 500 it gets
    script = "from handler.testing import MedianTestClient as C; print(C().call('parcelEta', {'parcel': 'P-1'}).status)"
    called = project.run("-c", script)
    assert called.stdout.strip().splitlines()[-1] == "500"
    assert "tools/settings.local.toml" in called.stderr and named in called.stderr
