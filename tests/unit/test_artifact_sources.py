"""median_lambda/build/sources.py: the build copies what belongs in the function, and leaves every local file behind."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest
from median_lambda.build.sources import DEVELOPER_PARTS, belongs, copy_packages, main

# What a project's tools/ may hold beside its modules after a few weeks of work: the machine's
# settings, and the copies of it that vim, emacs, nano, a merge and a careful person leave.
LOCAL_LEFTOVERS = (
    "tools/settings.local.toml",
    "tools/settings.local.toml~",
    "tools/.settings.local.toml.swp",
    "tools/.settings.local.toml.swo",
    "tools/#settings.local.toml#",
    "tools/.#settings.local.toml",
    "tools/settings.local.toml.bak",
    "tools/settings.local.toml.orig",
    "tools/settings.local.example.toml",
    "tools/settings.toml.bak",
    "tools/orders.py~",
    "tools/.env",
    "tools/.env.local",
    "tools/carrier/.settings.local.toml.swp",
)
MODULES = ("tools/__init__.py", "tools/orders.py", "tools/carrier/__init__.py", "tools/carrier/client.py")


def project(root: Path, files: tuple[str, ...], pyproject: str = "") -> Path:
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text('TOKEN = "local-dev-token"\n' if "local" in name else "")
    if pyproject:
        (root / "pyproject.toml").write_text(pyproject)
    return root


def copied(artifact: Path) -> set[str]:
    return {path.relative_to(artifact).as_posix() for path in artifact.rglob("*") if path.is_file()}


def test_only_modules_and_settings_are_copied_and_no_local_file(tmp_path: Path) -> None:
    # GIVEN tools/ with modules, settings.toml, the local file and every editor's copy of it
    root = project(tmp_path / "project", (*MODULES, "tools/settings.toml", "handler/app.py", *LOCAL_LEFTOVERS))
    # WHEN the build copies it
    said = copy_packages(tmp_path / "artifact", ("handler", "tools"), root)
    # THEN exactly the modules and settings.toml are in the artifact
    assert copied(tmp_path / "artifact") == {*MODULES, "tools/settings.toml", "handler/app.py"}
    # AND the local files are left behind without a word: nothing a tool might need is among them
    assert said == []


def test_a_file_that_is_neither_is_left_behind_and_named_with_how_to_ship_it(tmp_path: Path) -> None:
    # GIVEN a data file a tool might read, and a module whose name Python cannot import
    root = project(tmp_path / "project", ("tools/__init__.py", "tools/data/zones.csv", "tools/orders (copy).py"))
    # WHEN the build copies tools/
    said = copy_packages(tmp_path / "artifact", ("tools",), root)
    # THEN neither ships, and each is named with the setting that would ship it
    assert copied(tmp_path / "artifact") == {"tools/__init__.py"}
    hint = "not a Python module or settings.toml; name it in pyproject.toml's [tool.median.artifact] include"
    assert said == [
        f"left behind tools/data/zones.csv: {hint} if a tool reads it",
        f"left behind tools/orders (copy).py: {hint} if a tool reads it",
    ]


def test_data_files_pyproject_names_ship_but_never_a_local_one(tmp_path: Path) -> None:
    # GIVEN pyproject.toml naming tools/data/*, and that folder holding a data file and an editor's backup
    files = ("tools/__init__.py", "tools/data/zones.csv", "tools/data/zones.csv~", "tools/data/settings.local.toml")
    pyproject = '[tool.median.artifact]\ninclude = ["tools/data/*"]\n'
    root = project(tmp_path / "project", files, pyproject)
    # WHEN the build copies tools/
    copy_packages(tmp_path / "artifact", ("tools",), root)
    # THEN the data file ships, and neither local file does, though the pattern names them
    assert copied(tmp_path / "artifact") == {"tools/__init__.py", "tools/data/zones.csv"}


def test_a_malformed_include_setting_is_refused_with_its_shape(tmp_path: Path) -> None:
    # GIVEN pyproject.toml whose include is one string, not a list
    root = project(tmp_path / "project", ("tools/__init__.py",), '[tool.median.artifact]\ninclude = "tools/data/*"\n')
    # WHEN the build copies tools/
    # THEN it stops, saying what the setting must be
    with pytest.raises(SystemExit, match=r"include must be a list of patterns, like \[\"tools/data/\*.json\"\]"):
        copy_packages(tmp_path / "artifact", ("tools",), root)


@pytest.mark.parametrize("name", ["tools/x.py", "handler/calls/dispatch.py", "tools/settings.toml"])
def test_what_the_framework_needs_belongs(name: str) -> None:
    assert belongs(PurePosixPath(name))


def test_the_command_copies_the_packages_of_the_folder_it_runs_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a project folder, and make running there as sam build does
    root = project(
        tmp_path / "project", ("handler/app.py", "tools/__init__.py", "tools/notes.md", "tools/settings.local.toml~")
    )
    monkeypatch.chdir(root)
    # WHEN the command runs
    assert main([str(tmp_path / "artifact")]) == 0
    # THEN that folder's entry point and tools are copied, beside median-lambda's runtime (its testing kit,
    # CLI and dev server left out), and the file left behind is said on the build's output
    artifact = copied(tmp_path / "artifact")
    assert {path for path in artifact if not path.startswith("median_lambda/")} == {
        "handler/app.py",
        "tools/__init__.py",
    }
    assert {"median_lambda/app.py", "median_lambda/_version.py", "median_lambda/calls/dispatch.py"} <= artifact
    assert not {path for path in artifact if path.split("/")[1] in DEVELOPER_PARTS}
    assert capsys.readouterr().out.startswith("left behind tools/notes.md: ")
