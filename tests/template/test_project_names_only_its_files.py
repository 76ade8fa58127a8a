"""A project's files speak only of that project: none names a file the project does not have.

A project made with `copier copy` holds its own configuration, tools and tests; the framework is
median-lambda, in its venv, and the guides are the template repository's, which its README links
to by URL. So no comment, page, workflow or Makefile of a project may send its reader to a file it
lacks: the template repository's docs/, maintainers/ or median-lambda/, or what an older version
kept in a project (scripts/, tooling/, devserver/, tests/contract/, handler/'s modules).

Every path a project's text files name is checked, with the folders and files of both trees as
its first part (`docs/deploy.md`, `scripts/lock.py`, `tests/unit/...`, `CHANGELOG.md`); a path
the project or its user makes later (an event, the local settings, a scaffolded tool) is said
here, with why. Copied with the examples and without, and with other stages.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
COPIER = REPO / ".venv" / "copier" / "bin" / "copier"
# The first part of a path worth checking: what the template repository holds at its root, and
# what a project held there in an earlier version.
TOP = {path.name for path in REPO.iterdir() if not path.name.startswith(".") or path.name == ".github"} | {
    "scripts",
    "tooling",
    "devserver",
    ".ci",
}
TOP -= {".venv", ".aws-sam", "dist"}
# What a project makes or its user writes later, which its files may name before it exists.
MADE_LATER = (
    re.compile(r"^events/[\w.{}<>-]*\.json$"),  # make event writes each, and env.json (never committed)
    re.compile(r"^tools/settings\.local\.toml$"),  # the user's own values, from settings.local.example.toml
    re.compile(r"^tools/(NAME|<name>|loyalty|loyalty_points)\.py$"),  # what make new-tool or the README writes
    re.compile(r"^tests/tools/test_(NAME|<name>|loyalty|loyalty_points)\.py$"),
    re.compile(r"^tests/tools/?$"),  # deleted with the examples, made again by make new-tool
    re.compile(r"^uv\.lock$"),  # written by copier copy's task (skipped here, as it needs the network)
    re.compile(r"^\.aws-sam/"),  # sam build's output
)
_PATH = re.compile(r"(?<![\w/.:@$-])(?P<path>(?:[\w.-]+/)+[\w.*<>{}-]*|[\w-]+\.(?:md|mk|toml|lock|ya?ml|json|py))")
_URL = re.compile(r"[a-z][a-z+.-]*://\S*")


def named_paths(text: str) -> list[str]:
    """The paths a text names whose first part is one of TOP (URLs aside)."""
    found = []
    for match in _PATH.finditer(_URL.sub(" ", text)):
        path = match["path"].rstrip(".,:;")
        if path.split("/")[0] in TOP:
            found.append(path)
    return found


def missing_names(project: Path) -> list[str]:
    problems = []
    for file in sorted(project.rglob("*")):
        relative = file.relative_to(project)
        if not file.is_file() or relative.parts[0] in (".git", ".venv") or file.name == "uv.lock":
            continue
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            for path in named_paths(line):
                bare = path.rstrip("/")
                if "*" in bare or any(pattern.match(path) for pattern in MADE_LATER):
                    continue
                if not ((project / bare).exists() or (file.parent / bare).exists()):
                    problems.append(f"{relative}:{number}: {path}")
    return problems


def copied(destination: Path, *answers: str) -> Path:
    data = [item for answer in answers for item in ("--data", answer)]
    finished = subprocess.run(  # noqa: S603 - the pinned copier, with arguments of our own
        [
            str(COPIER),
            "copy",
            "--trust",
            "--defaults",
            "--quiet",
            "--vcs-ref",
            "HEAD",
            *data,
            str(REPO),
            str(destination),
        ],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "MEDIAN_RENDER_ONLY": "1"},
    )
    assert finished.returncode == 0, finished.stderr
    return destination


def test_the_check_finds_a_file_a_project_lacks(tmp_path: Path) -> None:
    # GIVEN a project's comment naming the template's guide and an old version's script, and one naming its own file
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "settings.toml").write_text(
        "# See docs/deploy.md, then scripts/lock.py; tools/settings.toml\n"
    )
    # THEN the two it lacks are named, at their line, and its own is not
    assert missing_names(tmp_path) == [
        "tools/settings.toml:1: docs/deploy.md",
        "tools/settings.toml:1: scripts/lock.py",
    ]


@pytest.mark.parametrize(
    "answers",
    [(), ("keep_examples=false", "stages=[dev, prod]", "architecture=x86_64")],
    ids=["with the examples", "without them, other stages"],
)
def test_no_file_of_a_project_names_a_file_it_does_not_have(tmp_path: Path, answers: tuple[str, ...]) -> None:
    # GIVEN a project as copier copy writes it
    project = copied(tmp_path / "project", *answers)
    # WHEN every path its files name is looked for in it
    # THEN each is there, or is one the project or its user makes later
    assert missing_names(project) == []


def test_no_file_of_a_project_names_the_templates_default_stack_for_its_own(tmp_path: Path) -> None:
    # GIVEN a project copied with a stack name of its own, and stages of its own
    project = copied(tmp_path / "project", "stack_name=acme-returns", "stages=[dev, prod]")
    # WHEN its files are read for the template's default stack name
    named = [
        f"{path.relative_to(project)}:{number}: {line.strip()}"
        for path in sorted(project.rglob("*"))
        if path.is_file() and path.relative_to(project).parts[0] != ".git"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if "median-tools" in line
    ]
    # THEN none names it: its secrets, parameters, stacks and commands are the project's own, acme-returns's
    assert named == []
    assert '# "acme-returns/carrier-token" = ' in (project / "tools" / "settings.local.example.toml").read_text(
        encoding="utf-8"
    )
    assert "--stack-name\nacme-returns-dev`" in (project / "pipeline" / "README.md").read_text(encoding="utf-8")
