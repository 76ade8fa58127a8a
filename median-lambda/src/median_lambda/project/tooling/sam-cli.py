# /// script
# requires-python = ">=3.13,<3.15"
# dependencies = [
#     # AWS's own; its pins (pydantic 2.13, click) are not the project's, hence a venv of its own.
#     "aws-sam-cli>=1.130",
#     # AWS Labs' serverless rules for cfn-lint, which `make validate` runs after sam validate --lint.
#     "cfn-lint-serverless>=0.3.6",
# ]
# ///
"""The SAM CLI, for `make build`, `make validate`, `make invoke`, `make start-api` and `make deploy`, and the
deploy workflow's `sam deploy` (`make sam-cli`): the one version that built and checked the artifact deploys it.

Not a dependency of the project: tooling/sam-cli.py.lock pins it with hashes, in a venv of its own
(.venv/sam-cli), so that its pins and the project's never meet. This file only declares what that
venv holds (PEP 723 inline metadata), so uv locks it (`make lock`), checks it (`make lint`) and
audits it (`make audit`) as it does uv.lock. Nothing runs it.
"""
