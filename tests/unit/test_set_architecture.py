"""`python -m median_lambda.project.architecture x86_64`: the architecture, chosen at `copier copy`, in template.yaml.

Each test runs the command on a copy of template.yaml (or of a template edited as a user might),
as Copier's task and `make invoke LOCAL_ARCH=` run it, and reads the result as SAM translates it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from median_lambda.project.architecture import main
from median_lambda.project.sam_config import TEMPLATE, lambda_architecture, load_template
from median_lambda.testing import translated
from median_lambda.testing.template import REGION

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURES_LINE = "    Architectures: [arm64]\n"
LAYER_LINE = "            - !FindInMap [ParametersSecretsExtension, !Ref AWS::Region, arm64]\n"


@pytest.fixture
def template(tmp_path: Path) -> Path:
    path = tmp_path / "template.yaml"
    shutil.copy(TEMPLATE, path)
    return path


def run(template: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """The command as Copier's task runs it, in the project's directory."""
    return subprocess.run(  # noqa: S603 - this interpreter, this project's module
        [sys.executable, "-m", "median_lambda.project.architecture", *arguments, "--template", str(template)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def edit(template: Path, old: str, new: str) -> None:
    text = template.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    template.write_text(text.replace(old, new), encoding="utf-8")


def line_of(template: Path, fragment: str) -> int:
    (found,) = [at for at, line in enumerate(template.read_text(encoding="utf-8").splitlines(), 1) if fragment in line]
    return found


def test_x86_64_sets_the_function_and_its_extension_layer_and_nothing_else(
    template: Path, clean_env: pytest.MonkeyPatch
) -> None:
    # GIVEN a new project's template, arm64 as the template repository ships it
    clean_env.delenv("LAMBDA_ARCHITECTURE", raising=False)
    before = template.read_text(encoding="utf-8").splitlines()
    # WHEN Copier's task sets x86_64
    result = run(template, "x86_64")
    # THEN it says which two lines it rewrote, and they are the only ones that changed
    assert result.returncode == 0, result.stderr
    architectures, layer = (
        line_of(template, "Architectures: ["),
        line_of(template, "!FindInMap [ParametersSecretsExtension"),
    )
    assert result.stdout.splitlines() == [
        f"{template}:{architectures}: Architectures: arm64 -> x86_64",
        f"{template}:{layer}: the extension's layer: arm64 -> x86",
    ]
    after = template.read_text(encoding="utf-8").splitlines()
    assert [at for at, (old, new) in enumerate(zip(before, after, strict=True), 1) if old != new] == [
        architectures,
        layer,
    ]
    # AND the function runs on x86_64, with AWS's x86_64 extension for the stack's region, and the build is for it
    function = translated(load_template(template)).properties("MedianToolsFunction")
    assert function["Architectures"] == ["x86_64"]
    (arn,) = function["Layers"]
    assert re.fullmatch(rf"arn:aws:lambda:{REGION}:\d{{12}}:layer:AWS-Parameters-and-Secrets-Lambda-Extension:\d+", arn)
    assert lambda_architecture(template) == "x86_64"


def test_setting_it_again_changes_nothing_and_setting_it_back_restores_the_template(template: Path) -> None:
    # GIVEN a project set to x86_64
    original = template.read_bytes()
    assert run(template, "x86_64").returncode == 0
    once = template.read_bytes()
    # WHEN the task runs again (copier update replays it), then sets arm64
    again = run(template, "x86_64")
    # THEN the second run rewrites nothing, and says so
    assert again.returncode == 0 and again.stdout.strip() == f"{template}: already x86_64"
    assert template.read_bytes() == once
    # AND arm64 gives back the template byte for byte
    assert run(template, "arm64").returncode == 0
    assert template.read_bytes() == original


def test_a_template_written_with_crlf_keeps_them(template: Path) -> None:
    # GIVEN a template saved with Windows line endings
    template.write_bytes(template.read_bytes().replace(b"\n", b"\r\n"))
    # WHEN the architecture is set
    assert run(template, "x86_64").returncode == 0
    # THEN every line still ends CRLF, and the two lines hold the new value
    data = template.read_bytes()
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert b"    Architectures: [x86_64]\r\n" in data


def test_a_block_list_is_set_where_its_item_is(template: Path) -> None:
    # GIVEN Architectures written as a block list, as sam init writes it
    edit(template, ARCHITECTURES_LINE, "    Architectures:\n      - arm64  # Graviton\n")
    # WHEN x86_64 is set
    result = run(template, "x86_64")
    # THEN the item's line is rewritten, its comment kept
    assert result.returncode == 0, result.stderr
    assert "    Architectures:\n      - x86_64  # Graviton\n" in template.read_text(encoding="utf-8")
    assert load_template(template)["Globals"]["Function"]["Architectures"] == ["x86_64"]


def refused(template: Path, architecture: str = "x86_64") -> str:
    """What the command says when it refuses: it exits 1 and leaves the template as it was."""
    before = template.read_bytes()
    result = run(template, architecture)
    assert result.returncode == 1, result.stdout
    assert result.stdout == ""
    assert template.read_bytes() == before
    assert result.stderr.startswith("error: cannot set the architecture: ")
    assert "Traceback" not in result.stderr
    return result.stderr


def test_an_architecture_lambda_has_not_is_refused(template: Path) -> None:
    # GIVEN Docker's name for x86_64
    # THEN it is refused, with Lambda's names
    assert "'amd64' is not one of Lambda's architectures: arm64, x86_64." in refused(template, "amd64")


def test_a_template_without_the_line_is_refused_with_what_to_add(template: Path) -> None:
    # GIVEN a template whose Architectures line was deleted
    edit(template, ARCHITECTURES_LINE, "")
    # THEN it is refused: there is no line to rewrite, and what to add is said
    said = refused(template)
    assert f"{template}: no line sets the function's architecture" in said
    assert "Add `Architectures: [x86_64]` under Globals: Function:" in said


def test_two_functions_each_with_an_architecture_are_refused_naming_both_lines(template: Path) -> None:
    # GIVEN a second line setting an architecture: a function of the user's own with its own
    edit(
        template,
        "      Handler: handler.app.lambda_handler\n",
        "      Handler: handler.app.lambda_handler\n      Architectures: [arm64]\n",
    )
    lines = [
        at for at, line in enumerate(template.read_text(encoding="utf-8").splitlines(), 1) if "Architectures: [" in line
    ]
    # THEN it is refused as ambiguous, naming the file and line of each
    said = refused(template)
    assert f"2 lines set an architecture ({template}:{lines[0]}, {template}:{lines[1]})" in said
    assert "set each by hand" in said


def test_an_architecture_written_as_a_reference_is_refused_naming_its_line(template: Path) -> None:
    # GIVEN the architecture made a parameter again
    edit(template, ARCHITECTURES_LINE, "    Architectures: [!Ref Architecture]\n")
    line = line_of(template, "Architectures: [")
    # THEN it is refused, naming the line
    said = refused(template)
    assert f"{template}:{line}:" in said
    assert "does not write the architecture out" in said


def test_an_extension_layer_picked_in_another_form_is_refused_naming_its_line(template: Path) -> None:
    # GIVEN the layer's lookup written as a block list, which the command does not read
    edit(
        template,
        LAYER_LINE,
        "            - !FindInMap\n              - ParametersSecretsExtension\n              - !Ref AWS::Region\n"
        "              - arm64\n",
    )
    line = line_of(template, "- ParametersSecretsExtension")
    # THEN it is refused, naming that line and the form it reads
    said = refused(template)
    assert f"{template}:{line}: the extension's layer is picked from ParametersSecretsExtension in a form" in said
    assert "!FindInMap [ParametersSecretsExtension, !Ref AWS::Region, arm64]" in said


def test_two_extension_layers_are_refused_naming_both_lines(template: Path) -> None:
    # GIVEN a second lookup of the extension's layer
    edit(template, LAYER_LINE, LAYER_LINE + LAYER_LINE.replace("- !FindInMap", "- !FindInMap "))
    # THEN it is refused as ambiguous
    said = refused(template)
    assert "2 lines pick the extension's layer" in said


def test_a_template_that_is_not_there_is_named(tmp_path: Path) -> None:
    # GIVEN no template at the path given
    result = run(tmp_path / "absent.yaml", "x86_64")
    # THEN the command says so, without a traceback
    assert result.returncode == 1
    assert "absent.yaml" in result.stderr and "Traceback" not in result.stderr


def test_main_sets_the_template_in_process(template: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN the module's entry point, as tests and scripts call it
    # WHEN it sets x86_64
    status = main(["x86_64", "--template", str(template)])
    # THEN it succeeds and says what it rewrote
    assert status == 0
    assert "Architectures: arm64 -> x86_64" in capsys.readouterr().out
