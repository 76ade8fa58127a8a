"""tools/health.py, the endpoint's diagnostics, tested through MedianTestClient as Median runs it."""

from __future__ import annotations

from median_lambda.testing import FakeLambdaContext, MedianTestClient, diagnostics_body, signed_event


def test_diagnostics_reports_the_store_without_any_order() -> None:
    # GIVEN the sample store, holding three orders
    median = MedianTestClient()
    context = FakeLambdaContext()
    # WHEN Median runs the endpoint's diagnostics
    answer = median.send(signed_event("POST", diagnostics_body()), context)
    # THEN the health function's report comes back: the store answers, with the request id it was given
    assert answer.status == 200
    assert answer.body == {
        "version": 1,
        "ok": True,
        "output": {"orderStore": "ok", "orders": 3, "requestId": context.aws_request_id},
    }


def test_the_manifest_says_the_endpoint_has_diagnostics() -> None:
    # WHEN Median GETs the manifest
    answer = MedianTestClient().manifest()
    # THEN diagnostics is on, so Median offers to run them
    assert answer.body["diagnostics"] is True
