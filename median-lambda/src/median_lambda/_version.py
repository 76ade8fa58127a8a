"""The library's version: its wheel's, `median --version`'s, and every log line's (`median_lambda_version`)."""

__version__ = "3.0.0"
