"""median_lambda/build/sources.py: the build copies what belongs in the function, and leaves every local file behind."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest
from median_lambda.build.check_imports import imports_of_tools
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
    said = copy_packages(tmp_path / "artifact", ("handler", "tools"), root).said
    # THEN exactly the modules and settings.toml are in the artifact
    assert copied(tmp_path / "artifact") == {*MODULES, "tools/settings.toml", "handler/app.py"}
    # AND the local files are left behind without a word: nothing a tool might need is among them
    assert said == []


def test_a_file_that_is_neither_is_left_behind_and_named_with_how_to_ship_it(tmp_path: Path) -> None:
    # GIVEN a data file a tool might read, and a module whose name Python cannot import
    root = project(tmp_path / "project", ("tools/__init__.py", "tools/data/zones.csv", "tools/orders (copy).py"))
    # WHEN the build copies tools/
    said = copy_packages(tmp_path / "artifact", ("tools",), root).said
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
    done = copy_packages(tmp_path / "artifact", ("tools",), root)
    # THEN the data file ships, and neither local file does, though the pattern names them
    assert copied(tmp_path / "artifact") == {"tools/__init__.py", "tools/data/zones.csv"}
    # AND the build says the pattern named them, and goes on: the pattern ships what it was for
    assert done.said == [
        'pyproject.toml [tool.median.artifact] include "tools/data/*" also matches tools/data/settings.local.toml, '
        "tools/data/zones.csv~, which the build leaves behind: a machine's or an editor's file never ships"
    ]
    assert done.refused == []


def test_a_malformed_include_setting_is_refused_with_its_shape(tmp_path: Path) -> None:
    # GIVEN pyproject.toml whose include is one string, not a list
    root = project(tmp_path / "project", ("tools/__init__.py",), '[tool.median.artifact]\ninclude = "tools/data/*"\n')
    # WHEN the build copies tools/
    # THEN it stops, saying what the setting must be
    with pytest.raises(SystemExit, match=r"include must be a list of patterns, like \[\"tools/data/\*.json\"\]"):
        copy_packages(tmp_path / "artifact", ("tools",), root)


def test_a_folder_linked_into_tools_is_copied_whole_and_said(tmp_path: Path) -> None:
    # GIVEN tools/carrier, a link to a package several projects share, beside the project
    shared = project(tmp_path / "shared", ("carrier/__init__.py", "carrier/client.py", "carrier/notes.txt"))
    root = project(tmp_path / "project", ("tools/__init__.py",))
    (root / "tools" / "carrier").symlink_to(shared / "carrier", target_is_directory=True)
    # WHEN the build copies tools/
    done = copy_packages(tmp_path / "artifact", ("tools",), root)
    # THEN the linked package's modules ship, as files of the artifact, as the function imports them
    shipped = {"tools/__init__.py", "tools/carrier/__init__.py", "tools/carrier/client.py"}
    assert copied(tmp_path / "artifact") == shipped
    assert not (tmp_path / "artifact" / "tools" / "carrier").is_symlink()
    # AND the build says where it took them from, and what it left behind there, as for any folder
    assert done.said[0] == f"copied tools/carrier/ from where it links, {shared / 'carrier'}"
    assert done.said[1].startswith("left behind tools/carrier/notes.txt: ")
    assert done.refused == []


def test_a_link_to_nothing_stops_the_build_naming_it(tmp_path: Path) -> None:
    # GIVEN a module of tools/ that is a link to a file since moved away
    root = project(tmp_path / "project", ("tools/__init__.py",))
    (root / "tools" / "rates.py").symlink_to("../../shared/rates.py")
    # WHEN the build copies tools/
    done = copy_packages(tmp_path / "artifact", ("tools",), root)
    # THEN it stops, naming the link and where it leads
    assert done.refused == [
        "tools/rates.py is a link to ../../shared/rates.py, which does not exist: the build cannot copy it"
    ]


def test_a_link_to_a_folder_holding_it_stops_the_build_naming_it(tmp_path: Path) -> None:
    # GIVEN tools/carrier/all, a link back up to tools/
    root = project(tmp_path / "project", ("tools/__init__.py", "tools/carrier/__init__.py"))
    (root / "tools" / "carrier" / "all").symlink_to("..", target_is_directory=True)
    # WHEN the build copies tools/
    done = copy_packages(tmp_path / "artifact", ("tools",), root)
    # THEN it stops there, naming the link, instead of copying tools/ into itself without end
    assert done.refused == [
        "tools/carrier/all is a link to .., a folder that holds it: the build cannot copy a folder into itself"
    ]
    assert copied(tmp_path / "artifact") == {"tools/__init__.py", "tools/carrier/__init__.py"}


def test_the_imports_of_a_linked_folder_are_checked_too(tmp_path: Path) -> None:
    # GIVEN a linked package of tools/ whose module imports a package
    shared = tmp_path / "shared" / "carrier"
    shared.mkdir(parents=True)
    (shared / "__init__.py").write_text("")
    (shared / "client.py").write_text("import yaml\n")
    root = project(tmp_path / "project", ("tools/__init__.py",))
    (root / "tools" / "carrier").symlink_to(shared, target_is_directory=True)
    # WHEN the build reads the imports of tools/
    # THEN that import is among them, at its file and line as the artifact will hold it
    assert [(found.path, found.line, found.module) for found in imports_of_tools(root)] == [
        ("tools/carrier/client.py", 1, "yaml")
    ]


@pytest.mark.parametrize("name", ["tools/x.py", "median_lambda/calls/dispatch.py", "tools/settings.toml"])
def test_what_the_framework_needs_belongs(name: str) -> None:
    assert belongs(PurePosixPath(name))


def test_the_command_copies_the_packages_of_the_folder_it_runs_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a project folder, and make running there as sam build does
    root = project(
        tmp_path / "project",
        ("handler/app.py", "tools/__init__.py", "tools/notes.md", "tools/settings.local.toml~"),
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


# --- The include patterns: the language the docs give, and a pattern that ships nothing stops the build ---

DATA = (
    "tools/__init__.py",
    "tools/data/zones.json",
    "tools/data/eu/rates.json",
    "tools/data/eu/de/berlin/streets.json",
    "tools/data/eu/de/berlin/README.md",
    "tools/data/zones.csv",
)


def included_by(tmp_path: Path, *patterns: str, files: tuple[str, ...] = DATA) -> tuple[set[str], list[str], list[str]]:
    """(the data files shipped, what the build said, what stops it) for pyproject.toml's include `patterns`."""
    listed = ", ".join(f'"{pattern}"' for pattern in patterns)
    root = project(tmp_path / "project", files, f"[tool.median.artifact]\ninclude = [{listed}]\n")
    done = copy_packages(tmp_path / "artifact", ("handler", "tools"), root)
    shipped = copied(tmp_path / "artifact") - {"tools/__init__.py"}
    return shipped, [line for line in done.said if not line.startswith("left behind")], done.refused


@pytest.mark.parametrize(
    ("pattern", "shipped"),
    [
        pytest.param(
            "tools/data/**/*.json",
            {
                "tools/data/zones.json",
                "tools/data/eu/rates.json",
                "tools/data/eu/de/berlin/streets.json",
            },
            id="** at depth 0, 1 and 3",
        ),
        pytest.param("tools/data/*.json", {"tools/data/zones.json"}, id="* within one folder"),
        pytest.param("tools/data/*/*.json", {"tools/data/eu/rates.json"}, id="* for one folder"),
        pytest.param(
            "tools/data/eu",
            {"tools/data/eu/rates.json", "tools/data/eu/de/berlin/streets.json", "tools/data/eu/de/berlin/README.md"},
            id="a folder: every file under it",
        ),
        pytest.param(
            "tools/data/eu/",
            {"tools/data/eu/rates.json", "tools/data/eu/de/berlin/streets.json", "tools/data/eu/de/berlin/README.md"},
            id="a folder written with its slash",
        ),
        pytest.param("tools/data/zones.cs?", {"tools/data/zones.csv"}, id="? for one character"),
        pytest.param("tools/**/README.md", {"tools/data/eu/de/berlin/README.md"}, id="** in the middle"),
    ],
)
def test_an_include_pattern_means_what_a_glob_means(tmp_path: Path, pattern: str, shipped: set[str]) -> None:
    # GIVEN data files at several depths under tools/data/, and pyproject.toml naming them with one pattern
    # WHEN the build copies tools/
    got, said, refused = included_by(tmp_path, pattern)
    # THEN exactly the files the glob names ship, and the build goes on
    assert got == shipped
    assert (said, refused) == ([], [])


def test_a_pattern_matching_nothing_stops_the_build_naming_it(tmp_path: Path) -> None:
    # GIVEN a pattern with a typo beside a good one
    # WHEN the build copies tools/
    got, _, refused = included_by(tmp_path, "tools/data/*.json", "tools/dat/*.json")
    # THEN the build is refused, naming the pattern and what to check
    assert refused == [
        'pyproject.toml [tool.median.artifact] include "tools/dat/*.json" matches no file: check its spelling and '
        "that the file is in the project (a glob from the project's root: * within a folder's name, ** any number "
        "of folders)"
    ]
    assert got == {"tools/data/zones.json"}


def test_a_pattern_matching_only_local_files_stops_the_build_saying_they_never_ship(tmp_path: Path) -> None:
    # GIVEN a pattern that names only this machine's copy of a data file
    files = (*DATA, "tools/data/prices.local.json")
    # WHEN the build copies tools/
    got, _, refused = included_by(tmp_path, "tools/data/prices*.json", files=files)
    # THEN it is refused: the file the pattern was written for is one that never ships
    assert refused == [
        'pyproject.toml [tool.median.artifact] include "tools/data/prices*.json" ships nothing: it matches only '
        "tools/data/prices.local.json, which the build leaves behind: a machine's or an editor's file never ships"
    ]
    assert got == set()


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        pytest.param("../secrets/*.json", "leads out of the project's tools/", id="a parent folder"),
        pytest.param("tools/../../secrets/*.json", "leads out of the project's tools/", id="out through tools/"),
        pytest.param("/etc/*", "leads out of the project's tools/", id="an absolute path"),
        pytest.param(
            "median_lambda/cli/templates/*.template", "names no file under tools/", id="the framework's files"
        ),
        pytest.param("tests/fixtures/*.json", "names no file under tools/", id="another folder of the project"),
        pytest.param("**/*.json", "names no file under tools/", id="every folder"),
        pytest.param("data/*.json", "names no file under tools/", id="relative to tools/"),
        pytest.param("", "is empty", id="empty"),
    ],
)
def test_a_pattern_escaping_tools_stops_the_build(tmp_path: Path, pattern: str, why: str) -> None:
    # GIVEN a pattern that names files outside tools/ (or could, past it)
    files = (*DATA, "median_lambda/cli/templates/tool.py.template", "tests/fixtures/a.json")
    # WHEN the build copies the packages
    got, _, refused = included_by(tmp_path, pattern, files=files)
    # THEN it is refused, saying why, and nothing outside the framework's own files ships for it
    assert len(refused) == 1
    assert refused[0].startswith(f'pyproject.toml [tool.median.artifact] include "{pattern}" {why}')
    assert got <= {"median_lambda/cli/templates/tool.py.template"}


def test_the_command_fails_on_a_pattern_matching_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a project whose include names a file that is not there, and make running there as sam build does
    root = project(
        tmp_path / "project", ("tools/__init__.py",), '[tool.median.artifact]\ninclude = ["tools/zones.csv"]\n'
    )
    monkeypatch.chdir(root)
    # WHEN the command runs
    status = main([str(tmp_path / "artifact")])
    # THEN it fails, saying so on the build's error output
    assert status == 1
    error = capsys.readouterr().err
    assert 'include "tools/zones.csv" matches no file' in error
    assert "The build stops: 1 problem(s) with what tools/ would ship, each named above." in error
