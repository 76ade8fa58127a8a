"""scripts/remove_example_blocks.py: "Make it yours" leaves a template and settings that still deploy."""

from __future__ import annotations

import shutil
import tomllib
from typing import TYPE_CHECKING

import yaml

from scripts.check_template import check
from scripts.remove_example_blocks import FILES, ROOT, main
from scripts.sam_settings import load_template
from tests.sam_template import translated

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def project(tmp_path: Path) -> Path:
    for name in FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def test_the_template_without_its_example_blocks_still_checks_and_translates(tmp_path: Path) -> None:
    # GIVEN a copy of template.yaml, tools/settings.toml and pipeline/oidc-role.yaml as the repository has them
    root = project(tmp_path)
    # WHEN the examples' blocks are deleted
    assert main(root) == 0
    template = load_template(root / "template.yaml")
    # THEN no block is left, and what an example added is gone: its table, its policy, its variable
    text = (root / "template.yaml").read_text(encoding="utf-8")
    assert "# >>> example" not in text
    assert "# <<< example" not in text
    assert "ReturnsTable" not in text
    assert "RETURNS_TABLE" not in text
    # AND the template is still one make validate and SAM accept, its parameters in step
    assert check(template) == []
    stack = translated(template)
    assert "MedianToolsFunction" in stack.resources
    # AND settings.toml still parses, every stage table kept, with no example's value in it
    settings = tomllib.loads((root / "tools/settings.toml").read_text(encoding="utf-8"))
    assert {"default", "staging", "production"} <= set(settings)
    assert not any(table for table in settings.values())
    # AND the pipeline's roles no longer name the example's table, and still parse
    pipeline = (root / "pipeline/oidc-role.yaml").read_text(encoding="utf-8")
    assert "ReturnsTable" not in pipeline
    assert "# >>> example" not in pipeline
    assert load_template(root / "pipeline/oidc-role.yaml")["Resources"]["StackRolesPermissionsBoundary"]


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
