"""What leaves a container unable to serve any tool counts as a crash of `(every tool)`: the metric the crash
alarm, and so a gradual deploy's rollback, watch. Each such request is also a 500 with its reference."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from median_lambda import app
from median_lambda.key.source import MedianKeySource
from median_lambda.protocol import DEV_KEY_ENV, KEY_SECRET_ENV, TOOLS_PACKAGE_ENV
from median_lambda.testing import FakeLambdaContext, answer_of, call_body, signed_event

if TYPE_CHECKING:
    from pathlib import Path

    import pytest
    from median_lambda.authoring.registry import Registry
    from median_lambda.testing import MedianTestClient

    from tests.conftest import LogCapture


def crashes_counted(logs: LogCapture) -> list[str]:
    metrics = logs.metrics()
    return [metric["tool"] for metric in metrics if "ToolCrashes" in metric]


def test_a_container_without_a_usable_key_counts_each_request_it_refuses(
    clean_env: pytest.MonkeyPatch, moto_endpoint: str, logs: LogCapture
) -> None:
    # GIVEN a deployed function whose key's secret does not exist (a new version that names another one)
    clean_env.setattr(app, "key_source", MedianKeySource())
    clean_env.delenv(DEV_KEY_ENV, raising=False)
    clean_env.setenv(KEY_SECRET_ENV, f"median/missing-{uuid.uuid4().hex[:8]}")
    # WHEN Median's GET and a call arrive
    answers = [
        answer_of(app.lambda_handler(signed_event(method, body), FakeLambdaContext()))  # type: ignore[arg-type]
        for method, body in (("GET", b""), ("POST", call_body("ticketStatus", {"ticketNumber": "TCK-1042"})))
    ]
    # THEN each is 500 no_key, and each counts as a crash of every tool
    assert [(answer.status, answer.body["error"]["code"]) for answer in answers] == [(500, "no_key")] * 2
    assert crashes_counted(logs) == ["(every tool)", "(every tool)"]


def test_tools_that_fail_to_import_count_each_call_they_refuse(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    scratch_registry: Registry,
    client: MedianTestClient,
    logs: LogCapture,
) -> None:
    # GIVEN a tools package one of whose modules fails to import
    name = f"unimportable_tools_{uuid.uuid4().hex[:8]}"
    (tmp_path / name).mkdir()
    (tmp_path / name / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / name / "parcels.py").write_text("import no_such_module_anywhere\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(TOOLS_PACKAGE_ENV, name)
    # WHEN a call arrives
    answer = client.call("parcelStatus", {})
    # THEN it is a 500 naming its reference, and it counts as a crash of every tool
    assert answer.status == 500
    assert answer.body["error"]["message"].startswith("The endpoint's tools failed to import, so no tool can run")
    assert crashes_counted(logs) == ["(every tool)"]
