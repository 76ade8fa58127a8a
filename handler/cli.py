"""The command-line tools for the Median protocol: `sign`, `check` and `manifest`.

Exit codes: 0 done, 1 the tools break a sync rule, 2 the command was used wrongly.
A key is read from the environment or a file, never from an argument, where it would
land in shell history and in `ps`.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from handler.rules import Problem

KEY_ENV = "MEDIAN_KEY"
# The key `make serve` and these commands share when none is given. Good for loopback
# only: a deployed function never reads MEDIAN_DEV_KEY, so this cannot open a real endpoint.
LOCAL_DEV_KEY = "mk_dev_local_only_not_a_secret"


class UsageError(Exception):
    pass


def read_key(key_file: str | None) -> str:
    """The key from --key-file, else $MEDIAN_KEY, else $MEDIAN_DEV_KEY, else the local dev key."""
    import os
    from pathlib import Path

    from handler.protocol import DEV_KEY_ENV

    if key_file:
        try:
            key = Path(key_file).read_text(encoding="utf-8").strip()
        except OSError as error:
            raise UsageError(f"cannot read the key file {key_file}: {error.strerror}") from None
        if not key:
            raise UsageError(f"the key file {key_file} is empty")
        return key
    return os.environ.get(KEY_ENV, "").strip() or os.environ.get(DEV_KEY_ENV, "").strip() or LOCAL_DEV_KEY


def command_sign(arguments: argparse.Namespace) -> int:
    """Print a median-signature header value for a body (empty for a GET) signed now."""
    from handler.signature import sign

    body = sys.stdin.buffer.read() if arguments.body == "-" else arguments.body.encode("utf-8")
    print(sign(read_key(arguments.key_file), body))
    return 0


def _build() -> tuple[dict[str, object], list[Problem]]:
    from handler.manifest import build_manifest
    from handler.registry import load_tools

    return build_manifest(load_tools())


def command_check(_: argparse.Namespace) -> int:
    """Check the tools against Median's sync rules: one line per problem, exit 1 if any."""
    manifest, problems = _build()
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{len(problems)} problem(s): Median would refuse this manifest.", file=sys.stderr)
        return 1
    from handler.protocol import MAX_MANIFEST_BYTES, MAX_TOOLS
    from handler.rules import manifest_size

    tools = manifest["tools"]
    assert isinstance(tools, list)
    print(
        f"OK: {len(tools)}/{MAX_TOOLS} tools, {manifest_size(manifest):,}/{MAX_MANIFEST_BYTES:,} bytes, "
        f"diagnostics {'on' if manifest['diagnostics'] else 'off'}. Median would accept this manifest."
    )
    return 0


def command_manifest(arguments: argparse.Namespace) -> int:
    """Print the manifest as GET serves it (compact), or indented with --pretty."""
    manifest, problems = _build()
    if problems:
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1
    from handler.responses import to_json

    # Compact, it is byte for byte what GET answers: `sam build` serves this very output.
    text = json.dumps(manifest, indent=2, ensure_ascii=False) if arguments.pretty else to_json(manifest)
    sys.stdout.buffer.write(text.encode("utf-8") + b"\n")
    return 0


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="python -m handler", description="Tools for the Median tools protocol.")
    commands = root.add_subparsers(dest="command", required=True, metavar="COMMAND")
    signing = commands.add_parser("sign", help=command_sign.__doc__)
    signing.add_argument("--body", default="", help="the exact body to sign; - reads it from standard input")
    signing.add_argument("--key-file", help=f"a file holding the key (default: ${KEY_ENV}, then ${{MEDIAN_DEV_KEY}})")
    signing.set_defaults(run=command_sign)
    check = commands.add_parser("check", help=command_check.__doc__)
    check.set_defaults(run=command_check)
    manifest = commands.add_parser("manifest", help=command_manifest.__doc__)
    manifest.add_argument("--pretty", action="store_true", help="indent the JSON")
    manifest.set_defaults(run=command_manifest)
    return root


def main(argv: Sequence[str] | None = None) -> int:
    arguments = parser().parse_args(argv)
    try:
        return int(arguments.run(arguments))
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
