"""Median's sync rules, where your tools' tests import them: `from handler.rules import check_manifest`.

The rules live in handler/manifest/rules.py, beside the manifest they check; this name is part of
the public API, as `handler` and `handler.testing` are, so a tool's tests never reach into a room.
"""

from __future__ import annotations

from handler.manifest.rules import Problem, check_manifest

__all__ = ["Problem", "check_manifest"]
