"""project.urls for median-lambda's wheel and sdist: Median's site, and the repository the release is built in.

The library is developed in its template's repository, which a company may fork and publish from:
its links name where this build's sources are, not a repository written here once. The Release
workflow (.github/workflows/release.yml) sets MEDIAN_LAMBDA_REPOSITORY to its own
(`https://github.com/OWNER/NAME`); a build without it (a venv's, `make dist` on a laptop) links
Median's site alone.
"""

from __future__ import annotations

import os
from typing import Any

from hatchling.metadata.plugin.interface import MetadataHookInterface

HOMEPAGE = "https://median.sh"
REPOSITORY_ENV = "MEDIAN_LAMBDA_REPOSITORY"


class RepositoryLinks(MetadataHookInterface):
    def update(self, metadata: dict[str, Any]) -> None:
        urls = {"Homepage": HOMEPAGE}
        repository = os.environ.get(REPOSITORY_ENV, "").strip().rstrip("/")
        if repository:
            # The guides and changelog of this very version, at its tag, as a project's README links them.
            ref = f"v{metadata['version']}" if metadata.get("version") else "HEAD"
            urls |= {
                "Source": repository,
                "Documentation": f"{repository}/blob/{ref}/docs/layout.md",
                "Changelog": f"{repository}/blob/{ref}/median-lambda/CHANGELOG.md",
                "Issues": f"{repository}/issues",
            }
        metadata["urls"] = urls
