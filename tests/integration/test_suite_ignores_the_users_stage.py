"""`MEDIAN_STAGE=... make test`: the stage and overrides a user's shell sets are their tools' tests', never the
framework's, whose tools have no stage of that name; the run says at its start when the user's own tests will fail."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.devserver_process import REPO

# A framework test that calls the handler on a tools package with [default], [staging] and [production].
FRAMEWORK_TEST = "tests/unit/test_settings.py::test_a_value_comes_from_the_first_place_that_sets_it"


def test_a_stage_and_an_override_in_the_users_shell_leave_the_frameworks_tests_green() -> None:
    # GIVEN a shell whose stage names no table of any settings.toml, and an override of a setting the test reads
    env = {
        **os.environ,
        "MEDIAN_STAGE": "nosuchstage",
        "MEDIAN_SETTING_CARRIER_BASE_URL": "https://from-the-users-shell.example",
    }
    # WHEN the framework's test runs in it, as `make test` would
    finished = subprocess.run(  # noqa: S603 - this interpreter, pytest, a test of this repository
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", FRAMEWORK_TEST],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    # THEN it passes on its own configuration, and the run warns, first, that the user's tools would be refused
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "6 passed" in finished.stdout
    assert "warning: your tools' tests will fail: MEDIAN_STAGE=nosuchstage names no stage of" in finished.stdout
