"""`make release VERSION=X.Y.Z`: one commit and one tag that make a version of the template.

    python -m maintainers.release 1.2.0

CHANGELOG.md's `## [Unreleased]` section becomes `## [1.2.0] - <today>` under a new, empty
`## [Unreleased]`; pyproject.toml's [project].version becomes 1.2.0 and uv.lock follows it; the
commit "Release 1.2.0" holds exactly that, and the tag v1.2.0 (the one tag a release commit
carries: Copier reads a project's version from it) names it. Push both: `git push --follow-tags`.
Refused, with the reason: a dirty tree, a version that is not X.Y.Z or not above the last
release, or an Unreleased section with nothing in it. Maintainers only (docs/releasing.md).
"""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHANGELOG = ROOT / "CHANGELOG.md"
PYPROJECT = ROOT / "pyproject.toml"
UNRELEASED = "## [Unreleased]"
RELEASED = re.compile(r"^## \[(\d+)\.(\d+)\.(\d+)\]", re.MULTILINE)
PROJECT_VERSION = re.compile(r'^(version = ")[^"]*(")$', re.MULTILINE)


class ReleaseRefused(Exception):
    pass


def _run(*command: str) -> str:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True).stdout  # noqa: S603


def released_changelog(text: str, version: str, today: datetime.date) -> str:
    """The changelog with its Unreleased section released as `version`, and a new empty one above it."""
    if not re.fullmatch(r"\d+\.\d+\.\d+", version):
        raise ReleaseRefused(f"{version!r} is not a version X.Y.Z")
    wanted = tuple(int(part) for part in version.split("."))
    latest = max((tuple(int(part) for part in found) for found in RELEASED.findall(text)), default=None)
    if latest is not None and wanted <= latest:
        raise ReleaseRefused(f"{version} is not above the last release, {'.'.join(map(str, latest))}")
    if UNRELEASED not in text:
        raise ReleaseRefused(f"CHANGELOG.md has no `{UNRELEASED}` section to release")
    start = text.index(UNRELEASED) + len(UNRELEASED)
    following = RELEASED.search(text, start)
    body = text[start : following.start() if following else len(text)]
    if not body.strip():
        raise ReleaseRefused("CHANGELOG.md's Unreleased section is empty: say what this version changes first")
    return text.replace(UNRELEASED, f"{UNRELEASED}\n\n## [{version}] - {today.isoformat()}", 1)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("Say which version: make release VERSION=1.2.0", file=sys.stderr)
        return 2
    version = argv[0].removeprefix("v")
    try:
        if _run("git", "status", "--porcelain"):
            raise ReleaseRefused("the tree has uncommitted changes: a release commit holds the release alone")
        CHANGELOG.write_text(
            released_changelog(CHANGELOG.read_text(encoding="utf-8"), version, datetime.date.today()), encoding="utf-8"
        )
    except ReleaseRefused as refused:
        print(f"release: {refused}", file=sys.stderr)
        return 1
    pyproject = PYPROJECT.read_text(encoding="utf-8")
    PYPROJECT.write_text(PROJECT_VERSION.sub(rf"\g<1>{version}\g<2>", pyproject, count=1), encoding="utf-8")
    subprocess.run(["make", "--no-print-directory", "lock"], cwd=ROOT, check=True)  # noqa: S607
    _run("git", "add", "CHANGELOG.md", "pyproject.toml", "uv.lock")
    _run("git", "commit", "--quiet", "-m", f"Release {version}")
    _run("git", "tag", "--annotate", f"v{version}", "--message", f"Release {version}")
    print(f"release: {version} committed and tagged v{version}; push both: git push --follow-tags")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
