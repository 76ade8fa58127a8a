"""The function's environment: its settings, forgiving of a typo but never of a negative; whether
it runs in a deployed Lambda; where the tools package is; and a path as the author reads it."""

from __future__ import annotations

import math
import os

from median_lambda.protocol import TOOLS_PACKAGE, TOOLS_PACKAGE_ENV

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


def running_in_deployed_lambda() -> bool:
    """On Lambda itself, not in `sam local`'s container nor on a machine."""
    return bool(os.environ.get("AWS_LAMBDA_FUNCTION_NAME")) and os.environ.get("AWS_SAM_LOCAL") != "true"


def tools_package() -> str:
    """The package served: `tools`, unless $MEDIAN_TOOLS_PACKAGE names another (the framework's tests do)."""
    return setting(TOOLS_PACKAGE_ENV) or TOOLS_PACKAGE


def package_directory(package: str | None = None) -> str | None:
    """The directory of the tools package, without importing it; None if there is no such package."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(package or tools_package())
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return locations[0] if locations else None


def shown_path(filename: str) -> str:
    """A path as an author reads it: relative to the working directory when it is inside it."""
    from pathlib import Path  # not at the top: a cold GET reads the environment, and pathlib is not the floor's

    absolute = Path(filename).absolute()
    here = Path.cwd()
    return str(absolute.relative_to(here)) if absolute.is_relative_to(here) else str(absolute)


def library_version() -> str:
    """median-lambda's version, which `median --version` prints and every log line carries (median_lambda_version)."""
    from median_lambda._version import __version__

    return __version__
