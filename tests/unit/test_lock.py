"""uv.lock: it matches pyproject.toml, or `make lint` and `make test` fail naming the command that fixes it."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from median_lambda.project.lock import (
    LOCK,
    ROOT,
    TOOLING,
    library_disagreement,
    stale_lock_problem,
    stale_tooling_problems,
    tool_requirements,
    uv_executable,
    uv_requirement,
)

STALE = "uv.lock does not match pyproject.toml: run `make lock` and commit uv.lock"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """pyproject.toml and uv.lock as committed, in a folder of the test's own, beside the library they name."""
    for name in ("pyproject.toml", "uv.lock"):
        shutil.copy2(ROOT / name, tmp_path / name)
    (tmp_path / "median-lambda").symlink_to(ROOT / "median-lambda", target_is_directory=True)
    return tmp_path


def edit_pyproject(project: Path, old: str, new: str) -> None:
    path = project / "pyproject.toml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_the_committed_lock_matches_pyproject() -> None:
    # GIVEN this checkout's pyproject.toml and uv.lock
    # WHEN the lock is checked against it, offline
    # THEN it matches; if not, the failure says `make lock`
    assert stale_lock_problem() is None


@pytest.mark.parametrize(
    ("change", "old", "new"),
    [
        (
            "a tool's new runtime dependency",
            '    "httpx>=0.28,<1",\n',
            '    "httpx>=0.28,<1",\n    "python-dateutil>=2.9",\n',
        ),
        ("a raised lower bound", '"httpx>=0.28,<1"', '"httpx>=99,<100"'),
        ("a dependency removed", '    "ruff>=0.9",\n', ""),
        ("a new group", "\n[dependency-groups]\n", '\n[dependency-groups]\ndocs = ["pyyaml>=6"]\n'),
    ],
)
def test_a_change_to_pyproject_without_make_lock_names_make_lock(
    project: Path, change: str, old: str, new: str
) -> None:
    # GIVEN pyproject.toml changed and uv.lock left as it was
    edit_pyproject(project, old, new)
    # WHEN the lock is checked
    # THEN the answer is the one line that says what to run
    assert stale_lock_problem(project) == STALE


def test_make_lint_stops_on_a_stale_lock_naming_make_lock(project: Path) -> None:
    # GIVEN a new dependency in pyproject.toml, and uv.lock left as it was
    edit_pyproject(project, '    "httpx>=0.28,<1",\n', '    "httpx>=0.28,<1",\n    "python-dateutil>=2.9",\n')
    # WHEN `make lint`'s first step, `median lock --check`, runs in the project
    checked = subprocess.run(  # noqa: S603 - the venv's median, with arguments of our own
        [str(Path(sys.executable).with_name("median")), "lock", "--check"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    # THEN it fails, with the one line that says what to run
    assert checked.returncode == 1
    assert checked.stderr.strip() == f"error: {STALE}"


def test_a_missing_lock_names_make_lock(project: Path) -> None:
    # GIVEN a checkout whose uv.lock was deleted
    (project / "uv.lock").unlink()
    # WHEN it is checked
    # THEN the answer says how to make one
    assert stale_lock_problem(project) == STALE


def test_pip_installs_the_locked_uv_with_every_hash_the_lock_records() -> None:
    # GIVEN the lock's entry for uv, the tool that installs everything else
    entry = next(package for package in tomllib.loads(LOCK.read_text())["package"] if package["name"] == "uv")
    # WHEN the Makefile asks for uv's requirement
    requirement = uv_requirement()
    # THEN it pins the locked version with the hash of every file the lock knows for it (pip refuses any other)
    files = [entry["sdist"], *entry["wheels"]] if "sdist" in entry else entry["wheels"]
    assert requirement.startswith(f"uv=={entry['version']} --hash=sha256:")
    assert set(re.findall(r"--hash=(\S+)", requirement)) == {file["hash"] for file in files}
    # AND the uv this venv runs is that one
    version = subprocess.run([uv_executable(), "--version"], capture_output=True, text=True, check=True).stdout  # noqa: S603
    assert version.split()[1] == entry["version"]


@pytest.fixture
def tooling(tmp_path: Path) -> Path:
    """tooling/ as committed, in a folder of the test's own."""
    shutil.copytree(TOOLING, tmp_path / "tooling")
    return tmp_path / "tooling"


def test_every_developer_tool_has_a_lock_that_matches_what_it_declares() -> None:
    # GIVEN this checkout's tooling/NAME.py declarations
    scripts = sorted(path.name for path in TOOLING.glob("*.py"))
    # WHEN their locks are checked, offline
    # THEN each has one, current, and it pins every package with its hashes
    assert stale_tooling_problems() == []
    assert {"sam-cli.py", "checkov.py", "workflow-lint.py"} <= set(scripts)
    for name in scripts:
        requirements = tool_requirements(name.removesuffix(".py"))
        pins = [line for line in requirements.splitlines() if line and not line.startswith((" ", "#"))]
        assert pins and all("==" in line for line in pins), name
        assert requirements.count("--hash=sha256:") >= len(pins), name


def test_a_tool_declared_at_another_version_names_make_lock(tooling: Path) -> None:
    # GIVEN the SAM CLI asked for at a version its lock does not pin
    script = tooling / "sam-cli.py"
    script.write_text(script.read_text(encoding="utf-8").replace('"aws-sam-cli>=1.130"', '"aws-sam-cli>=99"'))
    # WHEN the tooling is checked
    # THEN the one line names the lock, its declaration and the command that fixes it
    assert stale_tooling_problems(tooling) == [
        "tooling/sam-cli.py.lock does not match tooling/sam-cli.py: run `make lock` and commit tooling/"
    ]


def test_a_new_tool_without_its_lock_names_make_lock(tooling: Path) -> None:
    # GIVEN a tool declared in tooling/ without `make lock`
    (tooling / "vale.py").write_text('# /// script\n# dependencies = ["vale>=3"]\n# ///\n')
    # WHEN the tooling is checked
    # THEN it is named
    assert stale_tooling_problems(tooling) == ["tooling/vale.py.lock is missing: run `make lock` and commit tooling/"]


def test_the_project_lock_holds_none_of_the_developer_tools() -> None:
    # GIVEN uv.lock, the project's own
    locked = {package["name"] for package in tomllib.loads(LOCK.read_text())["package"]}
    # THEN no tool that has a venv of its own is in it: their pins never bend the project's
    assert locked.isdisjoint({"aws-sam-cli", "checkov", "zizmor", "check-jsonschema", "mutmut"})


TEMPLATE_URL = "https://github.com/acme/median-template"
COMMIT = "4f6a97e6280bdaa8be97df0679a92d288e39e3b8"
OTHER_COMMIT = "9c8770522bf72022e4fd1933b2131a8ab1c058dc"


def _project_on(root: Path, recorded: str, version: str, source: str) -> Path:
    """A project whose .copier-answers.yml records the template version `recorded`, and whose uv.lock pins
    median-lambda `version` from `source` (as uv writes it: `{ git = "..." }`, `{ registry = "..." }`, ...)."""
    (root / ".copier-answers.yml").write_text(f"_commit: {recorded}\n_src_path: gh:acme/median-template\n")
    (root / "uv.lock").write_text(
        f'version = 1\n\n[[package]]\nname = "median-lambda"\nversion = "{version}"\nsource = {source}\n'
    )
    return root


@pytest.mark.parametrize(
    ("recorded", "version", "source"),
    [
        ("v3.1.0", "3.1.0", f'{{ git = "{TEMPLATE_URL}?subdirectory=median-lambda&tag=v3.1.0#{COMMIT}" }}'),
        (
            "v3.1.0-4-g4f6a97e",
            "3.1.0",
            f'{{ git = "{TEMPLATE_URL}?subdirectory=median-lambda&rev={COMMIT}#{COMMIT}" }}',
        ),
        ("4f6a97e", "3.0.0", f'{{ git = "{TEMPLATE_URL}?subdirectory=median-lambda&rev={COMMIT}#{COMMIT}" }}'),
        ("v3.1.0", "3.1.0", '{ registry = "https://pypi.org/simple" }'),
    ],
    ids=["a release, by git tag", "a commit after one, by rev", "a commit of a template with no tags", "from an index"],
)
def test_a_lock_of_the_template_version_recorded_agrees(
    tmp_path: Path, recorded: str, version: str, source: str
) -> None:
    # GIVEN a project whose lock pins the library of the template version it records, however it was copied
    project = _project_on(tmp_path, recorded, version, source)
    # THEN the check finds nothing to say
    assert library_disagreement(project) is None


@pytest.mark.parametrize(
    ("recorded", "version", "source", "locked"),
    [
        (
            "v3.1.0",
            "3.0.0",
            f'{{ git = "{TEMPLATE_URL}?subdirectory=median-lambda&tag=v3.0.0#{OTHER_COMMIT}" }}',
            "3.0.0 (git tag v3.0.0, commit 9c8770522bf7)",
        ),
        (
            "v3.1.0-4-g4f6a97e",
            "3.1.0",
            f'{{ git = "{TEMPLATE_URL}?subdirectory=median-lambda&rev={OTHER_COMMIT}#{OTHER_COMMIT}" }}',
            f"3.1.0 (git rev {OTHER_COMMIT}, commit 9c8770522bf7)",
        ),
        ("v3.1.0", "3.0.0", '{ registry = "https://pypi.org/simple" }', "3.0.0 (registry https://pypi.org/simple)"),
        ("v3.1.0", "3.1.0", '{ editable = "../median-lambda" }', "3.1.0 (editable ../median-lambda)"),
    ],
    ids=[
        "a conflict resolved, make lock kept the old tag",
        "a commit other than the one copied",
        "an index's older release",
        "a local checkout of the library, installed by hand",
    ],
)
def test_a_lock_of_another_library_is_named_with_the_template_version_and_the_fix(
    tmp_path: Path, recorded: str, version: str, source: str, locked: str
) -> None:
    # GIVEN a project whose lock pins a library other than that of the template version it records
    project = _project_on(tmp_path, recorded, version, source)
    # WHEN the lock is checked, as make lint checks it
    problem = library_disagreement(project)
    # THEN both are named, and what brings them together
    assert problem is not None
    assert problem.startswith(
        f"uv.lock pins median-lambda {locked}, but this project's template files are {recorded} "
        "(.copier-answers.yml's _commit): the two are released together and must agree. Run `make lock`: it locks "
        f"{recorded}'s median-lambda"
    )
    assert problem.endswith("To move both to a later version: `make upgrade`.")


def test_the_template_repository_itself_has_no_template_version_to_agree_with() -> None:
    # GIVEN this checkout, which is the template and runs median-lambda from its own folder (a workspace member)
    # THEN there is nothing to hold its lock to
    assert not (ROOT / ".copier-answers.yml").exists()
    assert library_disagreement(ROOT) is None


def test_a_tag_of_a_fork_s_own_naming_is_not_judged_offline(tmp_path: Path) -> None:
    # GIVEN a project copied from a fork's tag that is no release's name (pyproject.toml then pins its commit by rev)
    source = f'{{ git = "{TEMPLATE_URL}?subdirectory=median-lambda&rev={OTHER_COMMIT}#{OTHER_COMMIT}" }}'
    project = _project_on(tmp_path, "acme-2026.1", "3.1.0", source)
    # THEN nothing says which commit that tag is without the fork at hand: the check says nothing untrue
    assert library_disagreement(project) is None
