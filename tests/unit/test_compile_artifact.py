from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from median_lambda.build.compile import main

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def _artifact(tmp_path: Path) -> Path:
    package = tmp_path / "artifact" / "median_lambda"
    package.mkdir(parents=True)
    (package / "app.py").write_text("ANSWER = 42\n")
    return tmp_path / "artifact"


def test_a_build_on_the_runtimes_python_ships_bytecode(tmp_path: Path) -> None:
    # GIVEN an artifact, and a build running the very Python the function runs
    artifact = _artifact(tmp_path)
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    # WHEN the build compiles it
    status = main([str(artifact), version])
    # THEN every module has its .pyc beside it, so Lambda need not compile it at cold start
    assert status == 0
    assert list((artifact / "median_lambda" / "__pycache__").glob("app.*.pyc"))


def test_a_build_on_another_python_ships_source_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a build running another Python than the function's
    artifact = _artifact(tmp_path)
    # WHEN the build would compile it
    status = main([str(artifact), "2.7"])
    # THEN it writes no bytecode the runtime could not use, and says so without failing the build
    assert status == 0
    assert not (artifact / "median_lambda" / "__pycache__").exists()
    assert "ships source only" in capsys.readouterr().out
