"""median_lambda/project/examples.py: "Make it yours" leaves a template and settings that still deploy.

Run on this project's own template.yaml and settings.toml as they stand (the examples', or the
user's once "Make it yours" ran), and never expecting what they hold: what the examples' blocks
themselves declare is tests/tools/test_returns_template.py's, deleted with them.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from typing import TYPE_CHECKING

import yaml
from median_lambda.cli.template_check import check
from median_lambda.project.examples import FILES, ROOT, main
from median_lambda.project.sam_config import load_template
from median_lambda.testing import translated

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def project(tmp_path: Path) -> Path:
    for name in FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


# An oracle of its own, not the script's loop: an opening line, everything up to the first closing line
# of the same name, and that line.
_BLOCK = re.compile(
    r"^[ \t]*(?:#|<!--) >>> example: (?P<name>[\w-]+).*?^[ \t]*(?:#|<!--) <<< example: (?P=name)[^\n]*\n", re.M | re.S
)


def test_the_template_without_its_example_blocks_still_checks_and_translates(tmp_path: Path) -> None:
    # GIVEN a copy of template.yaml, tools/settings.toml and pipeline/oidc-role.yaml as this project has
    # them: the examples' blocks, or none left once "Make it yours" ran, among whatever the user has added
    root = project(tmp_path)
    before = {name: (root / name).read_text(encoding="utf-8") for name in FILES}
    template_checked = check(load_template(root / "template.yaml")) == []
    # WHEN the examples' blocks are deleted
    assert main(root) == 0
    # THEN each file is itself less exactly its blocks: nothing else it held is touched
    after = {name: (root / name).read_text(encoding="utf-8") for name in FILES}
    assert after == {name: _BLOCK.sub("", text) for name, text in before.items()}
    assert not any("# >>> example" in text or "# <<< example" in text for text in after.values())
    # AND the template is still one SAM translates, and make validate accepts if it did before
    template = load_template(root / "template.yaml")
    assert "MedianToolsFunction" in translated(template).resources
    if template_checked:
        assert check(template) == []
    # AND settings.toml still parses, every stage table it had kept
    tables = set(tomllib.loads(before["tools/settings.toml"]))
    assert tables <= set(tomllib.loads(after["tools/settings.toml"]))
    # AND the pipeline's roles still parse
    assert load_template(root / "pipeline/oidc-role.yaml")["Resources"]["StackRolesPermissionsBoundary"]


USERS_SETTINGS = """\
[default]
CARRIER_BASE_URL = "https://sandbox.carrier.example"
# >>> example: returns
RETURNS_TABLE = "returns"
# <<< example: returns
CARRIER_TIMEOUT_SECONDS = 5

[staging]
# >>> example: returns
PICKUP_API_TOKEN_SECRET = "median-tools-staging/pickup-api-token"
# <<< example: returns
CARRIER_TOKEN_SECRET = "median-tools-staging/carrier-token"

[production]
CARRIER_BASE_URL = "https://api.carrier.example"
# >>> example: returns
PICKUP_API_URL = "https://api.pickups.example"
# <<< example: returns
"""


def test_the_examples_values_go_and_the_users_own_stay_in_every_stage(tmp_path: Path) -> None:
    # GIVEN a settings.toml holding the user's own values in every stage, around the examples' blocks
    root = project(tmp_path)
    (root / "tools/settings.toml").write_text(USERS_SETTINGS, encoding="utf-8")
    # WHEN the examples' blocks are deleted
    assert main(root) == 0
    # THEN every stage keeps the user's values, and none of the examples'
    assert tomllib.loads((root / "tools/settings.toml").read_text(encoding="utf-8")) == {
        "default": {"CARRIER_BASE_URL": "https://sandbox.carrier.example", "CARRIER_TIMEOUT_SECONDS": 5},
        "staging": {"CARRIER_TOKEN_SECRET": "median-tools-staging/carrier-token"},
        "production": {"CARRIER_BASE_URL": "https://api.carrier.example"},
    }


def test_run_again_it_changes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a project whose example blocks were deleted
    root = project(tmp_path)
    main(root)
    before = {name: (root / name).read_text(encoding="utf-8") for name in FILES}
    capsys.readouterr()
    # WHEN it runs again
    # THEN it succeeds, says there is nothing left, and no file changes
    assert main(root) == 0
    assert "no example blocks left" in capsys.readouterr().out
    assert {name: (root / name).read_text(encoding="utf-8") for name in FILES} == before


def test_a_block_never_closed_is_named_at_its_line_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a settings.toml whose example block lost its closing line, and a template with blocks of its own
    root = project(tmp_path)
    template_before = (root / "template.yaml").read_text(encoding="utf-8")
    (root / "tools/settings.toml").write_text('[default]\nA = "1"\n# >>> example: carrier\nB = "2"\n', encoding="utf-8")
    # WHEN the blocks are deleted
    status = main(root)
    # THEN it fails naming the file and line of the opening, and leaves every file as it was
    assert status == 1
    assert "tools/settings.toml:3: this example block is never closed (# <<< example: carrier)" in (
        capsys.readouterr().err
    )
    assert (root / "template.yaml").read_text(encoding="utf-8") == template_before
    assert "B = " in (root / "tools/settings.toml").read_text(encoding="utf-8")


def test_a_closing_line_with_no_opening_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a template whose example block lost its opening line
    root = project(tmp_path)
    (root / "template.yaml").write_text(yaml.safe_dump({"Resources": {}}) + "# <<< example: returns\n")
    # WHEN the blocks are deleted
    # THEN it fails on that line
    assert main(root) == 1
    assert "template.yaml:2: this closes an example block that was not opened" in capsys.readouterr().err


ANSWERS = """\
# What `copier copy` answered for this project
_commit: v2.0.0
_src_path: https://example.invalid/median-tools-template
architecture: arm64
keep_examples: true
region: ''
stack_name: median-tools
stages:
- staging
- production
"""


def test_the_project_records_that_it_keeps_no_examples_for_copiers_next_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a project copied with the examples, whose Copier answers say so
    root = project(tmp_path)
    (root / ".copier-answers.yml").write_text(ANSWERS, encoding="utf-8")
    # WHEN "Make it yours" deletes the examples' blocks
    assert main(root) == 0
    # THEN the answers say the project keeps none, so copier update and recopy render it without them,
    # and every other answer is as it was
    recorded = (root / ".copier-answers.yml").read_text(encoding="utf-8")
    assert recorded == ANSWERS.replace("keep_examples: true", "keep_examples: false")
    assert ".copier-answers.yml: keep_examples: false, so copier update and copier recopy" in capsys.readouterr().out
    # AND run again, it changes nothing there either
    assert main(root) == 0
    assert (root / ".copier-answers.yml").read_text(encoding="utf-8") == recorded
    assert ".copier-answers.yml" not in capsys.readouterr().out


def test_answers_from_before_the_question_gain_it(tmp_path: Path) -> None:
    # GIVEN Copier answers that predate the keep_examples question, without a last newline
    root = project(tmp_path)
    older = ANSWERS.replace("keep_examples: true\n", "").rstrip("\n")
    (root / ".copier-answers.yml").write_text(older, encoding="utf-8")
    # WHEN the examples' blocks are deleted
    assert main(root) == 0
    # THEN the answer is added, and the file still reads as the same answers and that one
    answers = yaml.safe_load((root / ".copier-answers.yml").read_text(encoding="utf-8"))
    assert answers == {**yaml.safe_load(older), "keep_examples": False}


def test_a_project_without_copier_answers_gets_none(tmp_path: Path) -> None:
    # GIVEN a project with no Copier answers (the template repository itself)
    root = project(tmp_path)
    # WHEN the examples' blocks are deleted
    assert main(root) == 0
    # THEN no answers file is made
    assert not (root / ".copier-answers.yml").exists()
