"""A tools package holding no tool: what `scratch_registry` serves, so a framework test sees only its own tools.

It names this package in $MEDIAN_TOOLS_PACKAGE, so `tools/` is never imported by the test,
nor by a CLI or dev server process the test starts.
"""
