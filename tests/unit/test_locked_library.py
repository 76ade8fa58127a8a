"""The median-lambda uv.lock pins, read and installed apart as the build ships it: a workspace's folder, or an index's
wheel whose hash the lock records (a copy of the same version with other bytes is refused).

The index is a small server on loopback speaking PyPI's simple API (PEP 503), standing in for PyPI or a
company's own: the project takes median-lambda from it by name, and the lock records its wheel's hash.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from median_lambda.build.sources import library_differences, running_library
from median_lambda.project.lock import LockError, install_locked_library, locked_library, locked_library_requirement

from tests.threaded_server import serving_in_a_thread

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[2]
UV = str(Path(sys.executable).with_name("uv"))


def test_the_template_repository_pins_its_own_folder() -> None:
    # GIVEN the template repository's lock, whose median-lambda is the workspace member beside it
    library = locked_library(ROOT / "uv.lock")
    # THEN it is that folder, and installed apart it is the library this venv runs, module for module
    assert (library.kind, library.origin) == ("editable", "the folder median-lambda")
    assert locked_library_requirement(ROOT) == f"{ROOT / 'median-lambda'}\n"


def test_a_lock_without_median_lambda_says_so(tmp_path: Path) -> None:
    (tmp_path / "uv.lock").write_text('version = 1\n\n[[package]]\nname = "httpx"\nversion = "0.28.1"\n')
    with pytest.raises(LockError, match=r"uv\.lock pins 0 versions of median-lambda, not one: run `make lock`"):
        locked_library(tmp_path / "uv.lock")


class _Index(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


def publish(folder: Path, wheel: Path) -> None:
    """`wheel` in `folder`, laid out as a simple index serves it: /simple/median-lambda/ links it with its sha256."""
    (folder / "files").mkdir(parents=True, exist_ok=True)
    (folder / "simple" / "median-lambda").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(wheel, folder / "files" / wheel.name)
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    page = f'<html><body><a href="../../files/{wheel.name}#sha256={digest}">{wheel.name}</a></body></html>'
    (folder / "simple" / "median-lambda" / "index.html").write_text(page, encoding="utf-8")


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Path]]:
    """A package index on loopback holding median-lambda's wheel, built from this checkout: its URL, its folder,
    and the wheel."""
    built = tmp_path_factory.mktemp("built")
    subprocess.run(  # noqa: S603 - uv, on the library's own folder
        [
            UV,
            "build",
            "--quiet",
            "--wheel",
            "--python",
            sys.executable,
            "--out-dir",
            str(built),
            str(ROOT / "median-lambda"),
        ],
        check=True,
        env={**os.environ, "UV_PYTHON_DOWNLOADS": "never"},
    )
    [wheel] = built.glob("*.whl")
    folder = tmp_path_factory.mktemp("index")
    publish(folder, wheel)
    handler = functools.partial(_Index, directory=str(folder))
    with serving_in_a_thread(http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple", folder, wheel


@pytest.fixture(scope="module")
def project(index: tuple[str, Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project whose uv.lock pins median-lambda from that index, with its wheel's hash."""
    project = tmp_path_factory.mktemp("project")
    (project / "pyproject.toml").write_text(
        '[project]\nname = "shop-tools"\nversion = "0.1.0"\nrequires-python = ">=3.13,<3.14"\n'
        'dependencies = ["median-lambda==3.0.0"]\n\n[tool.uv]\npackage = false\n\n'
        f'[[tool.uv.index]]\nname = "shop"\nurl = "{index[0]}"\nexplicit = true\n\n'
        '[tool.uv.sources]\nmedian-lambda = { index = "shop" }\n',
        encoding="utf-8",
    )
    subprocess.run(  # noqa: S603
        [UV, "lock", "--quiet", "--project", str(project)],
        check=True,
        env={**os.environ, "UV_PYTHON_DOWNLOADS": "never", "UV_PYTHON": sys.executable},
    )
    return project


def test_an_index_wheel_is_installed_with_the_hash_the_lock_records(project: Path, tmp_path: Path) -> None:
    # GIVEN a project whose lock pins median-lambda 3.0.0 from its index
    # WHEN the build installs it apart
    installed = install_locked_library(tmp_path / "library", project)
    # THEN it is the index's, its hash checked, and the same modules this checkout holds
    assert installed.kind == "registry"
    assert str(installed).startswith("median-lambda 3.0.0 from the index http://127.0.0.1:")
    assert "--hash=sha256:" in locked_library_requirement(project)
    assert library_differences(tmp_path / "library", running_library(), runtime=False) == []


def test_a_wheel_of_the_same_version_with_other_bytes_is_refused(
    project: Path, index: tuple[str, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the index now serving another wheel of 3.0.0, a module edited (a debugging copy, rebuilt and uploaded),
    # to a machine whose uv has not kept the first (a CI runner's)
    monkeypatch.setenv("UV_NO_CACHE", "1")
    _, folder, wheel = index
    edited = tmp_path / wheel.name
    with zipfile.ZipFile(wheel) as original, zipfile.ZipFile(edited, "w") as copy:
        for item in original.infolist():
            data = original.read(item)
            copy.writestr(item, data + b"\nDEBUGGING = True\n" if item.filename.endswith("calls/dispatch.py") else data)
    publish(folder, edited)
    try:
        # WHEN the build installs the locked median-lambda apart
        # THEN it refuses that wheel, naming the library the lock pins: its hash is not the lock's
        with pytest.raises(
            LockError, match=r"installing median-lambda 3\.0\.0 from the index .* as uv\.lock pins it failed"
        ):
            install_locked_library(tmp_path / "library", project)
    finally:
        publish(folder, wheel)
