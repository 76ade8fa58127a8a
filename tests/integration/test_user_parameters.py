"""A user adds template parameters: `make test` stays green, and `make validate` names the one that would go stale."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from tests.project_copy import REPO, copy_project

if TYPE_CHECKING:
    from pathlib import Path

# The template's tests, run in the copy as `make test` would run them.
TEMPLATE_TESTS = ("__init__.py", "conftest.py", "test_template_rollout.py", "test_check_template.py")
PARAMETERS = """Parameters:
  CarrierRegion:
    Type: String
    Default: eu
    AllowedValues: [eu, us]
  CarrierBaseUrl:
    Type: String
    Default: https://api.carrier.example
    MaxLength: 60
"""
VARIABLES = """          MEDIAN_STAGE: !Ref Stage
          CARRIER_REGION: !Ref CarrierRegion
          CARRIER_BASE_URL: !Ref CarrierBaseUrl
"""


def test_make_test_stays_green_with_a_users_parameters_and_make_validate_names_the_stale_one(tmp_path: Path) -> None:
    # GIVEN a project whose template gains two parameters passed to the function as variables:
    # one also added to VersionDescription, as the template's comment asks, and one not
    project = copy_project(tmp_path / "project")
    shutil.copy2(REPO / "samconfig.toml", project.root / "samconfig.toml")
    (project.root / "tests" / "unit").mkdir()
    for name in TEMPLATE_TESTS:
        shutil.copy2(REPO / "tests" / "unit" / name, project.root / "tests" / "unit" / name)
    template = project.read("template.yaml")
    template = template.replace("Parameters:\n", PARAMETERS, 1)
    template = template.replace("          MEDIAN_STAGE: !Ref Stage\n", VARIABLES, 1)
    description = "      VersionDescription: !Sub\n        - >-\n"
    assert template.count(description) == 1
    template = template.replace(description, f"{description}          ${{CarrierRegion}}\n", 1)
    (project.root / "template.yaml").write_text(template, encoding="utf-8")
    # WHEN the template's tests run, as make test runs them
    tests = project.pytest("tests/unit/test_template_rollout.py", "tests/unit/test_check_template.py")
    # THEN they pass, and prove that a changed CarrierRegion alone publishes a new version
    assert tests.returncode == 0, tests.stdout + tests.stderr
    proven = project.pytest("--collect-only", "tests/unit/test_template_rollout.py").stdout
    assert "test_a_changed_parameter_alone_publishes_a_new_version[CarrierRegion]" in proven
    # AND the stale one is skipped there, pointing at make validate
    assert "CarrierBaseUrl is not in VersionDescription: run make validate" in tests.stdout
    # WHEN make validate's template check runs
    validate = project.run("-m", "median_lambda.cli.template_check")
    # THEN it fails, naming CarrierBaseUrl, its variable and the fix, and not CarrierRegion
    assert validate.returncode == 1
    assert "Parameter CarrierBaseUrl: reaches the function (Environment variable CARRIER_BASE_URL)" in validate.stderr
    assert "add ${CarrierBaseUrl} to MedianToolsFunction's VersionDescription" in validate.stderr
    assert "CarrierRegion" not in validate.stderr
