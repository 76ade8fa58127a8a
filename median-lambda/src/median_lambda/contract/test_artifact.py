"""The build (`make build`, `sam build`): what the function deploys holds handler/, your tools,
median-lambda's runtime, the manifest GET answers, prebuilt, and nothing of your machine's.

The build is the project's own Makefile target, `build-MedianToolsFunction`, which `sam build`
runs (template.yaml: BuildMethod makefile), run in a copy of the project with the files an editor
leaves beside tools/settings.local.toml, every step as `sam build` runs it: the sync-rule check,
the copy, the locked wheels, the bytecode, the prebuilt manifest.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from median_lambda.testing import signed_event

if TYPE_CHECKING:
    from median_lambda.contract.deployed import Endpoint

PROJECT = Path.cwd()


def _files(folder: Path, *, leave_out: tuple[str, ...] = ()) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in folder.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and not any(part in path.name for part in leave_out)
    }


def test_the_build_holds_handler_and_your_tools_and_nothing_local(contract_build: Path) -> None:
    from median_lambda.build.check import stray_problems
    from median_lambda.build.sources import DEVELOPER_PARTS, included_patterns, matches

    # GIVEN the artifact the build made from a project whose tools/ holds local values and an editor's copies
    # WHEN its folders are compared with the project's
    tools = _files(contract_build / "tools")
    # THEN handler/, the function's entry point, is there as it is in the project
    handler = _files(PROJECT / "handler")
    assert "app.py" in handler
    assert _files(contract_build / "handler") == handler
    # AND median-lambda's runtime beside it, with the prebuilt manifest, and none of its developer's parts
    library = _files(contract_build / "median_lambda")
    assert {"app.py", "_version.py", "manifest.json", "stages.txt"} <= set(library)
    assert not [name for name in library if name.split("/")[0] in DEVELOPER_PARTS]
    # AND tools/ is yours, file for file: your modules, settings.toml and the data files pyproject.toml's
    # [tool.median.artifact] include names, and neither your machine's values nor what editors left beside them
    included = included_patterns(PROJECT)
    yours = {
        name: content
        for name, content in _files(PROJECT / "tools", leave_out=("settings.local",)).items()
        if name.endswith(".py")
        or name == "settings.toml"
        or any(matches(PurePosixPath(f"tools/{name}"), glob) for glob in included)
    }
    assert tools == yours
    assert not [path for path in contract_build.rglob("*") if "settings.local" in path.name]
    # AND nothing else of the workspace came along (tests, scripts, the dev server, caches)
    assert stray_problems(contract_build) == []


def test_the_prebuilt_manifest_is_what_get_answers(contract_build: Path, contract_endpoint: Endpoint) -> None:
    # GIVEN the manifest the build wrote, which the deployed function serves as it is
    prebuilt = (contract_build / "median_lambda" / "manifest.json").read_text(encoding="utf-8")
    # WHEN Median GETs the manifest of your tools
    answered = contract_endpoint.invoke(signed_event("GET"))
    # THEN they are the same bytes
    assert answered["statusCode"] == 200
    assert prebuilt.strip() == answered["body"]
