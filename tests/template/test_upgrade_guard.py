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
    " {step} '{{ _version_%s }}'"
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


def release(
    template: Path,
    version: str | None,
    files: dict[str, bytes | None],
    excluded: tuple[str, ...] = (),
    tasks: str = "",
) -> None:
    """Commit `files` (None deletes one) to the template, with copier.yml excluding `excluded` and running `tasks` (a
    `_tasks:` block) on a copy, tagged `version` (None: a commit no tag names)."""
    (template / "copier.yml").write_text(
        COPIER_YML.replace("@EXCLUDED@", "".join(f", {path}" for path in excluded)) + tasks
    )
    for name, content in files.items():
        path = template / name
        if content is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
    git(template, "add", "-A")
    git(template, "commit", "--quiet", "-m", version or "a commit")
    if version:
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


def copied(template: Path, version: str, root: Path) -> Path:
    """A project copied from `version` and committed, as a user starts."""
    done = copier("copy", "--trust", "--defaults", "--quiet", "--vcs-ref", version, str(template), str(root))
    assert done.returncode == 0, done.stderr
    git(root, "init", "--quiet")
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "copier copy")
    return root


@pytest.fixture
def project(tmp_path: Path, template: Path) -> Path:
    return copied(template, "v1.0.0", tmp_path / "project")


def commit(root: Path, files: dict[str, bytes]) -> None:
    """The user's changes, new files and edits alike, committed."""
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(content)
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "the user's changes")


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


def test_a_clean_upgrade_says_each_thing_once_and_keeps_nothing_of_the_users(template: Path, project: Path) -> None:
    # GIVEN a version that keeps its guides out of projects, and a user who edited one of them
    commit(project, {"docs/guide.md": b"my notes in the guide\n", "kept.txt": b"the template's\nmine\n"})
    release(template, "v1.1.0", {"kept.txt": b"first\nthe template's\n"}, excluded=("/docs",))
    # WHEN the project is updated
    updated = update(project)
    said = [line for line in (updated.stdout + updated.stderr).splitlines() if line.strip()]
    # THEN each thing is said once (a file may be named under two things said of it)
    assert updated.returncode == 0, updated.stdout + updated.stderr
    assert [line for line in said if said.count(line) > 1 and not line.startswith("  ")] == []
    assert said.count("upgrade: your changes to the template's files, kept until the upgrade ends:") == 1
    # AND what the guard kept of the user's is gone: only the new version's list of files stays, for make upgrade
    kept = Path(git(project, "rev-parse", "--absolute-git-dir").strip()) / "median-upgrade"
    assert sorted(path.name for path in kept.iterdir()) == ["after.json"]


# A copy's own task, as the template's lock task (uv lock, over the network): it does its work unless the copy is
# one made only to compare with, which MEDIAN_RENDER_ONLY says.
LOGGED_TASK = """_tasks:
  - command: >-
      if [ -n "${MEDIAN_RENDER_ONLY:-}" ]; then exit 0; fi; pwd >> '@LOG@'
    when: "{{ _copier_operation == 'copy' }}"
"""


def test_the_guards_renders_never_run_what_only_a_real_copy_does(template: Path, tmp_path: Path) -> None:
    # GIVEN a template whose copy runs a task of its own unless MEDIAN_RENDER_ONLY is set, and a project copied from it
    log = tmp_path / "task.log"
    task = LOGGED_TASK.replace("@LOG@", str(log))
    release(template, "v1.0.1", {"kept.txt": b"the template's, 1.0.1\n"}, tasks=task)
    project = copied(template, "v1.0.1", tmp_path / "project")
    release(template, "v1.1.0", {"kept.txt": b"the template's, improved\n"}, tasks=task)
    # WHEN the project is updated: the guard renders v1.0.1 and v1.1.0 beside it, as copies
    updated = update(project)
    # THEN the task ran once, in the project when it was copied, and in none of the guard's renders
    assert updated.returncode == 0, updated.stdout + updated.stderr
    assert [Path(line).resolve() for line in log.read_text().splitlines()] == [project.resolve()]


# A 2.x project: its handler/ holds the framework's own modules, which 3.x's never does.
FRAMEWORK_2X = {
    "handler/__init__.py": b'"""The framework."""\n',
    "handler/testing/__init__.py": b"class MedianTestClient: ...\n",
}
# The user's test of the 2.x era: it imports the testing kit as a module and uses it by its full name.
KIT_TEST = """\
\"\"\"The kit's tests. A tool of this project began, in 2.x:
from handler import tool
\"\"\"

import handler.testing


def test_the_client_is_there() -> None:
    assert handler.testing.MedianTestClient
"""


def test_a_2x_project_is_migrated_where_it_can_be_told_where_it_cannot_and_loses_nothing(
    template: Path, tmp_path: Path
) -> None:
    # GIVEN a 2.x project (handler/ holds the framework's modules), with the user's own files: a test using the kit by
    # its module's name, a tool saved in Latin-1 that says so, one saved in Latin-1 that does not (so no Python), and
    # the user's patch to the framework's testing kit
    release(template, "v2.0.0", FRAMEWORK_2X)
    project = copied(template, "v2.0.0", tmp_path / "project")
    declared = "# -*- coding: latin-1 -*-\nfrom handler import tool\nGREETING = 'héllo'\n"
    undeclared = "from handler import tool\nGREETING = 'héllo'\n".encode("latin-1")
    patched = b"class MedianTestClient: ...\n# my patch\n"
    commit(
        project,
        {
            "tests/tools/test_kit.py": KIT_TEST.encode(),
            "tools/declared.py": declared.encode("latin-1"),
            "tools/undeclared.py": undeclared,
            "handler/testing/__init__.py": patched,
        },
    )
    # AND a 3.0.0 whose handler/ is the function's entry point alone
    release(template, "v3.0.0", {"handler/testing/__init__.py": None, "handler/app.py": b"lambda_handler = None\n"})
    # WHEN the project is updated
    updated = update(project)
    said = updated.stdout + updated.stderr
    # THEN the upgrade stops at the user's patch, which the new version deletes: back as they left it, and named
    assert updated.returncode != 0
    assert "would have been lost" in said and "  handler/testing/__init__.py" in said
    assert (project / "handler" / "testing" / "__init__.py").read_bytes() == patched
    # AND the test imports median_lambda's kit and uses it by that name; its docstring is as it was
    expected = KIT_TEST.replace("import handler.testing", "import median_lambda.testing")
    expected = expected.replace("handler.testing.MedianTestClient", "median_lambda.testing.MedianTestClient")
    assert (project / "tests" / "tools" / "test_kit.py").read_text(encoding="utf-8") == expected
    assert "tests/tools/test_kit.py: 1 import of handler now of median_lambda" in said
    # AND the tool that declares Latin-1 is migrated in Latin-1; the one that does not is named, and left as it was
    migrated = declared.replace("from handler import", "from median_lambda import").encode("latin-1")
    assert (project / "tools" / "declared.py").read_bytes() == migrated
    assert (project / "tools" / "undeclared.py").read_bytes() == undeclared
    assert "tools/undeclared.py: not migrated, it could not be read as Python" in said
    assert "change its imports of handler to median_lambda by hand" in said
    assert "Traceback" not in said


def test_a_3x_project_copied_from_a_commit_no_release_names_keeps_its_own_handler_imports(tmp_path: Path) -> None:
    # GIVEN a 3.x template with no release tag, so Copier reads its versions as 0.0.0.postN
    template = tmp_path / "template"
    template.mkdir()
    git(template, "init", "--quiet")
    entry = {"handler/__init__.py": b"", "handler/app.py": b"lambda_handler = None\n"}
    release(
        template, None, {"{{ _copier_conf.answers_file }}.jinja": b"{{ _copier_answers|to_nice_yaml -}}\n", **entry}
    )
    project = copied(template, "HEAD", tmp_path / "project")
    # AND a test of the user's that imports the project's own entry point
    own = b"from handler.app import lambda_handler\n\n\ndef test_it() -> None:\n    assert lambda_handler is None\n"
    commit(project, {"tests/test_entry.py": own})
    release(template, None, {"handler/app.py": b"lambda_handler = None  # later\n"})
    # WHEN the project is updated to the template's next commit
    updated = update(project)
    # THEN it is updated, and the user's import is left as it was: the project was never 2.x
    assert updated.returncode == 0, updated.stdout + updated.stderr
    assert (project / "handler" / "app.py").read_bytes() == b"lambda_handler = None  # later\n"
    assert (project / "tests" / "test_entry.py").read_bytes() == own
    assert "median_lambda" not in updated.stdout


# A later version the guard cannot render after the merge: any step there that fails.
FAILING_RENDER = """_tasks:
  - command: >-
      if [ -n "${MEDIAN_RENDER_ONLY:-}" ]; then echo 'this version cannot be rendered here' >&2; exit 3; fi
    when: "{{ _copier_operation == 'copy' }}"
"""


def test_a_step_after_the_merge_that_fails_undoes_the_whole_upgrade_and_names_the_users_files(
    template: Path, project: Path
) -> None:
    # GIVEN the user's edit to a file the next version renames, and a next version whose step after the merge fails
    commit(project, {"moved.txt": b"a file the next version renames\nmy own line\n"})
    release(
        template,
        "v1.1.0",
        {"moved.txt": None, "renamed.txt": b"renamed\n", "kept.txt": b"the template's, improved\n"},
        tasks=FAILING_RENDER,
    )
    # WHEN the project is updated
    updated = update(project)
    said = updated.stdout + updated.stderr
    # THEN the upgrade stops, saying what failed and that it is undone
    assert updated.returncode != 0
    assert "upgrade: stopped after the merge, which is undone" in said
    assert "this version cannot be rendered here" in said
    assert ".copier-answers.yml still names v1.0.0" in said
    # AND the user's file is back as they left it, and named
    assert (project / "moved.txt").read_bytes() == b"a file the next version renames\nmy own line\n"
    assert "are back as you left them:\n  moved.txt" in said
    # AND nothing of the half-done upgrade is left: the project is its last commit, on v1.0.0, and nothing is kept
    assert git(project, "status", "--porcelain", "--untracked-files=all") == ""
    assert "_commit: v1.0.0" in (project / ".copier-answers.yml").read_text()
    assert not (Path(git(project, "rev-parse", "--absolute-git-dir").strip()) / "median-upgrade").exists()


def test_an_upgrade_undone_in_a_folder_of_a_larger_repository_leaves_the_rest_of_it_alone(
    template: Path, tmp_path: Path
) -> None:
    # GIVEN a project in a folder of a larger repository, beside another folder with work not yet committed (Copier
    # holds only the project's own folder to be clean)
    repository = tmp_path / "monorepo"
    repository.mkdir()
    git(repository, "init", "--quiet")
    (repository / "service").mkdir()
    (repository / "service" / "notes.txt").write_text("committed\n")
    done = copier(
        "copy", "--trust", "--defaults", "--quiet", "--vcs-ref", "v1.0.0", str(template), "endpoint", cwd=repository
    )
    assert done.returncode == 0, done.stderr
    git(repository, "add", "-A")
    git(repository, "commit", "--quiet", "-m", "the repository, with the endpoint copied")
    (repository / "service" / "notes.txt").write_text("committed\nand my work in progress\n")
    (repository / "service" / "draft.txt").write_text("not added yet\n")
    # AND a next version whose step after the merge fails
    release(template, "v1.1.0", {"kept.txt": b"the template's, improved\n"}, tasks=FAILING_RENDER)
    # WHEN the project is updated, and its upgrade undone
    updated = update(repository / "endpoint")
    assert updated.returncode != 0
    assert "upgrade: stopped after the merge, which is undone" in updated.stdout + updated.stderr
    # THEN the project is its last commit again, and the other folder's work is as it was
    assert (repository / "endpoint" / "kept.txt").read_bytes() == b"the template's\n"
    assert git(repository, "status", "--porcelain", "--", "endpoint") == ""
    assert (repository / "service" / "notes.txt").read_text() == "committed\nand my work in progress\n"
    assert (repository / "service" / "draft.txt").read_text() == "not added yet\n"
