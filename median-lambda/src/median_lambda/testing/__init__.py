"""Call your tools the way Median does, from your own tests.

    from median_lambda.testing import MedianTestClient

    def test_order_status():
        client = MedianTestClient()
        answer = client.call("orderStatus", {"orderNumber": "ORD-1042"})
        assert answer.status == 200 and answer.body["output"]["status"] == "shipped"

Each request is a real API Gateway HTTP API (payload 2.0) event, signed with a test key,
and goes through `lambda_handler` exactly as a deployed request would.

- `client`: `MedianTestClient` (a fresh callId per call, `retry()`), its `TestAnswer`, the
  `FakeLambdaContext` it sends, `dev_key`;
- `events`: the events and bodies Median sends (`signed_event`, `http_event`, `call_body`, ...);
- `aws`: `MedianAWS`, what the `median_aws` fixture gives a test that reaches AWS (and the
  idempotency table, as deployed);
- `template`: `translated`, template.yaml as SAM's translator gives it to CloudFormation, as a `Stack`;
- `pytest_plugin`: that fixture, a pytest plugin median-lambda's distribution registers (its `pytest11` entry point).
"""

from __future__ import annotations

from median_lambda.testing.aws import MedianAWS, forget_what_a_container_keeps
from median_lambda.testing.client import (
    FakeLambdaContext,
    MedianTestClient,
    TestAnswer,
    answer_of,
    dev_key,
    new_call_id,
)
from median_lambda.testing.events import (
    PAYLOAD_FORMATS,
    TEST_KEY,
    call_body,
    diagnostics_body,
    http_event,
    signed_event,
)
from median_lambda.testing.template import Stack, template_parameters, translated

__all__ = [
    "PAYLOAD_FORMATS",
    "TEST_KEY",
    "FakeLambdaContext",
    "MedianAWS",
    "MedianTestClient",
    "Stack",
    "TestAnswer",
    "answer_of",
    "call_body",
    "dev_key",
    "diagnostics_body",
    "forget_what_a_container_keeps",
    "http_event",
    "new_call_id",
    "signed_event",
    "template_parameters",
    "translated",
]
