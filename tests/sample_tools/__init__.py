"""The framework tests' own tool set, served as a user's `tools/` is: one module per concern.

It has the shape of a real endpoint (one tool per risk level, every field type, a diagnostics
function, a private helper module), so the framework is tested on a full manifest without
depending on the example tools in `tools/`, which users delete. In this process the `sample_tools`
fixture (tests/conftest.py) serves it; a dev server, CLI or cold-start process serves it when
$MEDIAN_TOOLS_PACKAGE names this package.
"""
