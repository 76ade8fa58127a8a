# /// script
# requires-python = ">=3.13,<3.15"
# dependencies = [
#     "check-jsonschema>=0.39,<1",
#     # zizmor adds audits in minor releases: held to one, so CI fails only on a change to the
#     # workflows, and a newer zizmor comes in by a deliberate bump here.
#     "zizmor~=1.32.0",
# ]
# ///
"""The workflows' linters, for `make lint-workflows`: .github/ as GitHub reads it (check-jsonschema's
builtin schemas) and as zizmor audits it, both offline.

Not a dependency of the project: tooling/workflow-lint.py.lock pins it with hashes, in a venv of its own
(.venv/workflow-lint), so that its pins and the project's never meet. This file only declares what that
venv holds (PEP 723 inline metadata), so uv locks it (`make lock`), checks it (`make lint`) and
audits it (`make audit`) as it does uv.lock. Nothing runs it.
"""
