"""docs/your-own-systems.md runs as written: its settings, tool and tests, copied into a fresh project.

Each snippet whose first line is a `# <path>` comment (tools/..., tests/...) is a file a user
copies: here it is copied as it stands into a project with no other tools, where its tests
must pass and `make check` and ruff must accept it.
"""

from __future__ import annotations

import re
import sys
import textwrap

import pytest

from tests.project_copy import REPO, ProjectCopy, copy_project

GUIDE = REPO / "docs" / "your-own-systems.md"
_FENCE = re.compile(r"^```(?P<language>\w*)\n(?P<body>.*?)^```$", re.MULTILINE | re.DOTALL)
_PATH_COMMENT = re.compile(r"# (?P<path>(?:tools|tests)/[\w/.]+\.(?:py|toml))\n")


def files_to_copy() -> dict[str, str]:
    files = {}
    for match in _FENCE.finditer(GUIDE.read_text(encoding="utf-8")):
        body = textwrap.dedent(match["body"])
        named = _PATH_COMMENT.match(body)
        if named:
            files[named["path"]] = body
    return files


@pytest.fixture(scope="module")
def guide_project(tmp_path_factory: pytest.TempPathFactory) -> ProjectCopy:
    project = copy_project(tmp_path_factory.mktemp("guide") / "project")
    for path, source in files_to_copy().items():
        (project.root / path).parent.mkdir(parents=True, exist_ok=True)
        (project.root / path).write_text(source, encoding="utf-8")
    return project


def test_the_guide_gives_settings_a_tool_and_its_tests() -> None:
    # GIVEN the guide
    # WHEN its copyable snippets are read
    # THEN they are the settings file, a tool module and its tests
    assert sorted(files_to_copy()) == ["tests/tools/test_parcels.py", "tools/parcels.py", "tools/settings.toml"]


def test_the_guides_tests_pass_as_written(guide_project: ProjectCopy) -> None:
    # WHEN the guide's tests run in the project, as `make test` would run them
    finished = guide_project.pytest("tests/tools/test_parcels.py")
    # THEN they pass: moto's AWS, the settings and the secret behave as the guide says
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "3 passed" in finished.stdout


def test_make_check_and_ruff_accept_the_guides_tool(guide_project: ProjectCopy) -> None:
    # WHEN `make check` and `make lint`'s ruff run on the project
    checked = guide_project.run("-m", "handler", "check")
    linted = guide_project._run([sys.executable, "-m", "ruff", "check", "tools", "tests/tools"], None)
    # THEN both accept it: every stage has its values, and the Secret(...) default is no B008
    assert checked.returncode == 0, checked.stderr
    assert "2/20 tools" in checked.stdout
    assert linted.returncode == 0, linted.stdout


def test_a_value_missing_from_a_stage_is_the_line_the_guide_shows(tmp_path_factory: pytest.TempPathFactory) -> None:
    # GIVEN the guide's project with PARCELS_TABLE taken out of settings.toml
    project = copy_project(tmp_path_factory.mktemp("guide-missing") / "project")
    for path, source in files_to_copy().items():
        project.write(path, source.replace('PARCELS_TABLE = "parcels"\n', ""))
    # WHEN Median GETs the manifest, as under make serve
    script = (
        "from handler.testing import MedianTestClient; print(MedianTestClient().manifest().body['error']['message'])"
    )
    finished = project.run("-c", script)
    # THEN the answer carries the very line the guide prints
    assert finished.returncode == 0, finished.stderr
    guide = GUIDE.read_text(encoding="utf-8")
    shown = re.search(
        r"^(tools/parcels\.py:\d+: ParcelSettings cannot be read: .*?)\n```", guide, re.MULTILINE | re.DOTALL
    )
    assert shown is not None
    assert " ".join(shown[1].split()) in finished.stdout
