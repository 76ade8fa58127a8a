"""`make serve` and `python -m median_lambda sign` share one dev key file, whichever of them runs first."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import urllib.request
from typing import TYPE_CHECKING
from urllib.error import HTTPError

import pytest
from median_lambda.key.local_key import DEV_KEY_FILE_ENV
from median_lambda.protocol import SIGNATURE_HEADER
from median_lambda.request.signature import sign

from tests.devserver_process import REPO, running_devserver

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A clone with no tools of its own: a signed GET's manifest is all these tests need."""
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "__init__.py").write_text("")
    return tmp_path


@pytest.fixture
def fresh_clone(project: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment of a clone that has no key file yet and no $MEDIAN_DEV_KEY."""
    monkeypatch.delenv("MEDIAN_DEV_KEY", raising=False)
    monkeypatch.delenv("MEDIAN_KEY", raising=False)
    monkeypatch.setenv(DEV_KEY_FILE_ENV, str(project / ".median-dev-key"))
    return {DEV_KEY_FILE_ENV: os.environ[DEV_KEY_FILE_ENV]}


def readme_sign() -> str:
    """`$(.venv/bin/python -m median_lambda sign)`, the README's GET signature, run in the project folder."""
    signed = subprocess.run(
        [sys.executable, "-m", "median_lambda", "sign"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return signed.stdout.strip()


def get_status(url: str, signature: str) -> int:
    request = urllib.request.Request(url, headers={SIGNATURE_HEADER: signature})  # noqa: S310 - loopback
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - a loopback URL of our own
            return int(response.status)
    except HTTPError as error:
        return error.code


def test_sign_before_the_first_serve_makes_the_key_the_server_then_uses(
    project: Path, fresh_clone: dict[str, str]
) -> None:
    # GIVEN a fresh clone where `sign` runs before `make serve` ever has
    signature = readme_sign()
    # WHEN the server starts and the signed GET reaches it
    with running_devserver(project, cwd=project, env=fresh_clone) as server:
        status = get_status(server.url, signature)
        output = server.output()
    # THEN it verifies: both read the one key file
    assert status == 200
    assert "Verifying signatures with the dev key in" in output


def test_the_first_serve_makes_a_private_key_that_sign_then_uses(project: Path, fresh_clone: dict[str, str]) -> None:
    # GIVEN a fresh clone where `make serve` runs first
    key_file = project / ".median-dev-key"
    with running_devserver(project, cwd=project, env=fresh_clone) as server:
        # WHEN the README's GET is signed in another terminal and sent
        status = get_status(server.url, readme_sign())
        forged = get_status(server.url, sign("mk_dev_local_only_not_a_secret", b""))
        output = server.output()
    # THEN it verifies, the published key of old does not, and the key made is private and never printed
    assert status == 200
    assert forged == 401
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert "Verifying signatures with a new dev key, kept in" in output
    assert key_file.read_text().strip() not in output


def test_median_dev_key_wins_over_the_file(project: Path, fresh_clone: dict[str, str]) -> None:
    # GIVEN a key file already made, and $MEDIAN_DEV_KEY set to another key
    file_key_signature = readme_sign()
    chosen = "mk_dev_chosen_for_this_run"
    # WHEN the server starts with both
    with running_devserver(project, cwd=project, env={**fresh_clone, "MEDIAN_DEV_KEY": chosen}) as server:
        with_chosen = get_status(server.url, sign(chosen, b""))
        with_file_key = get_status(server.url, file_key_signature)
        output = server.output()
    # THEN it verifies with $MEDIAN_DEV_KEY only, and prints neither key
    assert (with_chosen, with_file_key) == (200, 401)
    assert chosen not in output
