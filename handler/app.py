"""The Lambda function's entry point: template.yaml's `Handler: handler.app.lambda_handler`.

median-lambda, the library this project pins (pyproject.toml), answers each request from the
tools in tools/: GET with their manifest, POST by running the one Median's agent called.
"""

from median_lambda.app import lambda_handler

__all__ = ["lambda_handler"]
