"""An upgrade loses nothing a user changed: median_lambda/project/upgrade_guard.py, run by Copier's migrations.

Each test makes a small Copier template of its own, two versions tagged in a git repository, whose
copier.yml runs the guard as the template's does, then copies the first version, changes it as a
user would, and updates it to the second with the pinned Copier (`make upgrade` runs that one).
A three-way merge of text is Copier's own, and holds; what these hold is every way it loses a
user's edit without a word: a file the new version deletes or renames, a binary file both sides
changed; and what an old version leaves behind in paths the new one excludes.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
COPIER = REPO / ".venv" / "copier" / "bin" / "copier"
LIBRARY = REPO / "median-lambda" / "src"
GUARD = (
    "PYTHONPATH='" + str(LIBRARY) + "' '{{ _copier_python }}' -m median_lambda.project.upgrade_guard"
    " {step} '{{ _copier_conf.src_path }}' '{{ _version_%s }}'"
)
COPIER_YML = f"""\
_templates_suffix: .jinja
_exclude: [copier.yml, .git@EXCLUDED@]
_migrations:
  - command: "{GUARD.replace("{step}", "before") % "from"}"
    when: "{{{{ _stage == 'before' }}}}"
  - command: "{GUARD.replace("{step}", "after") % "to"}"
    when: "{{{{ _stage == 'after' }}}}"
greeting:
  type: str
  default: hello
"""
_GIT = ("-c", "user.email=test@example.invalid", "-c", "user.name=test")


def git(root: Path, *arguments: str) -> str:
    return subprocess.run(["git", *_GIT, *arguments], cwd=root, capture_output=True, text=True, check=True).stdout  # noqa: S603, S607


def release(template: Path, version: str, files: dict[str, bytes | None], excluded: tuple[str, ...] = ()) -> None:
    """Commit `files` (None deletes one) to the template, with copier.yml excluding `excluded`, tagged `version`."""
    (template / "copier.yml").write_text(COPIER_YML.replace("@EXCLUDED@", "".join(f", {path}" for path in excluded)))
    for name, content in files.items():
        path = template / name
        if content is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
    git(template, "add", "-A")
    git(template, "commit", "--quiet", "-m", version)
    git(template, "tag", version)


def copier(*arguments: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    environment = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
    return subprocess.run(  # noqa: S603 - the pinned copier, with arguments of our own
        [str(COPIER), *arguments], cwd=cwd, env=environment, capture_output=True, text=True, check=False
    )


@pytest.fixture
def template(tmp_path: Path) -> Path:
    root = tmp_path / "template"
    root.mkdir()
    git(root, "init", "--quiet")
    release(
        root,
        "v1.0.0",
        {
            "{{ _copier_conf.answers_file }}.jinja": b"{{ _copier_answers|to_nice_yaml -}}\n",
            "kept.txt": b"the template's\n",
            "moved.txt": b"a file the next version renames\n",
            "logo.bin": b"\x00\x01 version one",
            "docs/guide.md": b"a guide the next version keeps in the template repository only\n",
            "docs/other.md": b"another\n",
        },
    )
    return root


@pytest.fixture
def project(tmp_path: Path, template: Path) -> Path:
    """A project copied from v1.0.0 and committed, as a user starts."""
    root = tmp_path / "project"
    copied = copier("copy", "--trust", "--defaults", "--quiet", "--vcs-ref", "v1.0.0", str(template), str(root))
    assert copied.returncode == 0, copied.stderr
    git(root, "init", "--quiet")
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "copier copy")
    return root


def commit(root: Path, files: dict[str, bytes]) -> None:
    for name, content in files.items():
        (root / name).write_bytes(content)
    git(root, "commit", "--quiet", "-am", "the user's changes")


def update(project: Path) -> subprocess.CompletedProcess[str]:
    return copier("update", "--trust", "--defaults", "--skip-answered", "--conflict", "inline", cwd=project)


def test_a_file_the_user_changed_that_the_new_version_renames_is_put_back_and_named(
    template: Path, project: Path
) -> None:
    # GIVEN the user's edit to a file of the template's, and a version that renames that file
    commit(project, {"moved.txt": b"a file the next version renames\nmy own line\n"})
    release(template, "v1.1.0", {"moved.txt": None, "renamed.txt": b"a file the next version renames\n"})
    # WHEN the project is updated
    updated = update(project)
    # THEN the upgrade stops, naming the file, which is back as the user left it; the new name is there too
    assert updated.returncode != 0
    assert "would have been lost" in updated.stdout + updated.stderr
    assert "  moved.txt" in updated.stdout + updated.stderr
    assert (project / "moved.txt").read_bytes() == b"a file the next version renames\nmy own line\n"
    assert (project / "renamed.txt").is_file()


def test_a_binary_file_both_sides_changed_keeps_the_users_and_says_where_the_templates_is(
    template: Path, project: Path
) -> None:
    # GIVEN the user's own logo, and a version with a new logo of the template's
    commit(project, {"logo.bin": b"\x00\x02 the user's logo"})
    release(template, "v1.1.0", {"logo.bin": b"\x00\x01 version two"})
    # WHEN the project is updated
    updated = update(project)
    # THEN the upgrade stops naming it; the user's logo is back, and the template's is kept for them to compare
    assert updated.returncode != 0
    assert "  logo.bin" in updated.stdout + updated.stderr
    assert (project / "logo.bin").read_bytes() == b"\x00\x02 the user's logo"
    kept = Path(git(project, "rev-parse", "--absolute-git-dir").strip()) / "median-upgrade" / "theirs" / "logo.bin"
    assert kept.read_bytes() == b"\x00\x01 version two"


def test_what_a_new_version_excludes_is_deleted_unless_the_user_changed_it(template: Path, project: Path) -> None:
    # GIVEN a version that keeps its guides out of projects, and a user who edited one of them
    commit(project, {"docs/guide.md": b"my notes in the guide\n"})
    release(template, "v1.1.0", {"kept.txt": b"the template's, improved\n"}, excluded=("/docs",))
    # WHEN the project is updated
    updated = update(project)
    # THEN the guide the user never touched is gone, the one they changed is kept and named, and nothing stops
    assert updated.returncode == 0, updated.stdout + updated.stderr
    assert not (project / "docs" / "other.md").exists()
    assert (project / "docs" / "guide.md").read_bytes() == b"my notes in the guide\n"
    assert "no longer has these files, which you changed" in updated.stdout
    assert "  docs/guide.md" in updated.stdout
    assert (project / "kept.txt").read_bytes() == b"the template's, improved\n"


def test_an_upgrade_that_loses_nothing_goes_through_with_the_users_edits_merged(template: Path, project: Path) -> None:
    # GIVEN a user's edit of a text file the next version also changes, elsewhere in it
    commit(project, {"kept.txt": b"the template's\nmine\n"})
    release(template, "v1.1.0", {"kept.txt": b"first\nthe template's\n"})
    # WHEN the project is updated
    updated = update(project)
    # THEN Copier's merge holds both, and the guard lets it be
    assert updated.returncode == 0, updated.stdout + updated.stderr
    assert (project / "kept.txt").read_bytes() == b"first\nthe template's\nmine\n"
