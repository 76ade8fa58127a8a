"""Median's sync rules, where your tools' tests import them (tests/tools/test_orders.py).

The rules live in handler/manifest/rules.py, beside the manifest they check.
"""

from __future__ import annotations

from handler.manifest.rules import Problem, check_manifest

__all__ = ["Problem", "check_manifest"]
