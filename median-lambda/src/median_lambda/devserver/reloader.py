"""`make serve` reloads the tools when a file of the tools package is saved, without a restart.

A reload does what a new Lambda container would, inside the running server and between two
requests (never during one): every module of the tools package is imported anew into an empty
registry (`median_lambda.authoring.registry.reload_tools`), and GET's cached answer is dropped
(`median_lambda.app.forget_manifest`), so the next GET, POST and inspector view serve the saved code.
watchfiles (the dev group's, never the artifact's) tells of a save within ~0.1 s.

A module that fails to import, or registers a model pydantic cannot finish, is said on the
terminal as `tools/<file>.py:<line>: <what is wrong>`; whatever else a reload raises is said in
one line too, and never ends the watching thread. The server keeps running: GET answers 500
`invalid_manifest` with the same lines, the inspector shows them, and the next save that fixes
the file brings the tools back. A setting that cannot be read on this machine (a value missing,
a settings.local.toml that is not TOML) is said at its Settings class's line after each load: the
tools that take it answer 500 until a save fixes it, and every other tool answers.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from median_lambda.authoring.registry import ToolLoadError, describe_failure, reload_tools
from median_lambda.devserver.lambda_runner import one_request_at_a_time
from median_lambda.runtime.env import package_directory, shown_path, tools_package

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from median_lambda.authoring.registry import Registry

# How many times the tools have been loaded: the inspector page reloads itself when this moves.
_revision = 0


def revision() -> int:
    return _revision


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _configuration_here(registry: Registry) -> list[str]:
    """Each Settings class and secret's name the tools take that cannot be read here, with the tools that
    take it; a local file that cannot be read, alone. What a call of those tools would answer 500 for."""
    from median_lambda.authoring.dependencies import names_by_setting
    from median_lambda.authoring.settings import (
        ConfigurationError,
        find,
        local_file_problem,
        settings_taken,
        this_stage_problem,
        where_to_set,
    )

    local = local_file_problem()
    if local is not None:
        return [local]
    try:
        refused = this_stage_problem()
    except ConfigurationError:
        refused = None  # settings.toml itself cannot be read: every class that reads it says so below
    if refused is not None:  # a table removed while serving: every request is refused until it is back
        return [f"{refused}: every request is refused meanwhile"]
    lines = []
    for settings_class in settings_taken(registry.tools):
        try:
            settings_class.current()
        except ConfigurationError as error:
            takers = [each.name for each in registry.tools if any(d is settings_class for _, d in each.dependencies)]
            lines.append(f"{error} (taken by {', '.join(takers)})")
    for named in names_by_setting(registry.tools):
        if find(named.variable) is None:
            lines.append(
                f"{named.location}: {named.variable} is not set, so {named.what}'s name is unknown: "
                f"{where_to_set(named.variable)}"
            )
    return lines


class ToolsReloader:
    """Loads the tools package, and loads it again each time one of its Python files changes."""

    def __init__(self, package: str | None = None, say: Callable[[str], None] = _say) -> None:
        self.package = package or tools_package()
        directory = package_directory(self.package)
        self.directory = Path(directory) if directory else None
        self._say = say
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def folder(self) -> str:
        return f"{shown_path(str(self.directory))}/" if self.directory else self.package

    def load(self, changed: Iterable[str] = ()) -> bool:
        """Import the tools anew and say how it went on the terminal; whether they imported."""
        global _revision
        from median_lambda import app
        from median_lambda.manifest.build import build_manifest

        failures: list[str] = []
        problems: list[str] = []
        configuration: list[str] = []
        with one_request_at_a_time:
            try:
                registry = reload_tools(self.package)
                problems = [str(problem) for problem in build_manifest(registry)[1]]
                configuration = _configuration_here(registry)
            except ToolLoadError as failed:
                registry, failures = None, failed.lines
            except Exception as error:  # the author's code ran: whatever it raised, the reloader lives on
                registry, failures = None, [describe_failure(error, self.package)]
            finally:
                app.forget_manifest()
                _revision += 1
        names = sorted({Path(path).name for path in changed})

        def say(text: str, details: Sequence[str] = ()) -> None:
            head = f"{', '.join(names)} changed: {text}" if names else text[:1].upper() + text[1:]
            self._say("\n".join([head, *(f"  {line}" for line in details)]))

        if registry is None:
            say(f"the tools in {self.folder} failed to import:", failures)
            self._say("GET answers 500 invalid_manifest until this is fixed; saving the file reloads the tools.")
            return False
        count = len(registry.tools)
        served = f"{count} tool{'' if count == 1 else 's'}" if count else "no tools yet"
        if problems:
            say(f"serving {served} from {self.folder}, with {len(problems)} problem(s) Median would refuse:", problems)
        else:
            say(f"serving {served} from {self.folder}; saving a file there reloads them.")
        if configuration:
            self._say(
                "\n".join(
                    [
                        f"The configuration on this machine has {len(configuration)} problem(s); the tools that take "
                        "it answer 500 internal_error until it is fixed, and every other tool answers:",
                        *(f"  {line}" for line in configuration),
                    ]
                )
            )
        return True

    def start(self) -> None:
        """Watch the package's folder in a thread of its own, reloading on every change to a .py or .toml file."""
        directory = self.directory
        if directory is None:
            self._say(f"No package {self.package} to watch: the tools will not reload.")
            return
        try:
            import watchfiles
        except ImportError:
            self._say("watchfiles is not installed (make install): the tools will not reload on save.")
            return

        def watch() -> None:
            # .toml too: settings.toml and settings.local.toml are the tools' configuration
            # (median_lambda/authoring/settings.py).
            watched = watchfiles.PythonFilter(extra_extensions=(".toml",))
            for changes in watchfiles.watch(
                directory, watch_filter=watched, stop_event=self._stop, raise_interrupt=False
            ):
                try:
                    self.load(path for _, path in changes)
                except Exception as error:  # saying it failed: the next save must still be seen
                    self._say(f"Reloading failed: {describe_failure(error, self.package)}")

        self._thread = threading.Thread(target=watch, name="tools-reloader", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
