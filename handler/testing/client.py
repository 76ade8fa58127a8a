"""The test client: signed requests through `lambda_handler`, as Median sends them, and their answers."""

from __future__ import annotations

import json
import os
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from handler.protocol import DEV_KEY_ENV, KEY_SECRET_ENV
from handler.testing.events import TEST_KEY, call_body, diagnostics_body, signed_event

if TYPE_CHECKING:
    from collections.abc import Iterator


@dataclass
class FakeLambdaContext:
    """The attributes of Lambda's context object that the handler and Powertools read."""

    function_name: str = "median-tools"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:median-tools"
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    timeout_seconds: float = 30.0
    _started: float = field(default_factory=time.monotonic)

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.timeout_seconds - (time.monotonic() - self._started)) * 1000))


@dataclass(frozen=True)
class TestAnswer:
    status: int
    headers: dict[str, str]
    body: Any


def answer_of(response: dict[str, Any]) -> TestAnswer:
    return TestAnswer(response["statusCode"], response.get("headers", {}), json.loads(response["body"]))


@contextmanager
def dev_key(key: str) -> Iterator[None]:
    """Run with `key` as the local dev key and no secret named, as `make serve` does."""
    saved = {name: os.environ.get(name) for name in (DEV_KEY_ENV, KEY_SECRET_ENV)}
    os.environ[DEV_KEY_ENV] = key
    os.environ.pop(KEY_SECRET_ENV, None)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def new_call_id() -> str:
    """A callId as Median makes one: unique to the call, the same on each of its retries."""
    return f"call_{uuid.uuid4().hex}"


class MedianTestClient:
    """Sends signed requests to `lambda_handler` as Median would, under a dev key.

    Each call carries a fresh callId, as every call of Median's does: `callId="call_1"` names
    it, `callId=None` sends none (`MedianTestClient(call_ids=False)` sends none unless named).
    `retry()` sends the last call again, the same body with a fresh signature, as Median retries
    a call it got no answer for. With the idempotency table on (`median_aws.idempotency_table()`),
    as deployed, the retry is answered from the first run's record and the tool does not run
    again; without it, as under `make serve`, the tool runs again.
    """

    __test__ = False  # not a pytest test class, despite its name

    def __init__(self, key: str = TEST_KEY, *, call_ids: bool = True) -> None:
        self.key = key
        self.call_ids = call_ids
        self.last_call_id: str | None = None  # the callId of the last call, None if it carried none
        self._last_body: bytes | None = None

    def send(self, event: dict[str, Any], context: FakeLambdaContext | None = None) -> TestAnswer:
        from handler.app import lambda_handler

        with dev_key(self.key):
            return answer_of(lambda_handler(event, context or FakeLambdaContext()))  # type: ignore[arg-type]

    def manifest(self, context: FakeLambdaContext | None = None) -> TestAnswer:
        return self.send(signed_event("GET", key=self.key), context)

    def call(
        self,
        tool: str,
        tool_input: dict[str, Any] | None = None,
        *,
        context: FakeLambdaContext | None = None,
        **members: Any,
    ) -> TestAnswer:
        """Call `tool` with `tool_input`; `members` are the body's others (`callId`, `conversation`).

        `context` is the Lambda context it runs under, as in `retry()`: `FakeLambdaContext(timeout_seconds=2)`
        for a call with little time left; a fresh 30-second one by default."""
        if "callId" not in members and self.call_ids:
            members["callId"] = new_call_id()
        elif "callId" in members and members["callId"] is None:
            del members["callId"]
        body = call_body(tool, tool_input, **members)
        self._last_body, self.last_call_id = body, members.get("callId")
        return self.send(signed_event("POST", body, key=self.key), context)

    def retry(self, context: FakeLambdaContext | None = None) -> TestAnswer:
        """The last call again, byte for byte (its callId too) with a fresh signature: Median's retry."""
        if self._last_body is None:
            raise RuntimeError("retry() sends the last call again: make a call with call() first")
        return self.send(signed_event("POST", self._last_body, key=self.key), context)

    def diagnostics(self, context: FakeLambdaContext | None = None) -> TestAnswer:
        return self.send(signed_event("POST", diagnostics_body(), key=self.key), context)
