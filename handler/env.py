"""Reading the function's settings from its environment, forgiving of a typo but never of a negative."""

from __future__ import annotations

import math
import os


def seconds_from_env(name: str, default: float) -> float:
    """The variable as a number of seconds, at least 0; the default when it is unset or not a finite number."""
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return float(default)
    return max(0.0, value) if math.isfinite(value) else float(default)
