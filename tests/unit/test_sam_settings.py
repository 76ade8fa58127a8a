"""Which architecture the build targets: SAM does not say, so it must match what sam deploy will use."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from scripts.sam_settings import (
    ARCHITECTURE_ENV,
    LOCAL_ARCHITECTURE_ENV,
    LOCAL_OVERRIDES_ENV,
    lambda_architecture,
    local_overrides,
    parameter_overrides,
    wheel_machine,
)

if TYPE_CHECKING:
    from pathlib import Path


def samconfig(tmp_path: Path, overrides: str) -> Path:
    path = tmp_path / "samconfig.toml"
    path.write_text(f'version = 0.1\n[default.deploy.parameters]\nparameter_overrides = "{overrides}"\n')
    return path


def test_the_template_default_is_arm64(tmp_path: Path, clean_env: pytest.MonkeyPatch) -> None:
    # GIVEN no override anywhere
    clean_env.delenv(ARCHITECTURE_ENV, raising=False)
    # WHEN the build asks which architecture to build for
    architecture = lambda_architecture(samconfig=tmp_path / "absent.toml")
    # THEN it is the template's default, arm64, whose wheels are tagged aarch64
    assert architecture == "arm64" and wheel_machine(architecture) == "aarch64"


def test_the_deploy_override_in_samconfig_wins_over_the_default(tmp_path: Path, clean_env: pytest.MonkeyPatch) -> None:
    # GIVEN samconfig.toml deploying with Architecture=x86_64, as a guided deploy saves it
    clean_env.delenv(ARCHITECTURE_ENV, raising=False)
    config = samconfig(tmp_path, 'MedianKeySecretName=\\"median-tools/median-key\\" Architecture=\\"x86_64\\"')
    # WHEN the build asks
    # THEN it builds for x86_64, as the function will run
    assert lambda_architecture(samconfig=config) == "x86_64"


def test_the_environment_wins_over_samconfig(tmp_path: Path, clean_env: pytest.MonkeyPatch) -> None:
    # GIVEN LAMBDA_ARCHITECTURE set, for a `sam deploy --parameter-overrides Architecture=...` on the command line
    clean_env.setenv(ARCHITECTURE_ENV, "arm64")
    # WHEN the build asks
    # THEN the environment decides
    assert lambda_architecture(samconfig=samconfig(tmp_path, "Architecture=x86_64")) == "arm64"


def test_an_unknown_architecture_is_refused(tmp_path: Path, clean_env: pytest.MonkeyPatch) -> None:
    # GIVEN a typo in the override
    clean_env.delenv(ARCHITECTURE_ENV, raising=False)
    # WHEN the build asks
    # THEN it stops, naming the architectures Lambda has
    with pytest.raises(ValueError, match="arm64, x86_64"):
        lambda_architecture(samconfig=samconfig(tmp_path, "Architecture=amd64"))


def local_samconfig(tmp_path: Path, overrides: str) -> Path:
    path = tmp_path / "samconfig.toml"
    path.write_text(f'version = 0.1\n[default.local_invoke.parameters]\nparameter_overrides = "{overrides}"\n')
    return path


def test_sam_local_keeps_samconfigs_overrides_when_the_architecture_is_chosen(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    # GIVEN samconfig's local overrides (the extension's layer off) and LOCAL_ARCH=x86_64
    clean_env.setenv(LOCAL_ARCHITECTURE_ENV, "x86_64")
    clean_env.delenv(LOCAL_OVERRIDES_ENV, raising=False)
    # WHEN the Makefile asks what to pass sam local, which would replace samconfig's with it
    overrides = parameter_overrides(
        {"parameter_overrides": local_overrides(local_samconfig(tmp_path, "ParametersSecretsExtensionLayerArn=none"))}
    )
    # THEN both are there: samconfig's is not lost to the architecture's
    assert overrides == {"ParametersSecretsExtensionLayerArn": "none", "Architecture": "x86_64"}


def test_a_users_overrides_add_to_samconfigs_and_win_over_them(tmp_path: Path, clean_env: pytest.MonkeyPatch) -> None:
    # GIVEN PARAMETER_OVERRIDES naming one parameter samconfig sets and one it does not, a value with a space
    clean_env.delenv(LOCAL_ARCHITECTURE_ENV, raising=False)
    clean_env.setenv(LOCAL_OVERRIDES_ENV, "ParametersSecretsExtensionLayerArn=arn:x 'MetricsNamespace=My Tools'")
    config = local_samconfig(tmp_path, "ParametersSecretsExtensionLayerArn=none LogLevel=INFO")
    # WHEN the Makefile asks
    overrides = parameter_overrides({"parameter_overrides": local_overrides(config)})
    # THEN the user's win where both name one, samconfig's stay where only it does, and the space survives
    assert overrides == {
        "ParametersSecretsExtensionLayerArn": "arn:x",
        "LogLevel": "INFO",
        "MetricsNamespace": "My Tools",
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
