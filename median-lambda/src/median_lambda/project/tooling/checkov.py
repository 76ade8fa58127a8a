# /// script
# requires-python = ">=3.13,<3.15"
# dependencies = [
#     # It adds checks even in patch releases: held to one, so `make validate` fails only on a change to
#     # the templates or .github/, and a newer Checkov comes in by a deliberate bump here.
#     "checkov==3.3.30",
# ]
# ///
"""Checkov, for `make validate`: the templates and .github/ against its bundled checks, offline.

Not a dependency of the project: tooling/checkov.py.lock pins it with hashes, in a venv of its own
(.venv/checkov), so that its pins and the project's never meet. This file only declares what that
venv holds (PEP 723 inline metadata), so uv locks it (`make lock`), checks it (`make lint`) and
audits it (`make audit`) as it does uv.lock. Nothing runs it.
"""
