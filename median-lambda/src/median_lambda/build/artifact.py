"""The Lambda artifact, built into the folder `sam build` names: `median build-artifact ARTIFACTS_DIR`.

`sam build` runs the project's Makefile target build-MedianToolsFunction (template.yaml's
`BuildMethod: makefile`) in the project's folder, with ARTIFACTS_DIR set; the target runs
`median build-artifact`, which checks the tools first (`median check --no-local`), then that every
package tools/ imports, lazily too, is one the function will have (median_lambda.build.check_imports),
and then builds:

- handler/ and tools/, copied by what belongs in a function (median_lambda.build.sources: Python
  modules, tools/settings.toml, what pyproject.toml's [tool.median.artifact] include names), so
  tools/settings.local.toml and any editor's backup of it stay behind, following a link to a folder
  and stopping at one it cannot follow; and median_lambda's runtime, without its developer's parts
  (DEVELOPER_PARTS), from the median-lambda uv.lock pins, installed apart for the build
  (median_lambda.project.lock.install_locked_library: the index's wheel with its hash checked, the
  locked commit, or the locked folder), never from the venv: and the build stops when the venv's
  differs from it, as a copy installed there by hand would, since the tests ran on the venv's;
- the packages uv.lock puts into the function (median_lambda.project.lock, artifact-requirements),
  each file checked against its hash, with no resolution of their own (--no-deps): exactly the
  locked versions, as Linux wheels for the template's architecture and its Runtime's CPython (python3.13:
  3.13), whatever this machine is. SAM does not tell a makefile build either: sam_config reads them.
- their bytecode, when this build runs the runtime's Python (median_lambda.build.compile);
- median_lambda/manifest.json, what GET serves, median_lambda/stages.txt, the stages a container
  may run as (settings.toml's tables, read at start without a TOML parser), and
  median_lambda/tool_modules.json, the module of tools/ each tool lives in (a cold POST imports that
  one alone); then each module it names is imported alone, from the artifact, in a new process, as a
  cold POST does, and the build stops where the other modules' import changes what it holds
  (median_lambda.build.cold_imports).

The installer's console scripts (bin/), which nothing in Lambda runs, and uv's own .lock are removed.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from median_lambda.build.compile import precompile
from median_lambda.build.sources import copy_sources, library_differences, running_library
from median_lambda.project.lock import LockError, artifact_requirements, install_locked_library, uv
from median_lambda.project.sam_config import TEMPLATE, lambda_architecture, runtime_python, wheel_machine
from median_lambda.protocol import PREBUILT_MANIFEST_FILE, PREBUILT_STAGES_FILE, PREBUILT_TOOL_MODULES_FILE

ROOT = Path.cwd()  # the project's: sam build runs the build in its folder
# What pip's --target install leaves that no function runs.
INSTALLER_LEFTOVERS = ("bin", ".lock")


class BuildFailed(Exception):
    """The artifact could not be built; the message says which step failed and why."""


def build_artifact(artifact: Path, root: Path = ROOT) -> None:
    """Build the function's artifact into `artifact`, emptied first; BuildFailed naming the step that failed."""
    imports = import_problems_of(root)
    if imports:
        listed = "\n".join(imports)
        raise BuildFailed(
            f"{listed}\n{len(imports)} import(s) of tools/ would fail in the deployed function, which holds only "
            "[project].dependencies (uv.lock) beside the Lambda runtime's boto3"
        )
    shutil.rmtree(artifact, ignore_errors=True)
    artifact.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="median-library-") as scratch:
        library = locked_library_apart(Path(scratch), root)
        copied = copy_sources(artifact, root, library)
    for line in copied.said:
        print(line)
    if copied.refused:
        listed = "\n".join(copied.refused)
        raise BuildFailed(f"{listed}\n{copied.stop()}")
    install_locked_packages(artifact, root)
    if not precompile(artifact, runtime_python(root / TEMPLATE.name)):
        raise BuildFailed(f"compiling the artifact's modules in {artifact} failed (above)")
    for leftover in INSTALLER_LEFTOVERS:
        path = artifact / leftover
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    write_prebuilt_files(artifact / "median_lambda")
    from median_lambda.build.cold_imports import cold_import_problems

    alone = cold_import_problems(artifact)
    if alone:
        listed = "\n".join(alone)
        raise BuildFailed(
            f"{listed}\nThe build stops: {len(alone)} module(s) of tools/ hold, deployed, other than they do here"
        )


def locked_library_apart(scratch: Path, root: Path = ROOT) -> Path:
    """The median-lambda uv.lock pins, installed into `scratch`, which the build ships; BuildFailed where the
    venv's, which the tests and this build run, is not it byte for byte."""
    try:
        locked = install_locked_library(scratch / "library", root)
    except LockError as error:
        raise BuildFailed(str(error)) from None
    differences = library_differences(running_library(), scratch / "library", runtime=False)
    if differences:
        shown = "; ".join(differences[:5]) + (f"; and {len(differences) - 5} more" if len(differences) > 5 else "")
        raise BuildFailed(
            f"the median_lambda in this venv ({running_library() / 'median_lambda'}) is not {locked}, which uv.lock "
            f"pins and the function would run: {shown}. Your tests ran on the venv's. Put the locked one back "
            "(rm .venv/.installed; make install), or pin yours where uv.lock can (pyproject.toml's [tool.uv.sources]) "
            "and make lock"
        )
    return scratch / "library"


def import_problems_of(root: Path) -> list[str]:
    """Each import of tools/ the deployed function could not satisfy (median_lambda.build.check_imports)."""
    from importlib.metadata import packages_distributions

    from median_lambda.build.check_imports import deployed_packages, import_problems, imports_of_tools

    template = root / TEMPLATE.name
    machine = wheel_machine(lambda_architecture(template))
    deployed = deployed_packages(machine, runtime_python(template), root)
    return import_problems(imports_of_tools(root), packages_distributions(), deployed)


def install_locked_packages(artifact: Path, root: Path = ROOT) -> None:
    """uv.lock's packages for the function, as Linux wheels for its architecture and Python, into `artifact`."""
    machine = wheel_machine(lambda_architecture(root / TEMPLATE.name))
    python = runtime_python(root / TEMPLATE.name)
    with tempfile.TemporaryDirectory(prefix="median-artifact-") as scratch:
        requirements = Path(scratch) / "requirements.txt"
        requirements.write_text(artifact_requirements(project=root), encoding="utf-8")
        installed = uv(
            "pip",
            "install",
            "--quiet",
            "--python",
            sys.executable,
            "--target",
            str(artifact),
            "--python-platform",
            f"{machine}-manylinux2014",
            "--python-version",
            python,
            "--only-binary",
            ":all:",
            "--require-hashes",
            "--no-deps",
            "--requirement",
            str(requirements),
            project=None,
        )
    if installed.returncode != 0:
        raise BuildFailed(f"installing uv.lock's packages for {machine} failed: {installed.stderr.strip()}")


def write_prebuilt_files(runtime: Path) -> None:
    """GET's manifest, byte for byte as it answers; the stages settings.toml declares, one a line; and which
    module of tools/ holds each tool, so that a cold POST imports only the module of the tool it runs."""
    import json

    from median_lambda.authoring.registry import load_tools, tool_modules
    from median_lambda.authoring.settings import ConfigurationError, known_stages
    from median_lambda.manifest.build import build_manifest
    from median_lambda.request.responses import to_json

    manifest, problems = build_manifest(load_tools())
    if problems:  # `median check` stops a build before this; a build run without it stops here
        raise BuildFailed("the tools break Median's rules: " + "; ".join(str(problem) for problem in problems))
    try:
        stages = known_stages()
    except ConfigurationError as error:
        raise BuildFailed(str(error)) from None
    (runtime / PREBUILT_MANIFEST_FILE).write_bytes(to_json(manifest).encode("utf-8") + b"\n")
    (runtime / PREBUILT_STAGES_FILE).write_text("\n".join(stages) + "\n", encoding="utf-8")
    (runtime / PREBUILT_TOOL_MODULES_FILE).write_text(
        json.dumps(tool_modules(), sort_keys=True) + "\n", encoding="utf-8"
    )
