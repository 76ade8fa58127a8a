"""How a command stops: the one line a person acts on, and the exit code `median` gives for it.

Exit 2 (UsageError): the command was used wrongly, or the project is not set up for it. Exit 1
(Failed): it ran, and what it checks or asks for failed. Either is printed as `error: <message>`
by median_lambda.cli.commands.main, never as a stack trace.
"""

from __future__ import annotations


class UsageError(Exception):
    """The command was used wrongly (exit 2); the message says how to use it."""


class Failed(Exception):
    """The command ran and failed (exit 1); the message says what was seen and what to do."""
