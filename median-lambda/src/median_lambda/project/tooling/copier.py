# /// script
# requires-python = ">=3.13,<3.15"
# dependencies = [
#     # Held to one minor release: `make upgrade` and the template's proof of it run this one, and a
#     # newer Copier comes in by a deliberate bump here (copier.yml's _min_copier_version is the floor).
#     "copier~=9.19.1",
# ]
# ///
"""Copier, for `make upgrade`: `copier update` takes a later version of the template into this project.

Not a dependency of the project: tooling/copier.py.lock pins it with hashes, in a venv of its own
(.venv/copier), so that its pins and the project's never meet. This file only declares what that
venv holds (PEP 723 inline metadata), so uv locks it (`make lock`), checks it (`make lint`) and
audits it (`make audit`) as it does uv.lock. Nothing runs it.
"""
