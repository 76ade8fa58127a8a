"""The local dev key: made on first use, private, shared by every local command, and never a published one."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from typing import TYPE_CHECKING

import pytest
from median_lambda.cli.commands import main
from median_lambda.key.local_key import DEV_KEY_FILE_ENV, DEV_KEY_PREFIX, load_or_create
from median_lambda.request.signature import matches, parse_header

if TYPE_CHECKING:
    from pathlib import Path

# The key every clone shared before, printed in the README: it must never come back.
PUBLISHED_KEY = "mk_dev_local_only_not_a_secret"


@pytest.fixture
def fresh_key_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clone that has never run `make serve` or `sign`: no key file yet, no $MEDIAN_DEV_KEY."""
    path = tmp_path / "clone" / ".median-dev-key"
    monkeypatch.setenv(DEV_KEY_FILE_ENV, str(path))
    monkeypatch.delenv("MEDIAN_DEV_KEY", raising=False)
    monkeypatch.delenv("MEDIAN_KEY", raising=False)
    return path


def sign_in_a_shell(body: str = "") -> subprocess.CompletedProcess[str]:
    """`python -m median_lambda sign`, as the README's curl commands run it."""
    return subprocess.run(  # noqa: S603 - this project's own CLI, no shell
        [sys.executable, "-m", "median_lambda", "sign", "--body", body],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_the_first_sign_makes_a_private_random_key_that_later_commands_reuse(fresh_key_file: Path) -> None:
    # GIVEN a fresh clone
    body = '{"version":1,"op":"call","tool":"anyTool","input":{}}'
    # WHEN `sign` runs, then runs again
    first, second = sign_in_a_shell(body), sign_in_a_shell(body)
    # THEN the first made the key file, readable by its owner only, and both signed with its key
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    key = fresh_key_file.read_text().strip()
    assert key.startswith(DEV_KEY_PREFIX) and key != PUBLISHED_KEY
    assert stat.S_IMODE(fresh_key_file.stat().st_mode) == 0o600
    for signed in (first, second):
        assert matches(parse_header(signed.stdout.strip()), key, body.encode())
        assert key not in signed.stdout + signed.stderr


def test_each_clone_gets_a_key_of_its_own(tmp_path: Path) -> None:
    # GIVEN two fresh clones
    # WHEN each makes its key
    keys = {load_or_create(tmp_path / name / ".median-dev-key")[0] for name in ("one", "two")}
    # THEN they differ, each long enough to be guessed by no one
    assert len(keys) == 2
    assert all(len(key) >= len(DEV_KEY_PREFIX) + 40 for key in keys)


def test_commands_started_together_share_one_key(fresh_key_file: Path) -> None:
    # GIVEN a fresh clone, and many commands (make serve, sign, event) starting at the same moment
    start, keys = threading.Barrier(16), []

    def first_use() -> None:
        start.wait()
        keys.append(load_or_create(fresh_key_file)[0])

    threads = [threading.Thread(target=first_use) for _ in range(16)]
    # WHEN each reads or makes the key
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # THEN they all hold the one key the file keeps, and nothing half-written is left beside it
    assert set(keys) == {fresh_key_file.read_text().strip()}
    assert [path.name for path in fresh_key_file.parent.iterdir()] == [fresh_key_file.name]


@pytest.mark.parametrize("command", ["sign", "event", "local-env"])
def test_median_dev_key_wins_and_no_file_is_made(
    command: str,
    fresh_key_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN $MEDIAN_DEV_KEY, set with the blanks a copy-paste brings
    monkeypatch.setenv("MEDIAN_DEV_KEY", "  mk_dev_chosen_by_me  ")
    output = tmp_path / "written.json"
    # WHEN a command signs with the dev key, or hands it to sam local
    status = main([command] if command == "sign" else [command, "--output", str(output)])
    # THEN it used that key, and no key file was made
    assert status == 0
    if command == "sign":
        assert matches(parse_header(capsys.readouterr().out.strip()), "mk_dev_chosen_by_me", b"")
    elif command == "event":
        event = json.loads(output.read_text())
        assert matches(parse_header(event["headers"]["median-signature"]), "mk_dev_chosen_by_me", b"")
    else:
        assert json.loads(output.read_text())["Parameters"]["MEDIAN_DEV_KEY"] == "mk_dev_chosen_by_me"
    assert not fresh_key_file.exists()


def test_a_blank_median_dev_key_means_the_file(fresh_key_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN MEDIAN_DEV_KEY set but blank, as `MEDIAN_DEV_KEY= make serve` leaves it
    monkeypatch.setenv("MEDIAN_DEV_KEY", " ")
    # WHEN `sign` runs
    signed = sign_in_a_shell()
    # THEN it signs with the key file's key, as make serve then verifies
    assert signed.returncode == 0, signed.stderr
    assert matches(parse_header(signed.stdout.strip()), fresh_key_file.read_text().strip(), b"")


def _empty(path: Path) -> None:
    path.parent.mkdir(parents=True)
    path.write_text("\n")


def _a_directory(path: Path) -> None:
    path.mkdir(parents=True)


def _not_text(path: Path) -> None:
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\xff\xfe\x00mk")


def _under_a_file(path: Path) -> None:
    path.parent.parent.mkdir(parents=True, exist_ok=True)
    path.parent.write_text("a file where the key's folder should be")


@pytest.mark.parametrize("spoil", [_empty, _a_directory, _not_text, _under_a_file], ids=lambda spoil: spoil.__name__)
def test_an_unusable_key_file_is_named_with_no_traceback(
    spoil: object, fresh_key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a key file that cannot be read or made
    assert callable(spoil)
    spoil(fresh_key_file)
    # WHEN `sign` needs the dev key
    status = main(["sign"])
    # THEN it exits 2 naming the file, with no traceback and no key
    err = capsys.readouterr().err
    assert status == 2
    assert str(fresh_key_file) in err and "Traceback" not in err
    assert DEV_KEY_PREFIX not in err


def test_the_repository_ignores_the_key_file() -> None:
    # GIVEN the clone's own key file's name, where `make serve` keeps it
    from median_lambda.key.local_key import DEV_KEY_FILE_NAME

    from tests.devserver_process import REPO

    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    # WHEN git is asked whether it would track it
    ignored = subprocess.run(  # noqa: S603 - git, no shell
        ["git", "check-ignore", "--quiet", "--no-index", DEV_KEY_FILE_NAME],  # noqa: S607 - git from PATH
        cwd=REPO,
        check=False,
        env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"},
    )
    # THEN it would not: the key stays out of every commit
    assert ignored.returncode == 0
