"""The key `make serve` verifies with, when no secret is named: $MEDIAN_DEV_KEY, else the clone's dev key file."""

from __future__ import annotations

import os

from median_lambda.key.local_key import DEV_KEY_FILE_ENV, dev_key_file, load_or_create
from median_lambda.protocol import DEV_KEY_ENV


def use_dev_key() -> str:
    """Put the dev key where the handler and the inspector read it; say which key it is, never the key itself.

    The very key `python -m median_lambda sign` falls back to, so the printed commands verify.
    The key is not printed: this terminal's text ends up in CI logs and pasted into issues,
    and the commands fetch it from the file themselves.
    """
    if os.environ.get(DEV_KEY_ENV, "").strip():
        os.environ[DEV_KEY_ENV] = os.environ[DEV_KEY_ENV].strip()
        return f"Verifying signatures with ${DEV_KEY_ENV}."
    path = dev_key_file()
    key, created = load_or_create(path)
    os.environ[DEV_KEY_ENV] = key
    made = "a new dev key, kept in" if created else "the dev key in"
    where = f" (${DEV_KEY_FILE_ENV})" if os.environ.get(DEV_KEY_FILE_ENV, "").strip() else ""
    return f"Verifying signatures with {made} {path}{where}; `python -m median_lambda sign` signs with it."
