"""The CI gate on what `sam build` made: it must catch a wrong-architecture wheel and stray workspace files."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from median_lambda.build.check import check
from median_lambda.build.sources import DEVELOPER_PARTS, copy_library_runtime
from median_lambda.manifest.build import build_manifest
from median_lambda.project.lock import install_locked_library, locked_artifact_versions
from median_lambda.project.sam_config import runtime_python

from tests.project_copy import copy_project

if TYPE_CHECKING:
    from collections.abc import Callable

    from median_lambda.authoring.registry import Registry

ROOT = Path(__file__).resolve().parents[2]
ELF_AARCH64, ELF_X86_64 = 183, 62
PYTHON = runtime_python(ROOT / "template.yaml")  # template.yaml's Runtime: python3.13 -> "3.13"


def shared_object(path: Path, machine: int) -> None:
    """A file with just the ELF header fields the check reads: magic, class, byte order, e_machine."""
    path.parent.mkdir(parents=True, exist_ok=True)
    header = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9) + (3).to_bytes(2, "little") + machine.to_bytes(2, "little")
    path.write_bytes(header + bytes(44))


def dist_info(root: Path, name: str, version: str) -> Path:
    """The metadata folder an installer writes for a package, named as wheels name it."""
    folder = root / f"{name.replace('-', '_')}-{version}.dist-info"
    folder.mkdir(parents=True)
    (folder / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return folder


@pytest.fixture(scope="session")
def locked_for_arm64() -> dict[str, str]:
    """What the committed uv.lock puts into an arm64 artifact."""
    return locked_artifact_versions("aarch64", PYTHON)


@pytest.fixture(scope="session")
def locked_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The median-lambda the committed uv.lock pins (this repository's folder), installed apart as the build does."""
    library = tmp_path_factory.mktemp("locked") / "library"
    install_locked_library(library, ROOT)
    return library


@pytest.fixture
def artifact(tmp_path: Path, sample_tools: Registry, locked_for_arm64: dict[str, str], locked_library: Path) -> Path:
    """An artifact as the build lays it out for arm64 from uv.lock, for the sample tools (tests/sample_tools/)."""
    root = tmp_path / "MedianToolsFunction"
    for name, version in locked_for_arm64.items():
        dist_info(root, name, version)
    for name in ("handler/app.py", "tools/__init__.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")
    copy_library_runtime(root, locked_library)
    manifest, _ = build_manifest(sample_tools)
    (root / "median_lambda" / "manifest.json").write_text(json.dumps(manifest))
    shared_object(root / "pydantic_core" / "_pydantic_core.cpython-313-aarch64-linux-gnu.so", ELF_AARCH64)
    return root


@pytest.fixture
def checked(artifact: Path, locked_library: Path) -> Callable[[], list[str]]:
    """The artifact's check for arm64, against the committed lock's median-lambda (installed once, apart)."""
    return lambda: check(artifact, "arm64", PYTHON, library=locked_library)


def test_a_well_built_artifact_passes(artifact: Path, checked: Callable[[], list[str]]) -> None:
    # GIVEN an artifact built for arm64 and CPython 3.13
    # WHEN it is checked for arm64
    # THEN nothing is wrong
    assert checked() == []


def test_wheels_for_another_architecture_are_caught(artifact: Path, checked: Callable[[], list[str]]) -> None:
    # GIVEN pydantic_core built for x86_64 in an arm64 function
    (artifact / "pydantic_core" / "_pydantic_core.cpython-313-aarch64-linux-gnu.so").unlink()
    shared_object(artifact / "pydantic_core" / "_pydantic_core.cpython-313-x86_64-linux-gnu.so", ELF_X86_64)
    # WHEN it is checked
    problems = checked()
    # THEN the check names the module and both machines
    assert any("_pydantic_core" in problem and "x86_64, not aarch64" in problem for problem in problems)


def test_wheels_for_another_python_are_caught(artifact: Path, checked: Callable[[], list[str]]) -> None:
    # GIVEN pydantic_core built for CPython 3.11, as pip on this machine would install it by default
    (artifact / "pydantic_core" / "_pydantic_core.cpython-313-aarch64-linux-gnu.so").rename(
        artifact / "pydantic_core" / "_pydantic_core.cpython-311-aarch64-linux-gnu.so"
    )
    # WHEN it is checked
    # THEN the check says it is for another Python
    assert any("another Python than 3.13" in problem for problem in checked())


def test_an_artifact_for_the_python_the_template_left_is_caught(artifact: Path, locked_library: Path) -> None:
    # GIVEN an artifact built for python3.13, and a template since moved to python3.14
    # WHEN it is checked for the template's Python
    problems = check(artifact, "arm64", "3.14", locked={}, library=locked_library)
    # THEN the check says its compiled modules are for another Python: build again
    assert any("built for another Python than 3.14 (cpython-314)" in problem for problem in problems)


@pytest.mark.parametrize("stray", ["tests/test_x.py", ".venv/pyvenv.cfg", "handler/__pycache__/app.cpython-311.pyc"])
def test_workspace_files_in_the_artifact_are_caught(
    artifact: Path, stray: str, checked: Callable[[], list[str]]
) -> None:
    # GIVEN a file of the workspace copied into the artifact
    (artifact / stray).parent.mkdir(parents=True, exist_ok=True)
    (artifact / stray).write_text("")
    # WHEN it is checked
    # THEN the check names it
    assert any(stray.split("/")[0] in problem for problem in checked())


def test_bytecode_for_the_runtimes_python_is_welcome(artifact: Path, checked: Callable[[], list[str]]) -> None:
    # GIVEN bytecode that a build on Python 3.13 made (median_lambda/build/compile.py)
    (artifact / "median_lambda" / "__pycache__").mkdir()
    (artifact / "median_lambda" / "__pycache__" / "app.cpython-313.pyc").write_bytes(b"")
    # WHEN it is checked
    # THEN nothing is wrong: it spares Lambda a compile at every cold start
    assert checked() == []


def test_a_missing_or_stale_prebuilt_manifest_is_caught(artifact: Path, checked: Callable[[], list[str]]) -> None:
    # GIVEN a manifest.json that no longer matches the tools
    (artifact / "median_lambda" / "manifest.json").write_text('{"version":1,"tools":[],"diagnostics":false}')
    # WHEN it is checked
    # THEN the check says to build again; and a missing one is named too
    assert any("differs from the manifest" in problem for problem in checked())
    (artifact / "median_lambda" / "manifest.json").unlink()
    assert "median_lambda/manifest.json is missing" in checked()


def test_a_library_other_than_the_locked_one_is_caught_module_by_module(
    artifact: Path, checked: Callable[[], list[str]]
) -> None:
    # GIVEN the library's runtime in the artifact with a module edited (a debugging copy of the same version),
    # one added and one missing
    dispatch = artifact / "median_lambda" / "calls" / "dispatch.py"
    dispatch.write_text(dispatch.read_text() + "\nprint('debugging')\n")
    (artifact / "median_lambda" / "calls" / "patched.py").write_text("")
    (artifact / "median_lambda" / "calls" / "deadline.py").unlink()
    # WHEN it is checked
    problems = checked()
    # THEN each is named against the locked median-lambda, with what to do
    against = "against the median-lambda uv.lock pins: build again (make build)"
    assert problems == [
        f"median_lambda/calls/dispatch.py differs, {against}",
        f"median_lambda/calls/patched.py is not in the locked one, {against}",
        f"median_lambda/calls/deadline.py is missing, {against}",
    ]


def test_the_library_is_compared_with_what_the_lock_pins_when_none_is_given(artifact: Path) -> None:
    # GIVEN the library's version file of another version in the artifact
    (artifact / "median_lambda" / "_version.py").write_text('__version__ = "0.9.0"\n')
    # WHEN it is checked as median check-artifact does, against the lock alone
    problems = check(artifact, "arm64", PYTHON)
    # THEN the module is named, with the library the lock pins and where it comes from
    assert len(problems) == 1
    assert problems[0].startswith("median_lambda/_version.py differs, against median-lambda ")
    assert "from the folder median-lambda, which uv.lock pins: build again (make build)" in problems[0]


def test_a_missing_version_file_is_named(artifact: Path, checked: Callable[[], list[str]]) -> None:
    (artifact / "median_lambda" / "_version.py").unlink()
    assert checked()[0] == "median_lambda/_version.py is missing"


def test_a_developers_part_of_the_library_in_the_artifact_is_caught(
    artifact: Path, checked: Callable[[], list[str]]
) -> None:
    # GIVEN the library's testing kit and CLI copied into the artifact beside its runtime
    for part in ("testing/client.py", "cli/commands.py"):
        (artifact / "median_lambda" / part).parent.mkdir(parents=True)
        (artifact / "median_lambda" / part).write_text("")
    # WHEN it is checked
    # THEN each is named as never to be deployed
    problems = checked()
    for part in ("testing", "cli"):
        assert (
            f"median_lambda/{part} is in the artifact: a developer's part of median-lambda, never deployed" in problems
        )


def test_the_inspector_in_the_artifact_is_caught(artifact: Path, checked: Callable[[], list[str]]) -> None:
    # GIVEN the inspector's page copied into the artifact under another folder
    (artifact / "median_lambda" / "inspector.html").write_text("<title>inspector</title>")
    # WHEN it is checked
    # THEN the check names it as the dev server's, which must never be deployed
    assert "median_lambda/inspector.html is part of the local dev server" in checked()


def test_a_package_at_another_version_than_the_lock_is_caught(
    artifact: Path, locked_for_arm64: dict[str, str], checked: Callable[[], list[str]]
) -> None:
    # GIVEN an artifact whose pydantic is not the locked one (a build that resolved the ranges afresh)
    locked = locked_for_arm64["pydantic"]
    shutil.rmtree(artifact / f"pydantic-{locked}.dist-info")
    dist_info(artifact, "pydantic", "2.0.0")
    # WHEN it is checked
    problems = checked()
    # THEN the check names the package, both versions, and how to get the locked one
    assert (
        f"pydantic 2.0.0 is in the artifact, uv.lock has {locked}: build again (make build) from the committed uv.lock"
        in (problems)
    )


def test_a_locked_package_missing_from_the_artifact_is_caught(
    artifact: Path, locked_for_arm64: dict[str, str], checked: Callable[[], list[str]]
) -> None:
    # GIVEN an artifact without aws-xray-sdk (the tracing group was not installed)
    locked = locked_for_arm64["aws-xray-sdk"]
    shutil.rmtree(artifact / f"aws_xray_sdk-{locked}.dist-info")
    # WHEN it is checked
    # THEN the check names it, with its locked version
    assert any(
        problem.startswith(f"aws-xray-sdk {locked} is locked for the artifact but not in it") for problem in (checked())
    )


def test_a_package_the_lock_does_not_put_into_the_artifact_is_caught(
    artifact: Path, checked: Callable[[], list[str]]
) -> None:
    # GIVEN botocore in the artifact, as tracing's dependencies would bring it without --no-deps
    dist_info(artifact, "botocore", "1.40.0")
    # WHEN it is checked
    problems = checked()
    # THEN the check names it and both ways out: lock it as a runtime dependency, or build again
    assert any(
        problem.startswith("botocore 1.40.0 is in the artifact, but uv.lock does not put it there")
        and "run make lock" in problem
        for problem in problems
    )


@pytest.mark.parametrize("machine", ["aarch64", "x86_64"])
def test_the_lock_gives_each_architecture_the_runtime_group_and_never_the_runtimes_own_sdk(machine: str) -> None:
    # GIVEN the committed uv.lock
    # WHEN it is asked what an artifact for either architecture holds
    locked = locked_artifact_versions(machine, PYTHON)
    # THEN median-lambda's runtime and tracing dependencies are there, at exact versions, and boto3 and
    # botocore are not: the Lambda runtime provides them, precompiled
    assert {"aws-lambda-powertools", "pydantic", "pydantic-core", "aws-xray-sdk", "wrapt"} <= set(locked)
    assert not {"boto3", "botocore", "s3transfer"} & set(locked)
    assert all(version[0].isdigit() for version in locked.values())


# A machine's settings, and what editors and merge tools leave beside it: each must stay behind.
LOCAL_FILES = (
    "tools/settings.local.toml",
    "tools/settings.local.toml~",
    "tools/.settings.local.toml.swp",
    "tools/#settings.local.toml#",
    "tools/.#settings.local.toml",
    "tools/settings.local.toml.bak",
    "tools/settings.local.toml.orig",
    "tools/settings.toml~",
    "tools/.orders.py.swp",
    "handler/.env",
    ".median-dev-key",
    "env.json",
)


@pytest.mark.parametrize("local", LOCAL_FILES)
def test_a_local_file_anywhere_in_the_artifact_is_caught(
    artifact: Path, local: str, checked: Callable[[], list[str]]
) -> None:
    # GIVEN a developer's local values, or an editor's copy of a file, in the artifact
    (artifact / local).parent.mkdir(parents=True, exist_ok=True)
    (artifact / local).write_text('CARRIER_TOKEN = "local-dev-token"\n')
    # WHEN it is checked
    # THEN the check names it, and why it must stay behind
    assert (
        f"{local} is in the artifact: a machine's local values or an editor's copy of a file, which the build must "
        "leave behind"
    ) in checked()


@pytest.mark.parametrize("stray", ["tools/notes.txt", "tools/data/zones.csv", "handler/request/old_responses.py.txt"])
def test_a_file_of_handler_or_tools_the_build_would_not_copy_is_caught(
    artifact: Path, stray: str, checked: Callable[[], list[str]]
) -> None:
    # GIVEN a file in handler/ or tools/ that is neither a module nor a data file the build copies
    (artifact / stray).parent.mkdir(parents=True, exist_ok=True)
    (artifact / stray).write_text("")
    # WHEN it is checked
    # THEN the check names it, and the rules it breaks
    assert (
        f"{stray} is in the artifact, but the build copies only Python modules and the data files it names "
        "(median_lambda/build/sources.py)"
    ) in checked()


# A tool of the project's own, as `make new-tool` writes one: the build imports it for the manifest.
PING_TOOL = '''
from pydantic import BaseModel

from median_lambda import tool


class PingInput(BaseModel):
    text: str


@tool(risk="low")
def ping(args: PingInput) -> dict[str, str]:
    """Answer with the text it is given."""
    return {"text": args.text}
'''


def test_make_builds_the_project_and_the_librarys_runtime_and_check_artifact_passes_it(tmp_path: Path) -> None:
    # GIVEN a project with a tool, settings.toml, this machine's local settings, their example and an editor's backup
    project = copy_project(tmp_path / "project")
    project.write("tools/ping.py", PING_TOOL)
    for name in ("settings.toml", "settings.local.toml", "settings.local.toml~", "settings.local.example.toml"):
        project.write(f"tools/{name}", "")
    # WHEN sam build's target builds it, as `make build` has sam run it in the project's folder
    artifact = tmp_path / "artifact"
    built = project.make("build-MedianToolsFunction", f"ARTIFACTS_DIR={artifact}")
    # THEN the artifact holds handler/, the tools and their settings.toml, median_lambda's runtime and what
    # GET serves; no local file, and none of median-lambda's developer's parts (CLI, testing kit, dev server)
    assert built.returncode == 0, built.stdout + built.stderr
    files = {path.relative_to(artifact).as_posix() for path in artifact.rglob("*") if path.is_file()}
    assert {"handler/app.py", "tools/__init__.py", "tools/ping.py", "tools/settings.toml"} <= files
    assert {"median_lambda/app.py", "median_lambda/manifest.json", "median_lambda/stages.txt"} <= files
    assert not [name for name in files if "settings.local" in name]
    assert [part for part in DEVELOPER_PARTS if (artifact / "median_lambda" / part).exists()] == []
    assert json.loads((artifact / "median_lambda" / "manifest.json").read_text())["tools"][0]["name"] == "ping"
    # AND `median check-artifact`, which CI runs before a deploy, finds nothing wrong with it
    checked = project.median("check-artifact", str(artifact))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "OK: handler/, tools/ and the prebuilt manifest" in checked.stdout


def test_a_debugging_copy_of_the_library_installed_by_hand_never_ships(tmp_path: Path) -> None:
    # GIVEN a project, and a venv whose median_lambda is a copy of the library a developer edited to debug (the
    # same version, one module changed), installed there by hand in place of the one uv.lock pins: everything
    # else is the dev venv's
    project = copy_project(tmp_path / "project")
    project.write("tools/ping.py", PING_TOOL)
    debugging = tmp_path / "debugging"
    shutil.copytree(ROOT / "median-lambda" / "src" / "median_lambda", debugging / "median_lambda")
    dispatch = debugging / "median_lambda" / "calls" / "dispatch.py"
    dispatch.write_text(dispatch.read_text() + "\nDEBUGGING = True\n")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)  # noqa: S603
    [site_packages] = (venv / "lib").glob("python3.*/site-packages")
    (site_packages / "a_debugging.pth").write_text(f"{debugging}\n")
    (site_packages / "b_dev_venv.pth").write_text(f"{next(Path(sys.prefix, 'lib').glob('python3.*/site-packages'))}\n")
    (venv / "bin" / "uv").symlink_to(Path(sys.executable).with_name("uv"))
    # WHEN the build runs with it, as sam build runs it in the project's folder
    built = subprocess.run(  # noqa: S603
        [str(venv / "bin" / "python"), "-m", "median_lambda", "build-artifact", str(tmp_path / "artifact")],
        cwd=project.root,
        capture_output=True,
        text=True,
        check=False,
    )
    # THEN it stops, naming the venv's copy, the library uv.lock pins, the module that differs and the way back
    assert built.returncode != 0, built.stdout
    assert f"the median_lambda in this venv ({debugging / 'median_lambda'}) is not median-lambda " in built.stderr
    assert "from the folder median-lambda, which uv.lock pins and the function would run: " in built.stderr
    assert "calls/dispatch.py differs. Your tests ran on the venv's." in built.stderr
    assert "(rm .venv/.installed; make install)" in built.stderr
    assert not (tmp_path / "artifact" / "median_lambda").exists()


def test_the_build_target_outside_sam_build_says_what_to_run() -> None:
    # GIVEN the Makefile's target for sam build, run by hand, without the folder SAM names
    # WHEN make reads it
    made = subprocess.run(
        ["make", "-n", "build-MedianToolsFunction"],  # noqa: S607
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    # THEN it stops, saying which command builds
    assert made.returncode != 0
    assert "ARTIFACTS_DIR is not set: run 'make build' or 'sam build', not this target" in made.stderr
