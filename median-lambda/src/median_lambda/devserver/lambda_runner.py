"""Run one API Gateway event through `median_lambda.app.lambda_handler`, as one Lambda container would."""

from __future__ import annotations

import threading
import time
from typing import Any

from median_lambda.testing import FakeLambdaContext

FUNCTION_TIMEOUT_SECONDS = 30.0

# A Lambda container serves one request at a time; the dev server's threads (which keep a
# browser's idle connections from blocking everyone) take turns at the handler in the same way,
# and a reload of the tools (median_lambda.devserver.reloader) waits for its turn too.
one_request_at_a_time = threading.Lock()


def invoke(event: dict[str, Any], request_id: str | None = None) -> tuple[dict[str, Any], float]:
    """The handler's answer to the event, and the milliseconds the handler took; under `request_id`, the
    invocation's reference, when the caller needs it (the inspector, to show why an answer failed)."""
    from median_lambda.app import lambda_handler

    with one_request_at_a_time:
        context = FakeLambdaContext(timeout_seconds=FUNCTION_TIMEOUT_SECONDS)
        if request_id is not None:
            context.aws_request_id = request_id
        started = time.perf_counter()
        response = lambda_handler(event, context)  # type: ignore[arg-type]  # duck-types LambdaContext
        return response, (time.perf_counter() - started) * 1000
