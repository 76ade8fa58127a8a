"""The template repository's own tools: its proofs, releases and mutation testing (maintainer.mk runs each).

A project made from the template never gets this folder (copier.yml excludes it).
"""
