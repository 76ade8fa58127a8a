"""A project `copier copy` writes from this template: its `make test` passes on the contract suite and the
user's tests alone, with the examples and without them.

The project is copied from this working tree (`--vcs-ref HEAD`, uncommitted changes included) with
the default answers, by the pinned Copier `make upgrade` runs, into a temporary folder where its
make makes its own venv (from uv's cache), from a shell that sets nothing of the framework's
tests. Then the examples are deleted with the README's own "Make it yours" commands, and
`make test` runs again: with no tool at all, the contract suite still passes, and says what it
checked. `make template-proof` goes further (other answers, an upgrade, lint and the build).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import TYPE_CHECKING

import pytest

from maintainers.template_proof import template_clone
from tests.project_copy import REPO, fenced_snippets

if TYPE_CHECKING:
    from pathlib import Path

COPIER = REPO / ".venv" / "copier" / "bin" / "copier"
# A shell's own variables: nothing the framework's tests set (fake AWS credentials, a tools package,
# a dev key file, make's flags) reaches the project's make.
# The network's settings (a proxy, a company's CA, a package index) reach it as they reach a user's.
_SHELL = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER")
_NETWORK = ("SSL_CERT_FILE", "SSL_CERT_DIR", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "UV_", "PIP_")
_TIMEOUT_SECONDS = 600


def generated_project(root: Path) -> Path:
    """A project as `copier copy` writes it from this working tree, with the default answers."""
    project = root / "project"
    # From a clone with the working tree's changes committed: the project's uv.lock fetches median-lambda
    # from the commit copied, which a dirty checkout's (Copier's own temporary one) is not.
    template = template_clone(root)
    command = [str(COPIER), "copy", "--trust", "--defaults", "--quiet", "--vcs-ref", "HEAD"]
    command += [str(template), str(project)]
    # A user copies with `uvx copier copy`, so uv is on PATH for the task that writes uv.lock: the dev venv's here.
    environment = {name: value for name, value in os.environ.items() if not name.startswith(("MAKE", "VIRTUAL_ENV"))}
    environment["PATH"] = f"{REPO / '.venv' / 'bin'}{os.pathsep}{environment.get('PATH', '')}"
    copied = subprocess.run(command, env=environment, capture_output=True, text=True, check=False)  # noqa: S603
    assert copied.returncode == 0, copied.stderr
    return project


def _run(project: Path, command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - make and bash, with the project's own targets and the README's lines
        command,
        cwd=project,
        env={name: value for name, value in os.environ.items() if name in _SHELL or name.upper().startswith(_NETWORK)},
        capture_output=True,
        text=True,
        timeout=_TIMEOUT_SECONDS,
        check=False,
    )


def _make_it_yours(project: Path) -> str:
    """The project's README's "Make it yours" commands, as a user pastes them."""
    readme = (project / "README.md").read_text(encoding="utf-8")
    start = readme.index("\n## Make it yours\n")
    section = readme[start : readme.index("\n## ", start + 1)]
    [commands] = [body for language, body in fenced_snippets(section) if language == "bash"]
    return commands


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project, with the venv its make installs."""
    project = generated_project(tmp_path_factory.mktemp("generated"))
    installed = _run(project, ["make", "--no-print-directory", "install"])
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return project


def test_a_generated_project_holds_only_the_contract_suite_and_the_users_tests(project: Path) -> None:
    # GIVEN a project as generated from this template
    # WHEN its tests/ is listed
    tests = sorted(path.relative_to(project).as_posix() for path in (project / "tests").iterdir())
    # THEN it holds the one file that runs median-lambda's contract suite, and the user's own tests
    assert tests == ["tests/__init__.py", "tests/test_median_contract.py", "tests/tools"]


def test_a_generated_project_holds_little_python_but_its_owners(project: Path) -> None:
    # GIVEN a project as generated from this template, its venv made
    # WHEN its Python outside tools/ and tests/tools/ (what its owner writes) is counted
    framework = {
        path.relative_to(project).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in project.rglob("*.py")
        if path.relative_to(project).parts[0] not in (".venv", "tools") and "tests/tools" not in path.as_posix()
    }
    # THEN it is the function's entry point and the contract suite's one file, a few lines: the framework is
    # median-lambda, in the venv, and none of its code is the project's to merge on an upgrade
    assert set(framework) == {
        "handler/__init__.py",
        "handler/app.py",
        "tests/__init__.py",
        "tests/test_median_contract.py",
    }
    assert sum(framework.values()) < 50, framework


def test_pytests_own_script_finds_the_plugin_the_tools_and_the_contract_suite(project: Path) -> None:
    # GIVEN the project, run as `uv run pytest` runs it: pytest's script, whose import path lacks the project
    # WHEN it collects the contract suite
    collect = [".venv/bin/pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests/test_median_contract.py"]
    finished = _run(project, collect)
    # THEN median_lambda.testing's plugin, the tools and the suite's own modules all import
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "tests/test_median_contract.py::test_input_with_a_field_your_tool_does_not_have" in finished.stdout


# A user's own tests of their AWS code, as moto's documentation writes them: a client made as the conftest is
# imported, and moto's decorator on each test.
USERS_CONFTEST = """
import boto3
from moto import mock_aws  # noqa: F401 - before any client, as moto's documentation says

RECEIPTS = boto3.client("s3", region_name="us-east-1")
"""
USERS_MOTO_TESTS = """
import boto3
from moto import mock_aws

from tests.users.conftest import RECEIPTS


@mock_aws
def test_a_receipt_is_stored():
    RECEIPTS.create_bucket(Bucket="receipts")
    RECEIPTS.put_object(Bucket="receipts", Key="r1", Body=b"12.50")
    assert RECEIPTS.get_object(Bucket="receipts", Key="r1")["Body"].read() == b"12.50"


@mock_aws
def test_a_table_is_made():
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    dynamodb.create_table(
        TableName="orders",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    assert dynamodb.list_tables()["TableNames"] == ["orders"]
"""


def test_a_users_tests_written_with_motos_own_decorator_pass(project: Path) -> None:
    # GIVEN a user's tests with moto's @mock_aws and a client their conftest makes as it is imported
    users = project / "tests" / "users"
    users.mkdir()
    try:
        (users / "__init__.py").write_text("", encoding="utf-8")
        (users / "conftest.py").write_text(USERS_CONFTEST, encoding="utf-8")
        (users / "test_receipts.py").write_text(USERS_MOTO_TESTS, encoding="utf-8")
        # WHEN pytest runs them in the project
        finished = _run(project, [".venv/bin/python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/users"])
    finally:
        shutil.rmtree(users)
    # THEN they pass: median-lambda's plugin stands aside for moto
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "2 passed" in finished.stdout


def test_make_test_passes_on_the_examples_and_says_what_the_contract_checked(project: Path) -> None:
    # WHEN `make test` runs in the project, with the examples
    finished = _run(project, ["make", "--no-print-directory", "test"])
    output = finished.stdout + finished.stderr
    # THEN the contract suite and the examples' tests ran and passed, and the contract names the tools it checked
    assert finished.returncode == 0, output[-6000:]
    assert "tests/test_median_contract.py" in output
    assert "tests/tools/test_orders.py" in output
    assert re.search(r"^on your \d+ tool\(s\): orderStatus, ", output, re.MULTILINE), output[-3000:]


def test_make_test_passes_with_no_tool_at_all_once_the_examples_are_deleted(project: Path) -> None:
    # GIVEN the same project, its examples deleted as the README's "Make it yours" says
    deleted = _run(project, ["bash", "-euc", _make_it_yours(project)])
    assert deleted.returncode == 0, deleted.stdout + deleted.stderr
    assert sorted(path.name for path in (project / "tests" / "tools").glob("*.py")) == [
        "__init__.py",
        "local_aws_seed.py",
    ]
    # WHEN `make test` runs
    finished = _run(project, ["make", "--no-print-directory", "test"])
    output = finished.stdout + finished.stderr
    # THEN the contract suite passes on no tool, saying so, and what it checked
    assert finished.returncode == 0, output[-6000:]
    assert "on no tool of yours: tools/ has none yet" in output
    for checked in ("the signature", "GET: your manifest", "POST's refusals", "a retried callId", "the build"):
        assert checked in output, output[-3000:]
    assert "tools/ serves no tool yet" in output  # the per-tool tests, skipped with their reason


# A Markdown link to a file of the project: [text](path) or [text](path#anchor), not a URL (the guides'
# are https:// for a project copied from GitHub, file:// for one copied from a local checkout, as here).
_LINK = re.compile(r"\]\((?![a-z][a-z+.-]*:|#)(?P<target>[^)#\s]+)(?:#[^)]*)?\)")


def test_every_link_in_the_projects_pages_reaches_a_file_it_has(project: Path) -> None:
    # GIVEN every Markdown page a project gets
    pages = [path for path in project.rglob("*.md") if ".venv" not in path.parts]
    # WHEN each relative link is followed from its page
    broken = [
        f"{page.relative_to(project)}: {found['target']}"
        for page in pages
        for found in _LINK.finditer(page.read_text(encoding="utf-8"))
        if not (page.parent / found["target"]).exists()
    ]
    # THEN each reaches a file the project has: none points at what stays in the template repository
    assert pages and broken == []
