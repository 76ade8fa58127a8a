# /// script
# requires-python = ">=3.13,<3.14"
# dependencies = [
#     # Held to one minor release: its mutants' names are what maintainers/equivalent_mutants.toml lists, and
#     # a newer mutmut may name or make them differently (a deliberate bump, then judge them again).
#     "mutmut~=3.8.1",
# ]
# ///
"""mutmut, for `make mutate`, the template's own mutation testing. It runs the tests in its own
interpreter, so its venv is the dev venv (uv.lock) with mutmut added (the Makefile).

Not a dependency of the project: maintainers/tooling/mutmut.py.lock pins it with hashes, in a venv of its own
(.venv/mutmut), so that its pins and the project's never meet. This file only declares what that
venv holds (PEP 723 inline metadata), so uv locks it (`make lock`), checks it (`make lint`) and
audits it (`make audit`) as it does uv.lock. Nothing runs it.
"""
