"""Reading the function's settings from its environment, forgiving of a typo but never of a negative."""

from __future__ import annotations

import math
import os

# Settings read on every warm POST, each read once per container: Lambda never changes a running
# container's environment, and the two reads cost a warm POST 5.16x its floor against 4.89x
# (bench/README.md, the 5x target). Tests that switch a setting call forget_settings().
_settings: dict[str, str] = {}


def setting(name: str) -> str:
    """The variable, stripped ("" when unset), as this container first read it."""
    try:
        return _settings[name]
    except KeyError:
        value = _settings[name] = os.environ.get(name, "").strip()
        return value


def forget_settings() -> None:
    """Read every setting anew at its next use: for tests, which change the environment between calls."""
    _settings.clear()


def seconds_from_env(name: str, default: float) -> float:
    """The variable as a number of seconds, at least 0; the default when it is unset or not a finite number."""
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return float(default)
    return max(0.0, value) if math.isfinite(value) else float(default)
