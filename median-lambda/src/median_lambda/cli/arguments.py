"""Command lines that never print a key back: `python -m median_lambda` and the pipeline's smoke check.

A key typed on a command line lands in shell history and `ps`; printed back in an error, it
lands in a terminal's scrollback and a CI log too. Two defences, both here: every spelling of
a key option is recognised (the caller refuses it, saying where a key goes instead), and
argparse's errors, which repeat what they could not use ("unrecognized arguments: X",
"invalid choice: 'X'", "ignored explicit argument 'X'"), have every value from the command
line replaced by "…" before they are printed.
"""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from collections.abc import Sequence

# What someone might try to pass a key with: these, and their abbreviations and extensions.
LONG_KEY_OPTIONS = ("--key", "--median-key", "--secret")
SHORT_KEY_OPTION = "-k"
KEY_FILE_OPTION = "--key-file"
# An unknown option is named in an error when it reads like one (`--key-f`); a key typed after
# `--` (`--mk_live_...`) does not.
_OPTION_LIKE = re.compile(r"--[a-z][a-z-]{0,24}")


def is_key_option(argument: str) -> bool:
    """--key, -kSECRET, --median-key=SECRET, --secret, and every abbreviation or extension of them but --key-file.

    In any case and with `_` for `-`: argparse would refuse `--KEY` or `--median_key` as unknown,
    but the one who typed it meant a key, and is told where it goes.
    """
    argument = argument.lower().replace("_", "-")
    if argument.startswith("--"):
        name = argument.split("=", 1)[0]
        if len(name) < len("--k") or (KEY_FILE_OPTION.startswith(name) and len(name) > len("--key")):
            return False  # `--`, and --key-file or its abbreviations, which argparse refuses on its own
        return any(option.startswith(name) or name.startswith(option) for option in LONG_KEY_OPTIONS)
    return argument.startswith(SHORT_KEY_OPTION)


class BadArguments(Exception):
    """The command line was used wrongly; str() is the line to print, with no value of the command line in it."""


class _Refused(Exception):
    def __init__(self, prog: str, message: str) -> None:
        super().__init__(message)
        self.prog = prog
        self.message = message


class QuietParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are raised to parse_quietly(), which hides the values in them."""

    def error(self, message: str) -> NoReturn:
        raise _Refused(self.prog, message)


def parse_quietly(parser: QuietParser, argv: Sequence[str]) -> argparse.Namespace:
    """parser.parse_args(argv); BadArguments, naming options but no values, where argparse would print an error."""
    try:
        return parser.parse_args(argv)
    except _Refused as refused:
        message = without_values(refused.message, argv, option_names(parser))
        raise BadArguments(f"{refused.prog}: error: {message} (see {refused.prog} --help)") from None


def option_names(parser: argparse.ArgumentParser) -> set[str]:
    """Every option string and command name of the parser and its subcommands: what may be shown."""
    names: set[str] = set()
    for action in parser._actions:  # argparse has no public list of a parser's options
        names.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for name, subcommand in action.choices.items():
                names.add(name)
                names.update(option_names(subcommand))
    return names


def without_values(message: str, argv: Sequence[str], known: set[str]) -> str:
    """argparse's message with every value from the command line replaced by "…".

    Option and command names stay, so the message still says what was wrong.
    """
    hidden: dict[str, str] = {}
    for argument in argv:
        if argument in known or not argument:
            continue
        if argument.startswith("--"):
            name, equals, value = argument.partition("=")
            shown = name if _OPTION_LIKE.fullmatch(name) else "--…"
            hidden[argument] = f"{shown}=…" if equals else shown
            hidden[value] = "…"
        elif argument.startswith("-") and len(argument) > 2:
            hidden[argument], hidden[argument[2:]] = f"{argument[:2]}…", "…"
        elif argument != "-":
            hidden[argument] = "…"
    for value in sorted(hidden, key=len, reverse=True):
        if value:
            # Whole words only: a short value like "1" must not eat the digits of the message's own text.
            message = re.sub(rf"(?<![^\s'\"=,]){re.escape(value)}(?![^\s'\",])", hidden[value], message)
    return message
