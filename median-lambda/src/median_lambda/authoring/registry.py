"""The tools an endpoint serves: what `@tool` records, and the loader that imports `tools/`.

A deployed function imports only the module that holds the tool a call names, as the build
recorded it (`tool_modules`, written beside the prebuilt manifest: `load_tools_for`); a source
checkout (`make serve`, the tests) imports the whole package.

A tool module that fails to import is the author's mistake, so the loader names it where they
made it: `tools/<file>.py:<line>: <what is wrong>`, one line per broken module, in a
`ToolLoadError` that `make check`, `make serve`, the test suite and GET all show as it is. So is
an input model that pydantic cannot finish once the modules have run (median_lambda/authoring/registration.py).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from median_lambda.protocol import PREBUILT_TOOL_MODULES_FILE
from median_lambda.runtime.env import package_directory, running_in_deployed_lambda, shown_path, tools_package

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import TracebackType

    from pydantic import BaseModel


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    risk: str
    input_model: type[BaseModel]
    function: Callable[..., Any]
    model_parameter: str
    context_parameter: str | None
    idempotent: bool = True
    # `async def`: awaited on the container's event loop rather than called.
    is_async: bool = False
    # Where `@tool` declared it, (file, line): what a problem about it points at.
    declared: tuple[str, int] | None = None
    # Parameters the framework fills, never in the schema: (name, a Settings subclass or a Secret/Parameter).
    dependencies: tuple[tuple[str, Any], ...] = ()

    @property
    def location(self) -> str:
        """Where `@tool` declared it, as "tools/orders.py:25"; empty if unknown."""
        return f"{shown_path(self.declared[0])}:{self.declared[1]}" if self.declared else ""


@dataclass
class Registry:
    # A list, not a dict: two tools with one name must both reach the sync-rule checker.
    tools: list[Tool] = field(default_factory=list)
    diagnostics: list[Callable[..., Any]] = field(default_factory=list)

    def find(self, name: str) -> Tool | None:
        for registered in self.tools:
            if registered.name == name:
                return registered
        return None


class ToolDefinitionError(TypeError):
    """`@tool` or `@diagnostics` cannot serve this function: raised at import, naming where it was declared."""

    def __init__(self, location: str, reason: str) -> None:
        super().__init__(f"{location}: {reason}")
        self.location = location
        self.reason = reason


class ToolLoadError(Exception):
    """The tools package failed to import. Its message is one `file:line: what is wrong` line per broken module.

    `module` names the one module that failed, where only it was imported (`load_tools_for`, in a
    deployed function): then only the tools it holds cannot run. None: the package as a whole.
    """

    def __init__(self, lines: list[str], module: str | None = None) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines
        self.module = module


registry = Registry()


# Each package imported so far, with what went wrong (None: nothing). A failure is kept, not
# retried: importing a half-run module again would register its first tools a second time.
_loaded: dict[str, list[str] | None] = {}
# The same, module by module: each module of a tools package imported so far, and the package
# itself, with the problem line of its failure (None: it imported).
_modules: dict[str, str | None] = {}
# Which module registered each tool and the diagnostics, by package, as the package was imported:
# what `tool_modules` reports for the build to write.
_registered_by: dict[str, dict[str, str]] = {}
_DIAGNOSTICS = ""  # the diagnostics' key there: no tool's name is empty


def load_tools(package: str | None = None) -> Registry:
    """Import every module of the tools package, but those whose names start with `_`, once.

    Raises ToolLoadError, every time it is asked, if any of them failed to import.
    """
    name = package or tools_package()
    try:
        failure = _loaded[name]
    except KeyError:
        failure = _loaded[name] = _import_package(name)
    if failure is not None:
        raise ToolLoadError(failure)
    return registry


def reload_tools(package: str | None = None) -> Registry:
    """Import the tools package anew into an empty registry, as a fresh container would (`make serve`)."""
    name = package or tools_package()
    for module in [module for module in sys.modules if module == name or module.startswith(f"{name}.")]:
        del sys.modules[module]
    importlib.invalidate_caches()  # a module added since the last import is found
    registry.tools = []
    registry.diagnostics = []
    _loaded.pop(name, None)
    _registered_by.pop(name, None)
    for module in [module for module in _modules if module == name or module.startswith(f"{name}.")]:
        del _modules[module]
    # A saved settings.toml is read anew, as a fresh container would (imports pydantic: make serve only).
    from median_lambda.authoring.settings import forget_configuration

    forget_configuration()
    return load_tools(name)


def _import_package(package: str) -> list[str] | None:
    """Import the package and its public modules; the problem lines, or None if every one imported."""
    import pkgutil  # here: a deployed function's calls import their tool's module alone (load_tools_for)

    registered_before = len(registry.tools)
    failed = _import_module(package, package)
    if failed is not None:  # the author's __init__.py, or no such package
        return [failed]
    imported = sys.modules[package]
    directory = next(iter(imported.__path__), None)
    lines: list[str] = []
    for module in pkgutil.iter_modules(imported.__path__):
        if module.name.startswith("_"):
            continue
        line = _import_module(f"{package}.{module.name}", package)
        if line is not None and line not in lines:  # a module importing a broken one fails at the same line
            lines.append(line)
    if not running_in_deployed_lambda() and len(registry.tools) > registered_before:
        # What only shows once the modules have run (a postponed annotation naming nothing, a
        # schema that cannot be built): checked where it costs no cold start (median_lambda/authoring/registration.py).
        from median_lambda.authoring.registration import registration_problems

        try:
            found = registration_problems(registry.tools[registered_before:])
        except Exception as error:  # the checks run the author's models: a failure there is still one line
            found = [_describe(error, directory)]
        lines.extend(line for line in found if line not in lines)
    return lines or None


def _import_module(module: str, package: str) -> str | None:
    """Import one module of the tools package (or the package itself), once; its problem line, or None.

    The tools it registers are recorded as its own (`tool_modules`): importing it alone, in a new
    process, registers them again. A failure is kept, as `_loaded` keeps a package's.
    """
    if module in _modules:
        return _modules[module]
    tools_before, diagnostics_before = len(registry.tools), len(registry.diagnostics)
    try:
        importlib.import_module(module)
    # Any mistake in the author's module, a sys.exit() at import too (argparse at module level): name it. Not
    # a KeyboardInterrupt: the developer's Ctrl+C, while a test session or make serve imports the tools.
    except (Exception, SystemExit) as error:
        directory = package_directory(package)
        leaf = module.rpartition(".")[2]
        fallback = None if module == package else str(Path(directory or "", f"{leaf}.py"))
        _modules[module] = _describe(error, directory, fallback=fallback)
    else:
        _modules[module] = None
    owners = _registered_by.setdefault(package, {})
    for registered in registry.tools[tools_before:]:
        owners.setdefault(registered.name, module)
    if len(registry.diagnostics) > diagnostics_before:
        owners.setdefault(_DIAGNOSTICS, module)
    return _modules[module]


def tool_modules(package: str | None = None) -> dict[str, Any]:
    """Which module of the tools package holds each tool, and the diagnostics (None: there are none):
    what `sam build` writes beside the prebuilt manifest, for `load_tools_for`. Imports every module;
    raises ToolLoadError as `load_tools` does."""
    name = package or tools_package()
    load_tools(name)
    owners = _registered_by.get(name, {})
    return {
        "package": name,
        "tools": {registered: module for registered, module in owners.items() if registered != _DIAGNOSTICS},
        "diagnostics": owners.get(_DIAGNOSTICS),
    }


# Where the build wrote `tool_modules`: beside median_lambda/app.py and the prebuilt manifest. os.path,
# as app.py's own files: a cold start reads it.
PREBUILT_TOOL_MODULES = os.path.join(os.path.dirname(os.path.dirname(__file__)), PREBUILT_TOOL_MODULES_FILE)  # noqa: PTH118, PTH120
# The file as read, once per container: None before the first read; False where there is none.
_prebuilt: dict[str, Any] | bool | None = None


def _prebuilt_tool_modules(package: str) -> dict[str, Any] | None:
    """The build's `tool_modules` for `package`; None in a source checkout, or for another package."""
    global _prebuilt
    if _prebuilt is None:
        try:
            with open(PREBUILT_TOOL_MODULES, encoding="utf-8") as file:  # noqa: PTH123 - see PREBUILT_TOOL_MODULES
                read = json.load(file)
        except (OSError, ValueError):
            read = None
        valid = isinstance(read, dict) and isinstance(read.get("tools"), dict)
        _prebuilt = read if valid else False
    if isinstance(_prebuilt, dict) and _prebuilt.get("package") == package:
        return _prebuilt
    return None


def load_tools_for(tool: str | None, package: str | None = None) -> Registry:
    """The registry, holding `tool` (its name; None: the diagnostics) if the tools package has it.

    Where the build wrote which module holds each (a deployed function), only that module is
    imported: a cold POST never imports the modules, nor what they import, of the tools it does
    not run; a name the build never saw imports nothing. Elsewhere every module is, as
    `load_tools` does. Raises ToolLoadError if a module it imports fails to.
    """
    name = package or tools_package()
    if name in _loaded:  # every module imported already (a source checkout, or SnapStart's hooks)
        return load_tools(name)
    written = _prebuilt_tool_modules(name)
    if written is None:
        return load_tools(name)
    module = written["tools"].get(tool) if tool is not None else written.get("diagnostics")
    if not isinstance(module, str):
        return registry
    failed = _import_module(name, name) or _import_module(module, name)
    if failed is not None:
        raise ToolLoadError([failed], module)
    if not (registry.find(tool) if tool is not None else registry.diagnostics):
        return load_tools(name)  # not where the build saw it: a file changed after the build
    return registry


def describe_failure(error: BaseException, package: str | None = None) -> str:
    """`file:line: what is wrong` for an error raised by the author's code in the tools package."""
    return _describe(error, package_directory(package))


def _describe(error: BaseException, directory: str | None, fallback: str | None = None) -> str:
    """`file:line: what is wrong`, at the last place inside the tools package that the error passed."""
    if isinstance(error, ToolDefinitionError):
        return str(error)  # it knows the author's line already
    what = f"{type(error).__name__}: {_one_line(error)}" if str(error) else type(error).__name__
    if isinstance(error, SyntaxError) and _inside(error.filename, directory):
        what = f"{type(error).__name__}: {error.msg}"
        return f"{shown_path(error.filename or '')}:{error.lineno}: {what}"
    frame = _last_frame_inside(error.__traceback__, directory)
    if frame is not None and type(error).__module__.startswith("pydantic."):
        # pydantic refuses a model at its `class` line: the field it is about is the author's line.
        from median_lambda.authoring.registration import refusal_at_class

        refused = refusal_at_class(error, *frame)
        if refused is not None:
            return f"{shown_path(frame[0])}:{refused[0]}: {refused[1]}"
    if frame is not None:
        return f"{shown_path(frame[0])}:{frame[1]}: {what}"
    return f"{shown_path(fallback)}: {what}" if fallback else what


def _one_line(error: BaseException) -> str:
    """The message on one line. pydantic's run to paragraphs: the first says what is wrong, the last
    is a link to its page, kept; the ones between are advice for writers of pydantic types."""
    paragraphs = [" ".join(part.split()) for part in str(error).strip().split("\n\n")]
    link = paragraphs[-1].removeprefix("For further information visit ") if len(paragraphs) > 1 else ""
    head = paragraphs[0]
    return f"{head} (see {link})" if link.startswith("https://") else head


def _inside(filename: str | None, directory: str | None) -> bool:
    if not filename or not directory:
        return False
    return Path(filename).absolute().is_relative_to(Path(directory).absolute())


def _last_frame_inside(trace: TracebackType | None, directory: str | None) -> tuple[str, int] | None:
    found = None
    for frame in traceback.extract_tb(trace):
        if _inside(frame.filename, directory) and frame.lineno is not None:
            found = (frame.filename, frame.lineno)
    return found
