"""Median's sync rules, where your tools' tests import them: `from median_lambda.rules import check_manifest`.

The rules live in median_lambda/manifest/rules.py, beside the manifest they check; this name is part of
the public API, as `median_lambda` and `median_lambda.testing` are, so a tool's tests never reach into a room.
"""

from __future__ import annotations

from median_lambda.manifest.rules import Problem, check_manifest

__all__ = ["Problem", "check_manifest"]
