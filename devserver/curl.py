"""Copy-paste curl commands for signed requests, with the key left out.

The signature is computed when the command runs, by `python -m handler sign`, which reads the
key from the shell's environment (or uses the local dev key): no key and no signature, which
would go stale in five minutes, is ever written into a command.
"""

from __future__ import annotations

import shlex

from handler.protocol import JSON_CONTENT_TYPE, SIGNATURE_HEADER

SIGN_COMMAND = ".venv/bin/python -m handler sign"


def get_command(url: str) -> str:
    return f'curl -s {url} -H "{SIGNATURE_HEADER}: $({SIGN_COMMAND})"'


def post_command(url: str, body: bytes) -> str:
    """Two lines: the exact body in $BODY, then the signed POST of it."""
    return (
        f"BODY={shlex.quote(body.decode('utf-8'))}\n"
        f'curl -s {url} -H "{SIGNATURE_HEADER}: $({SIGN_COMMAND} --body "$BODY")" '
        f'-H "content-type: {JSON_CONTENT_TYPE}" -d "$BODY"'
    )
