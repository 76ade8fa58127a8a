"""Check what `sam build` made before it is deployed: `median check-artifact [DIR]`, which CI runs after the build.

It fails (exit 1, one line per problem) unless the artifact holds handler/ and tools/ and
the prebuilt manifest GET serves, exactly the packages and versions uv.lock puts into it, the
runtime of the median-lambda uv.lock pins byte for byte (installed apart from the lock to compare:
median_lambda.project.lock.install_locked_library), every
package its tools import, lazily too (median_lambda/build/check_imports.py), or the Lambda runtime's boto3,
every compiled module is built for the template's architecture and its Runtime's CPython, and
nothing of the workspace (tests, virtualenv, caches, the dev server) came along. Nothing
local may be anywhere in it (tools/settings.local.toml, an editor's backup or swap file of
any file, a dotfile), and handler/ and tools/ hold only what the build copies by its rules
(median_lambda/build/sources.py: Python modules, tools/settings.toml and what pyproject.toml's
[tool.median.artifact] include names). It prints the size either way.
"""

from __future__ import annotations

import io
import json
import re
import sys
import zipfile
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Literal

from median_lambda.build.sources import DEVELOPER_PARTS, library_differences
from median_lambda.project.lock import LockError, install_locked_library, locked_artifact_versions, runtime_packages
from median_lambda.project.sam_config import lambda_architecture, runtime_python, wheel_machine
from median_lambda.protocol import PREBUILT_MANIFEST_FILE, PREBUILT_STAGES_FILE, PREBUILT_TOOL_MODULES_FILE

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

ROOT = Path.cwd()  # the project's: every command runs in its root, as make runs them
DEFAULT_ARTIFACT = ROOT / ".aws-sam" / "build" / "MedianToolsFunction"
REQUIRED = (
    "median_lambda/app.py",
    "tools/__init__.py",
    "median_lambda/app.py",
    "median_lambda/_version.py",
    "median_lambda/manifest.json",
)
# The workspace's own directories: none belongs in the function.
WORKSPACE_ONLY = ("tests", ".venv", "events", "scripts", ".aws-sam", ".git")
CACHES = (".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis")
# What the build writes beside the library's runtime, besides what it copies (median_lambda/protocol.py names each).
BUILT_FILES = tuple(
    f"median_lambda/{name}" for name in (PREBUILT_MANIFEST_FILE, PREBUILT_STAGES_FILE, PREBUILT_TOOL_MODULES_FILE)
)
# ELF e_machine values: what a shared object was compiled for.
ELF_MACHINES = {183: "aarch64", 62: "x86_64"}
UNZIPPED_LIMIT_BYTES = 250 * 1024 * 1024  # Lambda's limit for a function and its layers, unzipped


def elf_machine(path: Path) -> str | None:
    """The machine a shared object was built for, from its ELF header; None if it is not ELF."""
    with path.open("rb") as binary:
        header = binary.read(20)
    if len(header) < 20 or header[:4] != b"\x7fELF":
        return None
    byteorder: Literal["little", "big"] = "little" if header[5] == 1 else "big"
    number = int.from_bytes(header[18:20], byteorder)
    return ELF_MACHINES.get(number, f"e_machine {number}")


def python_tag(python: str) -> str:
    """The tag of CPython `python`'s compiled modules and bytecode: cpython-313 for "3.13"."""
    return f"cpython-{python.replace('.', '')}"


def compiled_problems(artifact: Path, machine: str, python: str) -> list[str]:
    problems = []
    tag = python_tag(python)
    objects = sorted(artifact.rglob("*.so"))
    if not any(path.parent.name == "pydantic_core" for path in objects):
        problems.append("pydantic_core has no compiled module: the runtime wheels were not installed")
    for path in objects:
        name = path.relative_to(artifact)
        built_for = elf_machine(path)
        if built_for != machine:
            problems.append(f"{name} is built for {built_for or 'no ELF machine'}, not {machine}")
        if ".cpython-" in path.name and f".{tag}-" not in path.name:
            problems.append(f"{name} is built for another Python than {python} ({tag})")
        elif ".cpython-" in path.name and f"-{machine}-linux-gnu" not in path.name:
            problems.append(f"{name} is tagged for another platform than {machine}-linux-gnu")
    return problems


def installed_versions(artifact: Path) -> dict[str, str]:
    """Normalised name -> version of each package installed in the artifact, from its .dist-info folder."""
    versions = {}
    for folder in artifact.glob("*.dist-info"):
        # {name}-{version}.dist-info, the name escaped to letters, digits, `_` and `.` (neither has a `-`).
        name, _, version = folder.name.removesuffix(".dist-info").partition("-")
        versions[re.sub(r"[-_.]+", "-", name).lower()] = version
    return versions


def locked_version_problems(artifact: Path, locked: Mapping[str, str]) -> list[str]:
    """Every way the artifact's packages differ from what uv.lock puts into it."""
    installed = installed_versions(artifact)
    rebuild = "build again (make build) from the committed uv.lock"
    problems = [
        f"{name} {installed[name]} is in the artifact, uv.lock has {version}: {rebuild}"
        for name, version in sorted(locked.items())
        if name in installed and installed[name] != version
    ]
    problems += [
        f"{name} {version} is locked for the artifact but not in it: {rebuild}"
        for name, version in sorted(locked.items())
        if name not in installed
    ]
    problems += [
        f"{name} {version} is in the artifact, but uv.lock does not put it there ([project].dependencies and the "
        f"tracing group): add it to pyproject.toml's dependencies and run make lock, or {rebuild}"
        for name, version in sorted(installed.items())
        if name not in locked
    ]
    return problems


def manifest_problems(artifact: Path) -> list[str]:
    from median_lambda.authoring.registry import load_tools
    from median_lambda.manifest.build import build_manifest

    path = artifact / "median_lambda" / "manifest.json"
    if not path.is_file():
        return []  # already reported as missing
    try:
        prebuilt = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as error:
        return [f"median_lambda/manifest.json is not JSON: {error}"]
    expected, _ = build_manifest(load_tools())
    if prebuilt != expected:
        return ["median_lambda/manifest.json differs from the manifest of the tools in tools/: build again"]
    return []


def library_problems(artifact: Path, library: Path | None = None) -> list[str]:
    """The artifact's median_lambda is, module for module and byte for byte, the runtime of the median-lambda
    uv.lock pins: `library` is a folder holding it (None: installed from the lock into a scratch folder)."""
    import tempfile

    if not (artifact / "median_lambda").is_dir():
        return []  # already reported as missing
    with tempfile.TemporaryDirectory(prefix="median-library-") as scratch:
        pinned = "the median-lambda uv.lock pins"
        if library is None:
            library = Path(scratch) / "library"
            try:
                pinned = f"{install_locked_library(library)}, which uv.lock pins"
            except LockError as error:
                return [f"median_lambda could not be compared with the median-lambda uv.lock pins: {error}"]
        differences = library_differences(artifact, library)
    return [f"median_lambda/{difference}, against {pinned}: build again (make build)" for difference in differences]


def developer_parts_problems(artifact: Path) -> list[str]:
    """The library's parts that never run on Lambda: its testing kit, CLI, dev server and build."""
    return [
        f"median_lambda/{part} is in the artifact: a developer's part of median-lambda, never deployed"
        for part in DEVELOPER_PARTS
        if (artifact / "median_lambda" / part).exists()
    ]


def stray_problems(artifact: Path, python: str | None = None) -> list[str]:
    """What came along that no function runs; `python`: the runtime's (template.yaml's, by default)."""
    from median_lambda.devserver.artifact_check import dev_server_parts_in

    tag = python_tag(python or runtime_python())
    problems = [f"{name}/ is in the artifact" for name in WORKSPACE_ONLY if (artifact / name).exists()]
    problems += developer_parts_problems(artifact)
    # The dev server's own, stricter look: its files anywhere, and anything naming the inspector's route.
    problems += [f"{part} is part of the local dev server" for part in dev_server_parts_in(artifact)]
    problems += local_problems(artifact)
    for cache in CACHES:
        problems += [f"{path.relative_to(artifact)} is in the artifact" for path in artifact.rglob(cache)]
    # Bytecode the runtime's Python made (median_lambda/build/compile.py) spares every cold start a
    # compile; any other .pyc is this machine's and would never be used.
    problems += [
        f"{path.relative_to(artifact)} is in the artifact: bytecode of another Python than {tag}"
        for path in artifact.rglob("*.pyc")
        if f".{tag}." not in path.name
    ]
    return problems


def local_problems(artifact: Path, included: tuple[str, ...] | None = None) -> list[str]:
    """A machine's or an editor's file anywhere in the artifact; in handler/ or tools/, what the build would not copy.

    A machine's own configuration values (docs/configuration.md) are ignored by a deployed
    function, but they may hold a developer's dummy secrets or internal URLs; an editor's backup
    of them holds the same. None ships.
    """
    from median_lambda.build.sources import PACKAGES, belongs, included_patterns, is_local, pattern_problem

    # Only what the build applies: a pattern it refuses (one leading out of tools/) ships nothing.
    patterns = tuple(
        pattern
        for pattern in (included_patterns() if included is None else included)
        if pattern_problem(pattern, PACKAGES) is None
    )
    problems = []
    for path in sorted(artifact.rglob("*")):
        relative = PurePosixPath(path.relative_to(artifact).as_posix())
        if relative.parts[0] in WORKSPACE_ONLY:
            continue  # named once already, as the workspace's
        if is_local(relative):
            if not is_local(relative.parent):  # a local folder is named once, not with each file in it
                problems.append(
                    f"{relative} is in the artifact: a machine's local values or an editor's copy of a file, which "
                    "the build must leave behind"
                )
        elif (
            path.is_file()
            and relative.parts[0] in PACKAGES
            and "__pycache__" not in relative.parts
            and relative.as_posix() not in BUILT_FILES
            and not belongs(relative, patterns)
        ):
            problems.append(
                f"{relative} is in the artifact, but the build copies only Python modules and the data files it "
                "names (median_lambda/build/sources.py)"
            )
    return problems


def import_problems(artifact: Path, runtime: Collection[str] | None = None) -> list[str]:
    """Each import of the artifact's tools/ that it cannot satisfy: not in the artifact, nor among the
    packages the Lambda runtime provides (`runtime`, normalised names; boto3's, as uv.lock locks it, by default)."""
    from importlib.metadata import packages_distributions

    from packaging.utils import canonicalize_name

    from median_lambda.build.check_imports import THE_FIX, imports_of_tools

    def in_artifact(name: str) -> bool:
        return (artifact / name).is_dir() or (artifact / f"{name}.py").is_file() or any(artifact.glob(f"{name}.*so"))

    missing = [imported for imported in imports_of_tools(artifact) if not in_artifact(imported.top)]
    if not missing:
        return []
    if runtime is None:
        runtime = runtime_packages()
    providers = packages_distributions()
    return [
        f"{imported.path}:{imported.line}: imports {imported.module}, which is not in the artifact: add the package "
        f"that provides it {THE_FIX}, and build again"
        for imported in missing
        if not any(canonicalize_name(package) in runtime for package in providers.get(imported.top, []))
    ]


def sizes(artifact: Path) -> tuple[int, int, int]:
    """Files, bytes unzipped and bytes zipped as sam deploy uploads them."""
    files = [path for path in artifact.rglob("*") if path.is_file()]
    unzipped = sum(path.stat().st_size for path in files)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in files:
            archive.write(path, path.relative_to(artifact))
    return len(files), unzipped, buffer.tell()


def check(
    artifact: Path,
    architecture: str,
    python: str,
    locked: Mapping[str, str] | None = None,
    library: Path | None = None,
) -> list[str]:
    """What is wrong with the artifact for `architecture` and CPython `python`; `locked` is what uv.lock puts into
    it, and `library` a folder holding the median_lambda it pins (both read from the lock by default)."""
    if not artifact.is_dir():
        return [f"{artifact} does not exist: run `make build` (sam build) first"]
    machine = wheel_machine(architecture)
    problems = [f"{name} is missing" for name in REQUIRED if not (artifact / name).is_file()]
    lock = locked_artifact_versions(machine, python) if locked is None else locked
    problems += locked_version_problems(artifact, lock)
    problems += compiled_problems(artifact, machine, python)
    problems += manifest_problems(artifact)
    problems += library_problems(artifact, library)
    problems += stray_problems(artifact, python)
    problems += import_problems(artifact)
    return problems


def main(argv: list[str]) -> int:
    """`median check-artifact [DIR]`: the sizes, then each problem, one a line; exit 1 if there is any."""
    artifact = Path(argv[0]) if argv else DEFAULT_ARTIFACT
    architecture, python = lambda_architecture(), runtime_python()
    problems = check(artifact, architecture, python)
    if artifact.is_dir():
        files, unzipped, zipped = sizes(artifact)
        shown = artifact.relative_to(ROOT) if artifact.is_relative_to(ROOT) else artifact
        print(
            f"{shown}: {files:,} files, {unzipped / 1e6:.1f} MB unzipped, {zipped / 1e6:.1f} MB zipped; "
            f"checked for {architecture} and Python {python}"
        )
        bytecode = sum(1 for _ in artifact.rglob(f"*.{python_tag(python)}.pyc"))
        print(
            f"bytecode: {bytecode:,} modules precompiled for {python_tag(python)}"
            if bytecode
            else "bytecode: none, so Lambda compiles every module at each cold start (bench/README.md, Bytecode)"
        )
        if unzipped > UNZIPPED_LIMIT_BYTES:
            problems.append(f"{unzipped / 1e6:.1f} MB unzipped is over Lambda's {UNZIPPED_LIMIT_BYTES / 1e6:.0f} MB")
    for problem in problems:
        print(f"artifact: {problem}", file=sys.stderr)
    if problems:
        print(f"{len(problems)} problem(s) in the built artifact.", file=sys.stderr)
        return 1
    print(
        "OK: handler/, tools/ and the prebuilt manifest; exactly uv.lock's packages and versions, and its "
        "median-lambda byte for byte; compiled modules match; no workspace files."
    )
    return 0
