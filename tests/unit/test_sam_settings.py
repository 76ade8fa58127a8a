"""Which architecture the build targets: SAM does not say, so it must match what sam deploy will use."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from scripts.sam_settings import ARCHITECTURE_ENV, lambda_architecture, wheel_machine

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
