"""`make release VERSION=X.Y.Z`: one commit and one tag that make a version of median-lambda and its template.

    python -m maintainers.release 1.2.0

The library and the template's files are released together, under one version: the template's
CHANGELOG.md (what a project must do) and median-lambda/CHANGELOG.md (what the library changed)
each have their `## [Unreleased]` section become `## [1.2.0] - <today>` under a new, empty one
(the library's says "No change." where it had nothing); median-lambda/src/median_lambda/_version.py
becomes 1.2.0 (the wheel's version, `median --version`'s and the logs'); the commit "Release 1.2.0"
holds exactly that, and the tag v1.2.0 (the one tag a release commit carries: Copier reads a
project's version from it, and a project's pyproject.toml pins median-lambda at it) names it. Push
both: `git push --follow-tags`; the Release workflow then builds and checks the wheel and sdist.
Refused, with the reason: a dirty tree, a version that is not X.Y.Z or not above the last
release, or a template Unreleased section with nothing in it. Maintainers only (docs/releasing.md).
"""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHANGELOG = ROOT / "CHANGELOG.md"
LIBRARY_CHANGELOG = ROOT / "median-lambda" / "CHANGELOG.md"
VERSION_FILE = ROOT / "median-lambda" / "src" / "median_lambda" / "_version.py"
UNRELEASED = "## [Unreleased]"
RELEASED = re.compile(r"^## \[(\d+)\.(\d+)\.(\d+)\]", re.MULTILINE)
LIBRARY_VERSION = re.compile(r'^(__version__ = ")[^"]*(")$', re.MULTILINE)


class ReleaseRefused(Exception):
    pass


def _run(*command: str) -> str:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True).stdout  # noqa: S603


def released_changelog(text: str, version: str, today: datetime.date, *, empty: str | None = None) -> str:
    """The changelog with its Unreleased section released as `version`, and a new empty one above it.

    An empty Unreleased section is refused, or, with `empty`, released saying it.
    """
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
    heading = f"{UNRELEASED}\n\n## [{version}] - {today.isoformat()}"
    if not body.strip():
        if empty is None:
            raise ReleaseRefused("CHANGELOG.md's Unreleased section is empty: say what this version changes first")
        heading += f"\n\n{empty}"
    return text.replace(UNRELEASED, heading, 1)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("Say which version: make release VERSION=1.2.0", file=sys.stderr)
        return 2
    version = argv[0].removeprefix("v")
    try:
        if _run("git", "status", "--porcelain"):
            raise ReleaseRefused("the tree has uncommitted changes: a release commit holds the release alone")
        template = released_changelog(CHANGELOG.read_text(encoding="utf-8"), version, datetime.date.today())
        library = released_changelog(
            LIBRARY_CHANGELOG.read_text(encoding="utf-8"), version, datetime.date.today(), empty="No change."
        )
    except ReleaseRefused as refused:
        print(f"release: {refused}", file=sys.stderr)
        return 1
    CHANGELOG.write_text(template, encoding="utf-8")
    LIBRARY_CHANGELOG.write_text(library, encoding="utf-8")
    source = VERSION_FILE.read_text(encoding="utf-8")
    VERSION_FILE.write_text(LIBRARY_VERSION.sub(rf"\g<1>{version}\g<2>", source, count=1), encoding="utf-8")
    _run("git", "add", str(CHANGELOG), str(LIBRARY_CHANGELOG), str(VERSION_FILE))
    _run("git", "commit", "--quiet", "-m", f"Release {version}")
    _run("git", "tag", "--annotate", f"v{version}", "--message", f"Release {version}")
    print(f"release: {version} committed and tagged v{version}; push both: git push --follow-tags")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
