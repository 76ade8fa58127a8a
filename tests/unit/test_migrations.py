"""median_lambda/project/migrations.py: what 3.0.0 asks of a 2.x project's own files, done by make upgrade."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from median_lambda.project.migrations import (
    SNAPSTART_SWITCH_3_0_0,
    imports_of_median_lambda,
    snapstart_as_a_parameter,
    to_3_0_0,
    to_3_0_0_sorted,
)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            "from handler import ToolContext, ToolError, tool\n",
            "from median_lambda import ToolContext, ToolError, tool\n",
        ),
        ("from handler.testing import MedianTestClient\n", "from median_lambda.testing import MedianTestClient\n"),
        ("    from handler.testing.aws import MedianAWS\n", "    from median_lambda.testing.aws import MedianAWS\n"),
        ("from handler.rules import check_manifest\n", "from median_lambda.rules import check_manifest\n"),
        ("import handler.testing as kit\n", "import median_lambda.testing as kit\n"),
        ("from handler import (\n    tool,\n)\n", "from median_lambda import (\n    tool,\n)\n"),
    ],
)
def test_each_import_of_the_framework_becomes_one_of_median_lambda(before: str, after: str) -> None:
    # WHEN a 2.x import of the framework is migrated
    # THEN it is the same import of median_lambda, and counted
    assert imports_of_median_lambda(before) == (after, 1)


@pytest.mark.parametrize(
    "untouched",
    [
        "from handlers import registry\n",  # another package of the user's
        "from my_app.handler import run\n",
        "import handlers.x\n",
        'print("from handler import tool")\n',  # not an import
        "# from handler import tool, in a comment, as it was\n",
        "handler = make_handler()\nhandler.testing = True\n",
    ],
)
def test_nothing_but_an_import_of_the_framework_changes(untouched: str) -> None:
    assert imports_of_median_lambda(untouched) == (untouched, 0)


def test_the_project_s_own_files_are_migrated_and_each_is_named(tmp_path: Path) -> None:
    # GIVEN a 2.x project's tool, its test and a conftest, and a file that imports nothing of the framework
    (tmp_path / "tools").mkdir()
    (tmp_path / "tests" / "tools").mkdir(parents=True)
    (tmp_path / "tools" / "loyalty.py").write_text("from handler import ToolContext, tool\nX = 1\n")
    (tmp_path / "tests" / "tools" / "test_loyalty.py").write_text("from handler.testing import MedianTestClient\n")
    (tmp_path / "tools" / "_helpers.py").write_text("import json\n")
    # WHEN 3.0.0's migration runs, twice
    said = to_3_0_0(tmp_path)
    again = to_3_0_0(tmp_path)
    # THEN both imports are median_lambda's, each file named once, the rest untouched, and a second run changes nothing
    assert (tmp_path / "tools" / "loyalty.py").read_text() == "from median_lambda import ToolContext, tool\nX = 1\n"
    assert (tmp_path / "tests" / "tools" / "test_loyalty.py").read_text().startswith("from median_lambda.testing ")
    assert said == [
        "tools/loyalty.py: 1 import of handler now of median_lambda",
        "tests/tools/test_loyalty.py: 1 import of handler now of median_lambda",
    ]
    assert again == []


def _project_with_ruff(root: Path, pyproject: str) -> None:
    (root / ".venv" / "bin").mkdir(parents=True)
    (root / ".venv" / "bin" / "ruff").symlink_to(Path(sys.executable).with_name("ruff"))
    (root / "pyproject.toml").write_text(pyproject)
    (root / "tools").mkdir()
    (root / "tools" / "x.py").write_text(A_2X_TOOL)


# A 2.x tool: the framework's import apart, as the project's own package was sorted then.
A_2X_TOOL = "from __future__ import annotations\n\nfrom pydantic import BaseModel\n\nfrom handler import tool\n"
SORTED = "from __future__ import annotations\n\nfrom median_lambda import tool\nfrom pydantic import BaseModel\n"


@pytest.mark.parametrize(
    "pyproject",
    [
        "[tool.ruff]\nline-length = 120\n",
        "[project]\n<<<<<<< before updating\nname = 'a'\n=======\n>>>>>>> after updating\n",
    ],
    ids=["its settings", "a pyproject.toml the merge left in conflict"],
)
def test_the_rewritten_imports_are_sorted_by_the_projects_ruff(tmp_path: Path, pyproject: str) -> None:
    # GIVEN a 2.x project with its venv's ruff, its settings readable or not
    _project_with_ruff(tmp_path, pyproject)
    # WHEN 3.0.0's migration runs
    said = to_3_0_0_sorted(tmp_path)
    # THEN median_lambda's import sits with the third-party ones, as make lint wants, and nothing more is asked
    assert (tmp_path / "tools" / "x.py").read_text() == SORTED
    assert said == ["tools/x.py: 1 import of handler now of median_lambda"]


def test_without_a_venv_it_says_to_make_format(tmp_path: Path) -> None:
    # GIVEN a 2.x project checked out without its venv
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "x.py").write_text(A_2X_TOOL)
    # WHEN 3.0.0's migration runs
    said = to_3_0_0_sorted(tmp_path)
    # THEN it rewrites the import and says how to sort it
    assert said[-1] == "run `make format` once `make install` has made the venv: ruff sorts median_lambda's imports"


def test_the_contract_suite_a_2x_project_held_is_left_to_the_upgrade(tmp_path: Path) -> None:
    # GIVEN a 2.x project's tests/contract/, which was the template's and the upgrade deletes
    (tmp_path / "tests" / "contract").mkdir(parents=True)
    (tmp_path / "tests" / "contract" / "deployed.py").write_text("from handler.testing import signed_event\n")
    # WHEN 3.0.0's migration runs
    # THEN it is not touched: the upgrade knows it unchanged, and deletes it
    assert to_3_0_0(tmp_path) == []


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            "from scripts.remove_example_blocks import FILES, main\n",
            "from median_lambda.project.examples import FILES, main\n",
        ),
        (
            "from scripts.sam_settings import load_template\n",
            "from median_lambda.project.sam_config import load_template\n",
        ),
        ("import scripts.check_template\n", "import median_lambda.cli.template_check\n"),
    ],
)
def test_an_import_of_a_2x_helper_of_scripts_becomes_its_median_lambda_module(before: str, after: str) -> None:
    # WHEN a test of the user's that imported a helper of the 2.x project's scripts/ is migrated
    # THEN it imports the module of median-lambda that helper is now
    assert imports_of_median_lambda(before) == (after, 1)


def test_a_scripts_module_of_the_users_own_is_left_alone() -> None:
    assert imports_of_median_lambda("from scripts.seed_my_table import seed\n") == (
        "from scripts.seed_my_table import seed\n",
        0,
    )


NEW_SWITCH = '  # SnapStart, a stage\'s parameter now\n  SnapStartEnabled: !Equals [!Ref EnableSnapStart, "true"]\n'


def conflicted(yours: str) -> str:
    """template.yaml as `copier update --conflict inline` leaves it around SnapStart's switch."""
    return (
        "Conditions:\n<<<<<<< before updating\n"
        + yours
        + "=======\n"
        + NEW_SWITCH
        + ">>>>>>> after updating\n  SecretsExtensionEnabled: !And\n"
    )


SAMCONFIG = """[default.deploy.parameters]
parameter_overrides = "MedianKeySecretName=\\"median-tools/median-key\\""

[default.local_invoke.parameters]
parameter_overrides = "ParametersSecretsExtensionLayerArn=none"

[production.deploy.parameters]
parameter_overrides = "Stage=production AlarmEmail=oncall@example.com"
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "--quiet"], cwd=tmp_path, check=True)  # noqa: S607
    (tmp_path / "samconfig.toml").write_text(SAMCONFIG, encoding="utf-8")
    return tmp_path


def test_snapstart_switched_on_by_its_line_becomes_the_parameter_in_every_deploy(project: Path) -> None:
    # GIVEN the merge's conflict between 3.0.0's switch, turned on by its line and nothing else, and the new lines
    switched_on = SNAPSTART_SWITCH_3_0_0.replace(
        '  SnapStartEnabled: !Equals ["off", "on"]', '  SnapStartEnabled: !Equals ["on", "on"]'
    )
    (project / "template.yaml").write_text(conflicted(switched_on), encoding="utf-8")
    # WHEN the migration runs
    said = snapstart_as_a_parameter(project)
    # THEN the new lines are taken, and each deploy (not sam local) switches SnapStart on, the user's values kept
    assert (project / "template.yaml").read_text(encoding="utf-8") == (
        "Conditions:\n" + NEW_SWITCH + "  SecretsExtensionEnabled: !And\n"
    )
    samconfig = (project / "samconfig.toml").read_text(encoding="utf-8")
    assert samconfig == SAMCONFIG.replace('median-key\\""', 'median-key\\" EnableSnapStart=true"').replace(
        "AlarmEmail=oncall@example.com", "AlarmEmail=oncall@example.com EnableSnapStart=true"
    )
    assert said == [
        "template.yaml: SnapStart, switched on by its line, is the parameter EnableSnapStart now; EnableSnapStart=true "
        "added to samconfig.toml's [default.deploy.parameters], [production.deploy.parameters]"
    ]
    # AND run again, it finds nothing to do
    assert snapstart_as_a_parameter(project) == []


@pytest.mark.parametrize(
    "yours",
    [
        SNAPSTART_SWITCH_3_0_0,  # the switch as shipped: some other change of the user's made this conflict
        SNAPSTART_SWITCH_3_0_0.replace('["off", "on"]', '["on", "on"]').replace("Off, as written", "On, for us"),
    ],
    ids=["not switched on", "switched on, and a comment of the user's"],
)
def test_any_other_conflict_there_is_left_for_the_user(project: Path, yours: str) -> None:
    # GIVEN a conflict at SnapStart's switch whose user side is not the switch turned on and nothing else
    (project / "template.yaml").write_text(conflicted(yours), encoding="utf-8")
    # WHEN the migration runs
    said = snapstart_as_a_parameter(project)
    # THEN it changes nothing: the user resolves it, as the CHANGELOG says
    assert said == []
    assert (project / "template.yaml").read_text(encoding="utf-8") == conflicted(yours)
    assert (project / "samconfig.toml").read_text(encoding="utf-8") == SAMCONFIG
