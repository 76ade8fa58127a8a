"""`make remove-examples` (`median remove-examples`): it deletes the example files by name, each only while it is the
template's, and nothing of the user's: not tests/tools/ whole, not their tests or tools, committed or not, not the
seed hook.

Run as the Makefile runs it, `median remove-examples` in the project's root, on a project made of this
repository's own examples (the files a project copied from this version holds) and their blocks.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from median_lambda.project.examples import EXAMPLE_FILES, FILES, SEED_HOOK, SHIPPED_SEED_HOOK, digest

REPO = Path(__file__).resolve().parents[2]
MEDIAN = Path(sys.executable).with_name("median")
# What stays of the template's in tests/tools/ and tools/ beside the examples: the packages, and the seed hook.
KEPT = {"tools/__init__.py", "tests/tools/__init__.py", SEED_HOOK}
# A user's own work beside the examples: a tool and its tests (what make new-tool writes), and a helper.
USERS_OWN = {
    "tools/loyalty.py": "from median_lambda import tool\n",
    "tests/tools/test_loyalty.py": "def test_points() -> None:\n    assert 120 == 120\n",
    "tests/tools/loyalty_data.json": '{"ada@example.com": 120}\n',
}


def examples_in(root: Path) -> list[str]:
    return sorted(name for name in EXAMPLE_FILES if (root / name).exists())


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project as this version copies it with the examples: their files, the seed hook, the blocks' files."""
    for name in [*EXAMPLE_FILES, *KEPT, *(name for name in FILES if name != "README.md")]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, tmp_path / name)
    return tmp_path


def remove_examples(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - this project's own command
        [str(MEDIAN), "remove-examples"], cwd=root, capture_output=True, text=True, check=False, timeout=60
    )


def test_every_example_file_the_template_ships_is_listed_with_its_digest() -> None:
    # GIVEN this version's example tools and tests: every file of tools/ and tests/tools/ but the packages, the
    # settings and the seed hook
    shipped = {
        path.relative_to(REPO).as_posix()
        for folder in ("tools", "tests/tools")
        for path in (REPO / folder).iterdir()
        if path.is_file() and path.suffix == ".py"
    } - KEPT
    # THEN each is one make remove-examples deletes, as it is now: changing one adds its digest to EXAMPLE_FILES
    # (keeping the older ones, which projects copied before still hold)
    assert set(EXAMPLE_FILES) == shipped
    for name in shipped:
        assert digest(REPO / name) in EXAMPLE_FILES[name], f"{name} changed: add {digest(REPO / name)} to EXAMPLE_FILES"
    assert digest(REPO / SEED_HOOK) in SHIPPED_SEED_HOOK


def test_the_examples_go_and_the_users_own_files_stay(project: Path) -> None:
    # GIVEN a project with the examples, and a tool, its tests and a data file of the user's beside them
    for name, text in USERS_OWN.items():
        (project / name).write_text(text, encoding="utf-8")
    # WHEN make remove-examples runs
    removed = remove_examples(project)
    # THEN each example file is deleted, and said so
    assert removed.returncode == 0, removed.stderr
    assert examples_in(project) == []
    for name in EXAMPLE_FILES:
        assert f"{name}: deleted\n" in removed.stdout
    # AND the user's files, the packages and the seed hook are there as they were
    for name, text in USERS_OWN.items():
        assert (project / name).read_text(encoding="utf-8") == text
    for name in KEPT:
        assert (project / name).read_bytes() == (REPO / name).read_bytes()
    # AND it says the seed hook is kept, and what the template's still seeds
    assert (
        f"{SEED_HOOK}: kept, the hook make serve LOCAL_AWS=moto seeds your tools' tables with; it still seeds the "
        "returns example's table and secret, whose settings are gone: make it seed yours, or delete it"
    ) in removed.stdout


@pytest.mark.parametrize("changed", sorted(EXAMPLE_FILES))
def test_an_example_the_user_changed_stops_it_before_anything_changes(project: Path, changed: str) -> None:
    # GIVEN a project whose example file holds a line of the user's (committed or not: the file is all there is)
    with (project / changed).open("a", encoding="utf-8") as file:
        file.write("# mine\n")
    before = {path: path.read_bytes() for path in project.rglob("*") if path.is_file()}
    # WHEN make remove-examples runs
    removed = remove_examples(project)
    # THEN it fails, naming the file and what to do, and no file is deleted or changed: no example, no block
    assert removed.returncode == 1
    assert removed.stderr == (
        f"error: {changed} is no longer the template's example, and may hold your work: nothing was changed. Move "
        "what is yours to a name of your own (git mv FILE NEW_NAME), or delete the file yourself, then run make "
        "remove-examples again\n"
    )
    assert {path: path.read_bytes() for path in project.rglob("*") if path.is_file()} == before


def test_an_example_checked_out_with_windows_line_endings_is_the_templates(project: Path) -> None:
    # GIVEN a project checked out where git writes \r\n (core.autocrlf)
    for name in EXAMPLE_FILES:
        path = project / name
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    # WHEN make remove-examples runs
    # THEN each is still the template's example, and deleted
    assert remove_examples(project).returncode == 0
    assert examples_in(project) == []


def test_a_seed_hook_of_the_users_is_kept_without_a_word(project: Path) -> None:
    # GIVEN a seed hook the user made their own
    (project / SEED_HOOK).write_text("def seed() -> None:\n    pass\n", encoding="utf-8")
    # WHEN make remove-examples runs
    removed = remove_examples(project)
    # THEN it is kept, and not said to seed the examples' table
    assert removed.returncode == 0, removed.stderr
    assert (project / SEED_HOOK).read_text(encoding="utf-8") == "def seed() -> None:\n    pass\n"
    assert SEED_HOOK not in removed.stdout


def test_run_again_it_deletes_nothing_and_succeeds(project: Path) -> None:
    # GIVEN a project whose examples make remove-examples deleted, and a test of the user's written since
    assert remove_examples(project).returncode == 0
    (project / "tests/tools/test_loyalty.py").write_text(USERS_OWN["tests/tools/test_loyalty.py"], encoding="utf-8")
    # WHEN it runs again
    again = remove_examples(project)
    # THEN it succeeds, deleting nothing, and says no block is left
    assert again.returncode == 0, again.stderr
    assert ": deleted\n" not in again.stdout
    assert "no example blocks left in" in again.stdout
    assert (project / "tests/tools/test_loyalty.py").exists()


def test_an_example_as_an_earlier_release_shipped_it_is_the_templates(project: Path) -> None:
    # GIVEN a project copied from 3.0.0, whose examples' fixture said to delete the folder's files (upgrades never
    # touch tests/tools/, so the project keeps that text)
    conftest = project / "tests/tools/conftest.py"
    conftest.write_text(
        conftest.read_text(encoding="utf-8").replace(
            "the example tools: make remove-examples deletes this file with them.",
            "the example tools. Delete this folder's files with the examples.",
        ),
        encoding="utf-8",
    )
    assert digest(conftest) == EXAMPLE_FILES["tests/tools/conftest.py"][0]
    # WHEN make remove-examples runs
    # THEN it is that release's example, and deleted with the others
    assert remove_examples(project).returncode == 0
    assert examples_in(project) == []
