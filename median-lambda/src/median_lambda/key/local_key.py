"""The local dev key: random for each clone, made on first use, kept in a git-ignored file.

`make serve` verifies with it and `python -m median_lambda sign`, `call`, `event` and `local-env`
sign with it, so the README's commands work as written, in any order: whichever runs first
makes the file, and the others read it. `$MEDIAN_DEV_KEY`, when set, wins everywhere.

It is for loopback and `sam local` only. A deployed function never reads `MEDIAN_DEV_KEY`
(median_lambda/key/source.py) and never this file, which is not in the artifact: a leaked dev key opens
nothing but the laptop's own `make serve`, and no two clones share one.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from median_lambda.protocol import DEV_KEY_ENV

# Where the key is kept: the project root (beside .gitignore, which lists it), unless this
# variable names another file. The tests point it at a temporary one.
DEV_KEY_FILE_ENV = "MEDIAN_DEV_KEY_FILE"
DEV_KEY_FILE_NAME = ".median-dev-key"
DEV_KEY_PREFIX = "mk_dev_"
# 32 random bytes: as strong as the HMAC-SHA256 key it is.
_KEY_BYTES = 32
_OWNER_ONLY = 0o600


class DevKeyUnavailable(Exception):
    """The key file cannot be read or made; the message names the file and what to do."""


def dev_key_file() -> Path:
    named = os.environ.get(DEV_KEY_FILE_ENV, "").strip()
    # At the project's root, where make serve, the tests and sam local's env file are made.
    return Path(named) if named else Path.cwd() / DEV_KEY_FILE_NAME


def dev_key() -> str:
    """$MEDIAN_DEV_KEY when set, else the key in the dev key file, which is made if there is none yet."""
    return os.environ.get(DEV_KEY_ENV, "").strip() or load_or_create(dev_key_file())[0]


def load_or_create(path: Path) -> tuple[str, bool]:
    """The key kept in `path`, and whether it was made just now."""
    try:
        return _read(path), False
    except FileNotFoundError:
        pass
    key = f"{DEV_KEY_PREFIX}{secrets.token_urlsafe(_KEY_BYTES)}"
    try:
        _create(path, key)
    except FileExistsError:  # another command made it first, a moment ago: use that one
        return _read(path), False
    except OSError as error:
        raise DevKeyUnavailable(f"cannot write the dev key file {path}: {error.strerror}") from None
    return key, True


def _read(path: Path) -> str:
    try:
        key = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "it is not text"
        raise DevKeyUnavailable(f"cannot read the dev key file {path}: {reason}") from None
    if not key:
        raise DevKeyUnavailable(f"the dev key file {path} is empty; delete it and a new key is made")
    _keep_private(path)
    return key


def _keep_private(path: Path) -> None:
    """Take back what others may do with a key file copied, restored or unpacked with a wider mode."""
    try:
        if stat.S_IMODE(path.stat().st_mode) & ~_OWNER_ONLY:
            path.chmod(_OWNER_ONLY)
    except OSError as error:
        raise DevKeyUnavailable(
            f"the dev key file {path} is readable by others and cannot be made private ({error.strerror}); "
            "delete it and a new key is made"
        ) from None


def write_private(path: Path, text: str) -> None:
    """Write `text`, which holds a key, to `path`, readable and writable by its owner alone (0600).

    Whatever the umask, and whatever mode a file already there had: the text goes to a new
    file made 0600 beside it, which then replaces it, so the old file's mode goes with it and
    no reader ever sees half the text.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    descriptor = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _OWNER_ONLY)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as staged:
            staged.write(text)
        staging.replace(path)
    finally:
        staging.unlink(missing_ok=True)


def _create(path: Path, key: str) -> None:
    """Write the key to a private temporary file, then link it into place.

    The link appears whole or not at all and fails if the file exists, so two commands
    started together (make serve and a sign) end up sharing one key, never half a file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(f"{path.name}.{secrets.token_hex(8)}.tmp")
    descriptor = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _OWNER_ONLY)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as staged:
            staged.write(f"{key}\n")
        os.link(staging, path)
    finally:
        staging.unlink(missing_ok=True)
