"""maintainers/release.py: a release turns CHANGELOG.md's Unreleased section into a dated version, or says why not."""

from __future__ import annotations

import datetime

import pytest

from maintainers.release import ReleaseRefused, released_changelog

TODAY = datetime.date(2026, 12, 3)
CHANGELOG = """\
# Changelog

## [Unreleased]

### Fixed

- A fix.

## [1.1.0] - 2026-11-30

- Something.
"""


def test_the_unreleased_section_becomes_the_version_under_a_new_empty_one() -> None:
    # WHEN 1.2.0 is released
    released = released_changelog(CHANGELOG, "1.2.0", TODAY)
    # THEN what was unreleased is 1.2.0's, dated, above 1.1.0, and a new Unreleased section waits above it
    assert released == CHANGELOG.replace("## [Unreleased]\n", "## [Unreleased]\n\n## [1.2.0] - 2026-12-03\n")


@pytest.mark.parametrize(
    ("changelog", "version", "reason"),
    [
        (CHANGELOG, "1.1.0", "1.1.0 is not above the last release, 1.1.0"),
        (CHANGELOG, "1.0.9", "1.0.9 is not above the last release, 1.1.0"),
        (CHANGELOG, "1.2", "'1.2' is not a version X.Y.Z"),
        (CHANGELOG, "v1.2.0-rc1", "'v1.2.0-rc1' is not a version X.Y.Z"),
        (CHANGELOG.replace("### Fixed\n\n- A fix.\n", ""), "1.2.0", "Unreleased section is empty"),
        (CHANGELOG.replace("## [Unreleased]", "## Next"), "1.2.0", "no `## [Unreleased]` section"),
    ],
)
def test_a_release_that_cannot_be_made_says_why(changelog: str, version: str, reason: str) -> None:
    # WHEN a release is asked that would be wrong
    # THEN it is refused, and the reason says what to fix
    with pytest.raises(ReleaseRefused, match=reason.replace("[", r"\[").replace("(", r"\(")):
        released_changelog(changelog, version, TODAY)
