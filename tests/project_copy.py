"""This project copied to a temporary folder, with a `tools` package of the test's own.

For commands that write into the project (`new-tool`) or import `tools/` (`check`, the
README's snippets, a user's own tests): they run in a fresh interpreter inside the copy, so
neither this repository's files nor the test process's registry are touched, and nothing
depends on which tools the repository's `tools/` holds.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from median_lambda.authoring.settings import OVERRIDE_PREFIX
from median_lambda.protocol import KEY_SECRET_ENV, STAGE_ENV, TOOLS_PACKAGE_ENV

REPO = Path(__file__).resolve().parent.parent
# The framework's own suites stay behind; a copy's tests/ is what a user's project starts from:
# the shared conftest and helpers, and a tests/tools/ of its own once something writes one.
_SUITES = ("unit", "integration", "browser", "template", "tools")
_CACHES = ("__pycache__", ".pytest_cache", ".hypothesis")
# What a user's shell does not set: the framework's tests set a key's secret, or name another
# tools package to serve, which would hide the copy's tools/; and make's own variables, through
# which a VENV= given to the outer make would reach the copy's make, whose venv is the `.venv`
# link to the running interpreter's.
_NOT_IN_A_USERS_SHELL = (
    "PYTHONPATH",
    KEY_SECRET_ENV,
    "MEDIAN_KEY",
    TOOLS_PACKAGE_ENV,
    "MAKEFLAGS",
    "MFLAGS",
    "MAKELEVEL",
    # The stage and overrides (MEDIAN_SETTING_*) of the user whose shell runs `make test`: theirs,
    # for their own tools, never a copy's.
    STAGE_ENV,
    # Where a framework's test pointed boto3 (moto's server, a closed port): never a user's shell's.
    "AWS_ENDPOINT_URL",
)
_TIMEOUT_SECONDS = 120
# A fenced code block of a Markdown page, indented or not (a README's list items indent theirs).
_FENCE = re.compile(r"^(?P<indent> *)```(?P<language>\w*)\n(?P<body>.*?)^(?P=indent)```$", re.MULTILINE | re.DOTALL)
# A snippet whose first line names where a user puts it: a file for tools/ or tests/.
_PATH_COMMENT = re.compile(r"# (?P<path>(?:tools|tests)/[\w/.]+\.(?:py|toml))\n")


@dataclass(frozen=True)
class ProjectCopy:
    root: Path

    def write(self, relative: str, source: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
        return path

    def write_files(self, files: dict[str, str]) -> None:
        """Each file as it stands (no dedent): what a user copies from the docs."""
        for relative, source in files.items():
            path = self.root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(source, encoding="utf-8")

    def read(self, relative: str) -> str:
        return (self.root / relative).read_text(encoding="utf-8")

    def run(self, *arguments: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """`python <arguments>` in the copy, with the environment a user's shell has (and `env`)."""
        return self._run([sys.executable, *arguments], env)

    def median(self, *arguments: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """`.venv/bin/median <arguments>` in the copy: median-lambda's command line, as its Makefile runs it."""
        return self._run([str(self.root / ".venv" / "bin" / "median"), *arguments], env)

    def make(self, *arguments: str) -> subprocess.CompletedProcess[str]:
        """`make <arguments>` in the copy, whose .venv is the running interpreter's."""
        return self._run(["make", "--no-print-directory", *arguments], None)

    def _run(self, command: list[str], env: dict[str, str] | None) -> subprocess.CompletedProcess[str]:
        environment = {
            name: value
            for name, value in os.environ.items()
            if name not in _NOT_IN_A_USERS_SHELL and not name.startswith(OVERRIDE_PREFIX)
        }
        return subprocess.run(  # noqa: S603 - our own interpreter and make, our own arguments
            command,
            cwd=self.root,
            env={**environment, **(env or {})},
            capture_output=True,
            text=True,
            timeout=_TIMEOUT_SECONDS,
            check=False,
        )

    def pytest(self, *paths: str) -> subprocess.CompletedProcess[str]:
        return self.run("-m", "pytest", "-q", "-p", "no:cacheprovider", *paths)


def fenced_snippets(markdown: str) -> list[tuple[str, str]]:
    """(language, body) of each fenced code block of a Markdown text, its body dedented."""
    return [(match["language"], textwrap.dedent(match["body"])) for match in _FENCE.finditer(markdown)]


def snippet_files(markdown: str) -> dict[str, str]:
    """Each snippet that starts with a `# <path>` comment (tools/ or tests/), by that path."""
    files = {}
    for _, snippet in fenced_snippets(markdown):
        named = _PATH_COMMENT.match(snippet)
        if named:
            files[named["path"]] = snippet
    return files


# A YAML snippet whose first line names the file and the place a user pastes it: `# <file>, under <place>:`.
TEMPLATE_PLACE = re.compile(r"# (?P<file>template\.yaml|pipeline/oidc-role\.yaml), under (?P<place>.+):\n")
# Which `# >>> yours: <block>` lines each place is, in its file: a user pastes there, where `make upgrade` keeps it.
YOURS_BLOCKS = {
    "Parameters": "parameters",
    "Resources": "resources",
    "MedianToolsFunction's Environment Variables": "variables",
    "MedianToolsFunctionRole's Policies": "policies",
    "StackRolesPermissionsBoundary's Statement": "company",
    "StackTables' and FunctionKeepsCallRecords' Resource": "tables",
}


def paste_fragments(root: Path, markdown: str) -> list[str]:
    """Each of a page's `# <file>, under <place>:` snippets pasted where a user pastes it: before the closing line
    of that place's `yours` block (every one of that name in the file), at its indentation; the places pasted."""
    pasted = []
    for language, body in fenced_snippets(markdown):
        placed = TEMPLATE_PLACE.match(body)
        if not placed or language != "yaml":
            continue
        path = root / placed["file"]
        closing = re.compile(rf"^(?P<indent> *)# <<< yours: {YOURS_BLOCKS[placed['place']]}\b", re.MULTILINE)
        text = path.read_text(encoding="utf-8")
        assert closing.search(text), f"{placed['file']} has no block for {placed['place']}"
        fragment = textwrap.dedent(body.removeprefix(placed[0]))
        text = closing.sub(lambda line, fragment=fragment: textwrap.indent(fragment, line["indent"]) + line[0], text)
        path.write_text(text, encoding="utf-8")
        pasted.append(placed["place"])
    return pasted


def copy_project(root: Path) -> ProjectCopy:
    """handler/, pyproject.toml, uv.lock, the Makefile, template.yaml and tests/ (without the template
    repository's suites) under `root`, an empty `tools` package, and a .venv that is a link to the running
    interpreter's virtualenv, which has median-lambda; median-lambda/ a link to the library's folder, the
    workspace member pyproject.toml and uv.lock name, so uv reads the copy's lock as this one's. No
    samconfig.toml: its stages would ask the empty tools/ for a settings.toml naming them."""
    shutil.copytree(REPO / "handler", root / "handler", ignore=shutil.ignore_patterns(*_CACHES))
    shutil.copytree(REPO / "tests", root / "tests", ignore=_left_out_of_tests)
    for name in ("pyproject.toml", "uv.lock", "Makefile", "template.yaml"):
        shutil.copy2(REPO / name, root / name)
    (root / ".venv").symlink_to(sys.prefix, target_is_directory=True)
    (root / "median-lambda").symlink_to(REPO / "median-lambda", target_is_directory=True)
    (root / "tools").mkdir()
    (root / "tools" / "__init__.py").write_text('"""Your tools: one module each."""\n', encoding="utf-8")
    return ProjectCopy(root)


def _left_out_of_tests(folder: str, names: list[str]) -> set[str]:
    left_out = set(_CACHES) & set(names)
    if Path(folder) == REPO / "tests":
        left_out |= set(_SUITES) & set(names)
    return left_out
