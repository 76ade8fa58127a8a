"""`python -m median_lambda.devserver.artifact_check DIR`: fail when a built Lambda artifact carries the dev server.

The inspector signs any request with the dev key for whoever reaches it: it must live only in
`make serve`, never in what `sam build` packs. Run it on the build's output, e.g.
`.venv/bin/python -m median_lambda.devserver.artifact_check .aws-sam/build/MedianToolsFunction`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from median_lambda.devserver.inspector import INSPECTOR_PATH, PAGE_FILE

# Where the build would lay the dev server out, were it copied: median_lambda/devserver/.
DEV_ONLY_PACKAGE = ("median_lambda", Path(__file__).resolve().parent.name)
_SCANNED_SUFFIXES = {".py", ".html", ".js", ".json", ".txt", ".cfg", ".toml"}


def dev_server_parts_in(artifact: Path) -> list[str]:
    """The artifact's files that belong to the dev server or mention the inspector's route."""
    found = []
    marker = INSPECTOR_PATH.encode("utf-8")
    for path in sorted(artifact.rglob("*")):
        relative = path.relative_to(artifact)
        if relative.parts[:2] == DEV_ONLY_PACKAGE or path.name == PAGE_FILE.name:
            found.append(str(relative))
        elif path.is_file() and path.suffix in _SCANNED_SUFFIXES and marker in path.read_bytes():
            found.append(f"{relative} (mentions {INSPECTOR_PATH})")
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print("usage: python -m median_lambda.devserver.artifact_check BUILT_ARTIFACT_DIR", file=sys.stderr)
        return 2
    found = dev_server_parts_in(Path(argv[0]))
    for part in found:
        print(f"{argv[0]}: {part} is part of the local dev server and must not be deployed", file=sys.stderr)
    if found:
        return 1
    print(f"{argv[0]}: no dev server or inspector in the artifact")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
