"""Which architecture and Python the build targets: SAM does not say, so it reads the ones template.yaml writes."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

import pytest
from median_lambda.project.architecture import main as set_architecture
from median_lambda.project.sam_config import (
    ARCHITECTURE_ENV,
    LOCAL_ARCHITECTURE_ENV,
    LOCAL_OVERRIDES_ENV,
    TEMPLATE,
    lambda_architecture,
    local_overrides,
    parameter_overrides,
    runtime_python,
    wheel_machine,
)

if TYPE_CHECKING:
    from pathlib import Path


def template_copy(tmp_path: Path) -> Path:
    path = tmp_path / "template.yaml"
    shutil.copy(TEMPLATE, path)
    return path


def test_the_build_is_for_the_architecture_the_template_writes(tmp_path: Path, clean_env: pytest.MonkeyPatch) -> None:
    # GIVEN a project set to arm64, then to x86_64, as copier copy sets it
    clean_env.delenv(ARCHITECTURE_ENV, raising=False)
    template = template_copy(tmp_path)
    for architecture, machine in (("arm64", "aarch64"), ("x86_64", "x86_64")):
        assert set_architecture([architecture, "--template", str(template)]) == 0
        # WHEN the build asks which architecture to build for
        # THEN it is the template's, with the wheels' machine for it
        assert lambda_architecture(template) == architecture
        assert wheel_machine(architecture) == machine


def test_the_environment_wins_over_the_template(tmp_path: Path, clean_env: pytest.MonkeyPatch) -> None:
    # GIVEN LAMBDA_ARCHITECTURE set, as make invoke LOCAL_ARCH=x86_64 sets it for a build from its own copy
    clean_env.setenv(ARCHITECTURE_ENV, "x86_64")
    template = template_copy(tmp_path)
    assert set_architecture(["arm64", "--template", str(template)]) == 0
    # WHEN the build asks
    # THEN the environment decides
    assert lambda_architecture(template) == "x86_64"


def test_a_template_that_names_no_architecture_builds_for_lambdas_default(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    # GIVEN a template whose Architectures line a user deleted
    clean_env.delenv(ARCHITECTURE_ENV, raising=False)
    template = template_copy(tmp_path)
    text = template.read_text(encoding="utf-8")
    assert text.count("    Architectures: [arm64]\n") == 1
    template.write_text(text.replace("    Architectures: [arm64]\n", ""), encoding="utf-8")
    # WHEN the build asks
    # THEN it builds for what Lambda then runs the function on, x86_64
    assert lambda_architecture(template) == "x86_64"


def test_the_build_is_for_the_python_the_template_runs(tmp_path: Path) -> None:
    # GIVEN the template as copied (python3.13), and as a project moved to python3.14 writes it
    template = template_copy(tmp_path)
    text = template.read_text(encoding="utf-8")
    assert text.count("    Runtime: python3.13\n") == 1
    assert runtime_python(template) == "3.13"
    template.write_text(text.replace("    Runtime: python3.13\n", "    Runtime: python3.14\n"), encoding="utf-8")
    # WHEN the build asks which Python to install wheels for and compile with
    # THEN it is the Runtime's
    assert runtime_python(template) == "3.14"


@pytest.mark.parametrize("written", ["nodejs22.x", "python3", "python2.7", "!Ref Runtime"])
def test_a_runtime_that_is_no_lambda_python_is_refused_naming_it(tmp_path: Path, written: str) -> None:
    # GIVEN a Runtime that names no Python 3 release of Lambda's
    template = template_copy(tmp_path)
    text = template.read_text(encoding="utf-8")
    template.write_text(text.replace("    Runtime: python3.13\n", f"    Runtime: {written}\n"), encoding="utf-8")
    # WHEN the build asks
    # THEN it stops, naming where the value is written and what one looks like
    with pytest.raises(ValueError, match=r"template\.yaml's Runtime is .*python3\.13"):
        runtime_python(template)


@pytest.mark.parametrize(("written", "named"), [("[amd64]", "'amd64'"), ("[!Ref Architecture]", "Ref")])
def test_an_architecture_lambda_has_not_is_refused_naming_where_it_is_written(
    tmp_path: Path, clean_env: pytest.MonkeyPatch, written: str, named: str
) -> None:
    # GIVEN Docker's name for x86_64 in the template, or a value written as a parameter's
    clean_env.delenv(ARCHITECTURE_ENV, raising=False)
    template = template_copy(tmp_path)
    text = template.read_text(encoding="utf-8")
    template.write_text(
        text.replace("    Architectures: [arm64]\n", f"    Architectures: {written}\n"), encoding="utf-8"
    )
    # WHEN the build asks
    # THEN it stops, naming where the value is written, the architectures Lambda has and what sets one
    with pytest.raises(ValueError, match=r"template\.yaml's Architectures") as refused:
        lambda_architecture(template)
    assert named in str(refused.value)
    assert "arm64, x86_64" in str(refused.value)
    assert "python -m median_lambda.project.architecture" in str(refused.value)


def test_an_unknown_architecture_in_the_environment_is_refused_naming_it(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    # GIVEN LAMBDA_ARCHITECTURE with a typo
    clean_env.setenv(ARCHITECTURE_ENV, "arm")
    # THEN the build stops, naming the variable
    with pytest.raises(ValueError, match=r"\$LAMBDA_ARCHITECTURE is 'arm'"):
        lambda_architecture(template_copy(tmp_path))


def local_samconfig(tmp_path: Path, overrides: str) -> Path:
    path = tmp_path / "samconfig.toml"
    path.write_text(f'version = 0.1\n[default.local_invoke.parameters]\nparameter_overrides = "{overrides}"\n')
    return path


def test_sam_local_on_another_architecture_passes_samconfigs_overrides_and_no_architecture(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    # GIVEN samconfig's local overrides (the extension's layer off) and LOCAL_ARCH=x86_64
    clean_env.setenv(LOCAL_ARCHITECTURE_ENV, "x86_64")
    clean_env.delenv(LOCAL_OVERRIDES_ENV, raising=False)
    # WHEN the Makefile asks what to pass sam local, which would replace samconfig's with it
    overrides = parameter_overrides(
        {"parameter_overrides": local_overrides(local_samconfig(tmp_path, "ParametersSecretsExtensionLayerArn=none"))}
    )
    # THEN samconfig's are there, and nothing else: the architecture is the built copy's own, not a parameter
    assert overrides == {"ParametersSecretsExtensionLayerArn": "none"}


def test_a_users_overrides_add_to_samconfigs_and_win_over_them(tmp_path: Path, clean_env: pytest.MonkeyPatch) -> None:
    # GIVEN PARAMETER_OVERRIDES naming one parameter samconfig sets and one it does not, a value with a space
    clean_env.delenv(LOCAL_ARCHITECTURE_ENV, raising=False)
    clean_env.setenv(LOCAL_OVERRIDES_ENV, "ParametersSecretsExtensionLayerArn=arn:x 'AlarmEmail=on call@example.com'")
    config = local_samconfig(tmp_path, "ParametersSecretsExtensionLayerArn=none LogLevel=INFO")
    # WHEN the Makefile asks
    overrides = parameter_overrides({"parameter_overrides": local_overrides(config)})
    # THEN the user's win where both name one, samconfig's stay where only it does, and the space survives
    assert overrides == {
        "ParametersSecretsExtensionLayerArn": "arn:x",
        "LogLevel": "INFO",
        "AlarmEmail": "on call@example.com",
    }


def test_an_unknown_local_architecture_is_refused_naming_the_variable(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    # GIVEN LOCAL_ARCH=amd64, Docker's name rather than Lambda's
    clean_env.setenv(LOCAL_ARCHITECTURE_ENV, "amd64")
    # WHEN the Makefile asks
    # THEN it stops, naming the variable and Lambda's architectures
    with pytest.raises(ValueError, match=r"LOCAL_ARCH='amd64' is not one of Lambda's: arm64, x86_64"):
        local_overrides(local_samconfig(tmp_path, ""))
