"""Every file the project writes that holds a key is its owner's alone (0600), whatever the umask.

Two files hold one: the clone's dev key file (made by the first `sign`, `call`, `event`,
`local-env` or `make serve`) and `events/env.json`, which `local-env` writes for `sam local`
with the dev key in it. Each is checked under a umask that hides nothing, and over a file
already there with a wider mode.
"""

from __future__ import annotations

import json
import os
import stat
from typing import TYPE_CHECKING

import pytest
from median_lambda.cli.commands import main
from median_lambda.key.local_key import DEV_KEY_FILE_ENV

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

OWNER_ONLY = 0o600


@pytest.fixture
def permissive_umask() -> Iterator[None]:
    """A umask that takes nothing away, as some shared hosts and containers set."""
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.fixture
def clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clone whose dev key file is not made yet; $MEDIAN_DEV_KEY unset, so the file is used."""
    monkeypatch.setenv(DEV_KEY_FILE_ENV, str(tmp_path / ".median-dev-key"))
    monkeypatch.delenv("MEDIAN_DEV_KEY", raising=False)
    monkeypatch.delenv("MEDIAN_KEY", raising=False)
    return tmp_path


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def write_env_file(clone: Path) -> Path:
    path = clone / "events" / "env.json"
    assert main(["local-env", "--output", str(path)]) == 0
    return path


def make_dev_key_file(clone: Path) -> Path:
    assert main(["sign"]) == 0
    return clone / ".median-dev-key"


WRITERS: dict[str, Callable[[Path], Path]] = {"local-env": write_env_file, "the dev key file": make_dev_key_file}


@pytest.mark.usefixtures("permissive_umask")
@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_new_key_file_is_owner_only_under_a_permissive_umask(clone: Path, writer: str) -> None:
    # GIVEN a clone where no key file exists yet, and a umask of 000
    # WHEN the command that writes the file runs
    path = WRITERS[writer](clone)
    # THEN the file it wrote is readable by its owner alone
    assert mode(path) == OWNER_ONLY


@pytest.mark.usefixtures("permissive_umask")
@pytest.mark.parametrize("wider", [0o644, 0o666, 0o604, 0o640])
def test_local_env_over_a_wider_file_leaves_it_owner_only(clone: Path, wider: int) -> None:
    # GIVEN an events/env.json already there, readable by others (an older version wrote it 0644)
    path = clone / "events" / "env.json"
    path.parent.mkdir()
    path.write_text("{}")
    path.chmod(wider)
    # WHEN local-env writes it again
    write_env_file(clone)
    # THEN it holds the dev key and only its owner can read it
    assert mode(path) == OWNER_ONLY
    key = (clone / ".median-dev-key").read_text().strip()
    assert json.loads(path.read_text())["Parameters"]["MEDIAN_DEV_KEY"] == key


@pytest.mark.usefixtures("permissive_umask")
@pytest.mark.parametrize("wider", [0o644, 0o666, 0o604, 0o640])
def test_a_dev_key_file_with_a_wider_mode_is_made_owner_only_when_used(clone: Path, wider: int) -> None:
    # GIVEN a dev key file others can read (copied, restored from a backup, or unpacked)
    path = make_dev_key_file(clone)
    key = path.read_text()
    path.chmod(wider)
    # WHEN the next command uses it
    assert main(["sign"]) == 0
    # THEN it is its owner's alone again, and still the same key
    assert mode(path) == OWNER_ONLY
    assert path.read_text() == key


def test_local_env_into_a_place_it_cannot_write_says_so(clone: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN an --output under a path that is a file, not a folder
    (clone / "events").write_text("not a folder")
    # WHEN local-env writes there
    status = main(["local-env", "--output", str(clone / "events" / "env.json")])
    # THEN it exits 2 naming the path, without a traceback or the key
    err = capsys.readouterr().err
    assert status == 2
    assert "cannot write" in err and "env.json" in err
    assert "Traceback" not in err and "mk_dev_" not in err
