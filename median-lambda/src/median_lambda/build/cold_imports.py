"""Each module of tools/ imported alone from the artifact, as a cold POST does: it holds what it held here.

A deployed function's POST imports only the module the build recorded for the tool it runs
(median_lambda/tool_modules.json; median_lambda.authoring.registry.load_tools_for), while tests, `make serve`
and the build itself import every module of tools/. A module that adds to another's state as it is
imported (a check appended to `health.CHECKS`, an entry put into a shared registry, a tool's
description read from a table another module fills) then works everywhere but deployed, where the
module it adds to is imported without it.

So the build runs, for each module it recorded, a new Python process on the artifact's own tools/ and
median_lambda/ (linked ahead of the venv's packages, which hold the same locked versions as Linux
wheels for this machine), which imports that module as a cold POST does, notes what every module of
tools/ then loaded holds (each global, the containers' contents and objects' attributes among it)
and what the tools it registered are (their description, risk and input schema), then imports the
other modules one by one: a change after one of them is a problem, named with the module that made
it. Importing the module alone may fail outright, too, or register none of the tools recorded for
it: both are named. The processes run side by side, one for each core at most.

This file is also what each process runs (`python -P cold_imports.py ...`): its top imports the
standard library only, and the artifact's median_lambda, which has no build/, is imported inside.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

# What each process's import may take: a module that reaches the network as it is imported stops here.
PROBE_TIMEOUT_SECONDS = 120
# How deep a global's contents are followed: a dict of lists of objects' attributes, and no further.
_DEPTH = 4
_PRIMITIVES = (str, bytes, int, float, complex, bool, type(None))


def cold_import_problems(artifact: Path) -> list[str]:
    """One line per module of tools/ that holds, imported alone from `artifact` as a cold POST does, other than
    it holds after every module's import."""
    from median_lambda.protocol import PREBUILT_TOOL_MODULES_FILE

    recorded = json.loads((artifact / "median_lambda" / PREBUILT_TOOL_MODULES_FILE).read_text(encoding="utf-8"))
    package = str(recorded["package"])
    # One process for each module: what the build recorded it holds, its tools by name (and "" for the diagnostics).
    calls: dict[str, list[str]] = {}
    for tool, module in sorted(recorded["tools"].items()):
        calls.setdefault(module, []).append(tool)
    if recorded.get("diagnostics"):
        calls.setdefault(recorded["diagnostics"], []).append("")
    if not calls:
        return []
    with tempfile.TemporaryDirectory(prefix="median-cold-imports-") as scratch:
        overlay = Path(scratch)
        for name in {"median_lambda", "handler", package.split(".")[0]}:
            if (artifact / name).is_dir():
                (overlay / name).symlink_to((artifact / name).resolve(), target_is_directory=True)
        with ThreadPoolExecutor(max_workers=max(1, min(len(calls), os.cpu_count() or 1))) as pool:
            found = pool.map(lambda call: _probe(overlay, package, *call), sorted(calls.items()))
            return [problem for problems in found for problem in problems]


def _probe(overlay: Path, package: str, module: str, held: list[str]) -> list[str]:
    """Run this file on `module` in a new process, from `overlay`: its problem lines."""
    from median_lambda.protocol import TOOLS_PACKAGE_ENV

    environment = {name: value for name, value in os.environ.items() if name not in ("PYTHONPATH", "AWS_SAM_LOCAL")}
    # As deployed: the checks only a machine runs are off.
    environment |= {"AWS_LAMBDA_FUNCTION_NAME": "median-build-cold-imports", TOOLS_PACKAGE_ENV: package}
    try:
        probed = subprocess.run(  # noqa: S603 - this interpreter, on this file, with our own arguments
            [sys.executable, "-P", __file__, str(overlay), module, *held],
            cwd=overlay,
            env=environment,
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return [
            f"{_file_of(module)}: importing it alone took over {PROBE_TIMEOUT_SECONDS} s (does it reach a network?)"
        ]
    try:
        problems = json.loads(probed.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        said = (probed.stderr.strip().splitlines() or ["(nothing said)"])[-1]
        return [f"{_file_of(module)}: importing it alone, as a cold POST does, failed: {said}"]
    return [str(problem) for problem in problems]


def _file_of(module: str) -> str:
    """tools/orders.py for tools.orders (a package's own file, its __init__.py, is named for the package)."""
    return module.replace(".", "/") + ".py"


# --- What runs in each new process ---------------------------------------------------------------


def fingerprint(value: Any, depth: int = 0) -> Any:
    """What a global holds, comparable within this process: primitives by value, containers by what they hold,
    an object by its identity and its attributes, a function or class by its identity."""
    if isinstance(value, _PRIMITIVES):
        return repr(value)
    if isinstance(value, ModuleType | type) or callable(value) or depth >= _DEPTH:
        return f"{type(value).__qualname__}@{id(value)}"
    if isinstance(value, dict):
        return [type(value).__qualname__, [[fingerprint(key, depth + 1), fingerprint(item, depth + 1)]
                                           for key, item in list(value.items())]]  # fmt: skip
    if isinstance(value, set | frozenset):
        return [type(value).__qualname__, sorted(json.dumps(fingerprint(item, depth + 1)) for item in list(value))]
    if isinstance(value, list | tuple) or type(value).__name__ == "deque":
        return [type(value).__qualname__, [fingerprint(item, depth + 1) for item in list(value)]]
    attributes = getattr(value, "__dict__", None)
    held = fingerprint(dict(attributes), depth + 1) if isinstance(attributes, dict) else None
    return [f"{type(value).__qualname__}@{id(value)}", held]


def module_state(module: ModuleType) -> dict[str, Any]:
    """Each global a module holds (but its dunders, and the modules it imported or a submodule's import added)."""
    return {
        name: fingerprint(value)
        for name, value in list(vars(module).items())
        if not (name.startswith("__") and name.endswith("__")) and not isinstance(value, ModuleType)
    }


def _tools_as_registered(names: list[str]) -> dict[str, Any]:
    from median_lambda.authoring.registry import registry

    described = {}
    for name in names:
        found = registry.find(name)
        if found is not None:
            try:
                model = found.input_model.model_json_schema(by_alias=True, mode="validation")
                schema = json.dumps(model, sort_keys=True)
            except Exception as error:  # a model another module must finish (model_rebuild): a change once it does
                schema = f"no schema: {type(error).__name__}"
            described[name] = [found.description, found.risk, schema]
    return described


def probe(module: str, held: list[str]) -> list[str]:
    """Import `module` as a cold POST of the first of the tools it `held` ("": the diagnostics) does, then the
    package's other modules one by one: a line for each change to what the first import loaded, for a first
    import that fails, and for each of `held` it does not register alone."""
    import pkgutil

    from median_lambda.authoring.registry import describe_failure, registry
    from median_lambda.runtime.env import tools_package

    package = tools_package()
    call = f"a call of {held[0]}" if held[0] else "a diagnostics call"
    try:
        importlib.import_module(package)
        importlib.import_module(module)
    except Exception as error:  # the author's module: named at its line, as the deployed call would fail
        return [f"{describe_failure(error, package)} (importing {_file_of(module)} alone, as {call} does deployed)"]
    missing = [
        name or "the diagnostics" for name in held if not (registry.find(name) if name else registry.diagnostics)
    ]
    if missing:
        return [
            f"{_file_of(module)}: imported alone, as a call of each of its tools does deployed, it does not register "
            f"{', '.join(missing)}, which it holds once every module of {package}/ is imported: register it there"
        ]
    loaded = sorted(name for name in sys.modules if name == package or name.startswith(f"{package}."))
    states = {name: module_state(sys.modules[name]) for name in loaded}
    names = [registered.name for registered in registry.tools]
    registered = _tools_as_registered(names)
    problems = []
    for found in pkgutil.iter_modules(sys.modules[package].__path__):
        other = f"{package}.{found.name}"
        if found.name.startswith("_") or other in sys.modules:
            continue
        try:
            importlib.import_module(other)
        except Exception:  # noqa: S112 - its own call, and `median check`, name it
            continue
        for name in loaded:
            now = module_state(sys.modules[name])
            changed = sorted(key for key in states[name].keys() | now.keys() if states[name].get(key) != now.get(key))
            if changed:
                problems.append(
                    f"{_file_of(name)}: {', '.join(changed)} changes when {_file_of(other)} is imported, which a "
                    f"deployed function never does for {call} (it imports {_file_of(module)} alone): make the change "
                    f"in {_file_of(name)} itself, or import {_file_of(other)} from {_file_of(module)}"
                )
                states[name] = now
        now_registered = _tools_as_registered(names)
        changed_tools = sorted(name for name in registered if registered[name] != now_registered.get(name))
        if changed_tools:
            problems.append(
                f"{_file_of(other)}: importing it changes {', '.join(changed_tools)} as registered by "
                f"{_file_of(module)}, which a deployed function imports alone for {call}"
            )
            registered = now_registered
    return problems


def _main(argv: list[str]) -> int:
    overlay, module, *held = argv
    sys.path.insert(0, overlay)
    # Everything the author's modules print goes to stderr: stdout carries the answer alone.
    real_stdout, sys.stdout = sys.stdout, sys.stderr
    try:
        problems = probe(module, held)
    finally:
        sys.stdout = real_stdout
    # Paths as the author reads them, from the project's root: the scratch folder means nothing to them.
    print(json.dumps([problem.replace(f"{overlay}{os.sep}", "") for problem in problems]))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
