"""Median's contract, proven on this project: median-lambda's contract suite, on your own tools,
settings and template.yaml, in the configuration template.yaml deploys. `make test` runs it with your
tools' tests; its summary at the end says what it checked."""

from median_lambda.contract import *  # noqa: F403
