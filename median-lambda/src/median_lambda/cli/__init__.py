"""The developer's tools: `python -m median_lambda` (the Makefile's check, new-tool, call, event ...).

`commands` is the command line; `arguments` its parser; `same_origin` the opener `call` uses;
`scaffold` writes a new tool from templates/; `organisation` checks several endpoints together.
Never imported by the Lambda: the artifact ships it, but no request reaches it.
"""
