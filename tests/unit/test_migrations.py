"""median_lambda/project/migrations.py: what 3.0.0 asks of a 2.x project's own files, done by make upgrade.

tests/template/test_upgrade_guard.py runs it as an upgrade does, after Copier's merge, on projects of its own.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from median_lambda.project.migrations import (
    SNAPSTART_SWITCH_3_0_0,
    imports_of_median_lambda,
    migrate,
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
        (
            "def f():\n    from handler.testing.aws import MedianAWS\n",
            "def f():\n    from median_lambda.testing.aws import MedianAWS\n",
        ),
        ("from handler.rules import check_manifest\n", "from median_lambda.rules import check_manifest\n"),
        ("import handler.testing as kit\n", "import median_lambda.testing as kit\n"),
        (
            "from handler import (\n    tool,  # a comment\n)\n",
            "from median_lambda import (\n    tool,  # a comment\n)\n",
        ),
        ("from handler import testing\n", "from median_lambda import testing\n"),
        ("import os, handler.testing as kit\n", "import os, median_lambda.testing as kit\n"),
        (
            "if TYPE_CHECKING:\n    from handler import ToolContext\n",
            "if TYPE_CHECKING:\n    from median_lambda import ToolContext\n",
        ),
        ("import json; from handler import tool\n", "import json; from median_lambda import tool\n"),
        ("from handler . testing import aws\n", "from median_lambda.testing import aws\n"),
        ("from handler import tool\r\nX = 'é'\r\n", "from median_lambda import tool\r\nX = 'é'\r\n"),
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
        '"""A docstring of the 2.x era, whose line reads\nfrom handler import tool\n"""\n',
        'WRITTEN_OUT = """\nfrom handler.testing import MedianTestClient\n"""\n',  # a string a test writes out
        "from . import handler\nfrom .handler import run\n",  # the user's own relative package
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
    changed, said = to_3_0_0(tmp_path)
    again = to_3_0_0(tmp_path)
    # THEN both imports are median_lambda's, each file named once, the rest untouched, and a second run changes nothing
    assert (tmp_path / "tools" / "loyalty.py").read_text() == "from median_lambda import ToolContext, tool\nX = 1\n"
    assert (tmp_path / "tests" / "tools" / "test_loyalty.py").read_text().startswith("from median_lambda.testing ")
    assert changed == ["tools/loyalty.py", "tests/tools/test_loyalty.py"]
    assert said == [
        "tools/loyalty.py: 1 import of handler now of median_lambda",
        "tests/tools/test_loyalty.py: 1 import of handler now of median_lambda",
    ]
    assert again == ([], [])


def test_what_import_handler_testing_bound_is_used_as_median_lambda_s_module_and_still_runs() -> None:
    # GIVEN a test that imports the kit's module and reaches into it by its full name, at the top and in a function
    before = (
        "import handler.testing\n\nCLIENT = handler.testing.MedianTestClient\n\n\n"
        "def test_it(median_aws: handler.testing.aws.MedianAWS) -> None:\n    assert handler.testing.aws\n"
    )
    # WHEN it is migrated
    after, count = imports_of_median_lambda(before)
    # THEN the import and every use name median_lambda, which is what the import now binds: the module runs
    assert after == before.replace("handler.", "median_lambda.")
    assert count == 1
    namespace: dict[str, object] = {}
    exec(compile(after, "test_it.py", "exec"), namespace)  # noqa: S102 - the text just migrated, our own
    assert namespace["CLIENT"].__name__ == "MedianTestClient"  # type: ignore[attr-defined]


def test_a_helper_of_scripts_imported_as_a_module_is_used_as_median_lambda_s() -> None:
    # GIVEN a test that imports a 2.x helper of scripts/ as a module and calls it by its full name
    before = "import scripts.check_template\n\nscripts.check_template.main\n"
    # WHEN it is migrated
    after, _ = imports_of_median_lambda(before)
    # THEN it imports the module of median-lambda the helper is now, and uses it by that name
    assert after == "import median_lambda.cli.template_check\n\nmedian_lambda.cli.template_check.main\n"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("from handler import tool\nGREETING = 'héllo'\n".encode("latin-1"), "can't decode byte 0xe9"),
        (b"from handler import tool\ndef broken(:\n", "invalid syntax"),
        (b"# -*- coding: no-such-codec -*-\nfrom handler import tool\n", "unknown encoding"),
    ],
    ids=["not UTF-8, not declared", "a syntax error", "an encoding Python does not know"],
)
def test_a_file_that_is_not_python_is_named_and_left_and_the_rest_migrated(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    # GIVEN a tool that cannot be read as Python beside one that can
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "broken.py").write_bytes(content)
    (tmp_path / "tools" / "fine.py").write_text("from handler import tool\n")
    # WHEN 3.0.0's migration runs
    changed, said = to_3_0_0(tmp_path)
    # THEN the readable one is migrated, and the other named with why and what to do, and left byte for byte
    assert changed == ["tools/fine.py"]
    [unread] = [line for line in said if line.startswith("tools/broken.py")]
    assert unread.startswith("tools/broken.py: not migrated, it could not be read as Python (")
    assert reason in unread
    assert unread.endswith("): change its imports of handler to median_lambda by hand")
    assert (tmp_path / "tools" / "broken.py").read_bytes() == content


def test_a_file_in_the_encoding_it_declares_is_migrated_in_it(tmp_path: Path) -> None:
    # GIVEN a tool saved in Latin-1, as its coding line says (PEP 263), with Windows line endings
    source = "# -*- coding: latin-1 -*-\r\nfrom handler import tool\r\nGREETING = 'héllo'\r\n"
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "latin.py").write_bytes(source.encode("latin-1"))
    # WHEN 3.0.0's migration runs
    to_3_0_0(tmp_path)
    # THEN its import is median_lambda's, and every other byte is as it was
    expected = source.replace("from handler", "from median_lambda").encode("latin-1")
    assert (tmp_path / "tools" / "latin.py").read_bytes() == expected


def _committed(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    for command in (["init", "--quiet"], ["add", "-A"], ["commit", "--quiet", "-m", "the project"]):
        subprocess.run(  # noqa: S603 - git, with arguments of our own
            ["git", "-c", "user.email=u@example.invalid", "-c", "user.name=u", *command],  # noqa: S607
            cwd=root,
            check=True,
        )


@pytest.mark.parametrize(
    ("framework", "due"),
    [
        ({"handler/testing/__init__.py": "", "handler/calls/dispatch.py": ""}, True),
        ({"handler/protocol.py": ""}, True),
        ({"handler/__init__.py": "", "handler/app.py": "lambda_handler = None\n"}, False),
    ],
    ids=["2.x: the framework's packages", "2.x: its protocol module", "3.x: the entry point alone"],
)
def test_the_migration_is_due_where_the_project_s_files_say_it_was_2x(
    tmp_path: Path, framework: dict[str, str], due: bool
) -> None:
    # GIVEN a project as committed before the upgrade, its handler/ as a 2.x or a 3.x project holds it, and a test of
    # the user's importing `handler.app`, which in 3.x is the project's own entry point
    own = "from handler.app import lambda_handler\n"
    _committed(tmp_path, {**framework, "tests/test_entry.py": own})
    # WHEN the migrations run, whatever version Copier reads (a copy of an untagged commit reads as 0.0.0.postN)
    migrate(tmp_path)
    # THEN the import is median_lambda's in a 2.x project only
    migrated = (tmp_path / "tests" / "test_entry.py").read_text()
    assert migrated == (own.replace("handler.app", "median_lambda.app") if due else own)


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
    assert to_3_0_0(tmp_path) == ([], [])


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
