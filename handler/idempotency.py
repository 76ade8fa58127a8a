"""A call runs its tool at most once per callId: Powertools Idempotency over the DynamoDB table IDEMPOTENCY_TABLE.

The record is keyed on the callId alone and checked against the tool and input, so a
callId reused for another call is refused (409 `call_id_reused`) rather than answered
with another call's result. Answers with status 200, `ok: true` outputs and `tool_error`s
alike, are recorded and replayed. A crash (500) or a timeout (504) deletes the record,
so a retry runs the tool again; if the Lambda itself dies mid-call, the record's
in-progress mark lapses when the invocation would have timed out.

Light to import: app.py imports this at cold start to log whether idempotency is on.
Powertools' idempotency utility (~150 ms of imports) loads on the first call that needs it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from handler import observability
from handler.env import seconds_from_env
from handler.protocol import (
    IDEMPOTENCY_EXPIRY_SECONDS,
    IDEMPOTENCY_EXPIRY_SECONDS_ENV,
    IDEMPOTENCY_KEY_PREFIX,
    IDEMPOTENCY_TABLE_ENV,
    ErrorCode,
)
from handler.responses import Answer, error_body

if TYPE_CHECKING:
    from collections.abc import Callable

    from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer
    from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord
    from mypy_boto3_dynamodb import DynamoDBClient

    from handler.authoring import ToolContext

# What Powertools hashes: the key, and the payload a reuse of the key must match.
_KEY_EXPRESSION = "callId"
_PAYLOAD_EXPRESSION = "[tool, input]"

_stores: dict[tuple[str, int], DynamoDBPersistenceLayer] = {}
_clients: list[DynamoDBClient] = []


def table_name() -> str | None:
    return os.environ.get(IDEMPOTENCY_TABLE_ENV, "").strip() or None


def log_state_at_cold_start() -> None:
    if table_name() is None:
        observability.logger.info(
            f"Idempotency is off: {IDEMPOTENCY_TABLE_ENV} is not set, so a retried call runs its tool again"
        )


def applies(call_id: str | None, idempotent_tool: bool) -> bool:
    """Whether this call goes through the record: it has a callId, its tool did not opt out, the table is set."""
    return bool(call_id) and idempotent_tool and table_name() is not None


class _NotRecorded(Exception):
    """Carries a 500 or 504 answer out of the recorded function, so that Powertools deletes the record."""

    def __init__(self, answer: Answer) -> None:
        super().__init__(answer.status)
        self.answer = answer


def _store(table: str, expiry_seconds: int) -> DynamoDBPersistenceLayer:
    # Powertools configures a persistence layer once, from the first config it sees: one per setting.
    store = _stores.get((table, expiry_seconds))
    if store is None:
        from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

        store = DynamoDBPersistenceLayer(table_name=table, boto3_client=_client())
        _stores[(table, expiry_seconds)] = store
    return store


def _client() -> DynamoDBClient:
    # One client for every store: making a boto3 client costs ~0.1 s, a call's whole margin.
    if not _clients:
        import boto3

        from handler.aws_clients import bounded_config

        _clients.append(boto3.client("dynamodb", config=bounded_config()))
    return _clients[0]


def forget_clients() -> None:
    """Drop the DynamoDB client and the stores built on it (SnapStart: no client goes into a snapshot)."""
    _stores.clear()
    _clients.clear()


def at_most_once(tool_name: str, tool_input: Any, ctx: ToolContext, run: Callable[[], Answer]) -> Answer:
    """run()'s answer, or the answer recorded for ctx.call_id, or a 409 when the callId is busy or reused."""
    from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent_function
    from aws_lambda_powertools.utilities.idempotency.exceptions import (
        IdempotencyAlreadyInProgressError,
        IdempotencyValidationError,
    )

    table = table_name()
    assert table is not None, "at_most_once is called only when applies() is true"
    expiry = max(1, int(seconds_from_env(IDEMPOTENCY_EXPIRY_SECONDS_ENV, IDEMPOTENCY_EXPIRY_SECONDS)))
    ran: list[Answer] = []
    replayed: list[bool] = []

    def note_replay(response: Any, idempotent_data: DataRecord) -> Any:
        replayed.append(True)
        return response

    config = IdempotencyConfig(
        event_key_jmespath=_KEY_EXPRESSION,
        payload_validation_jmespath=_PAYLOAD_EXPRESSION,
        raise_on_no_idempotency_key=True,
        expires_after_seconds=expiry,
        response_hook=note_replay,
    )
    if ctx.lambda_context is not None:
        # An invocation that dies mid-call leaves an in-progress record that lapses when it would have timed out.
        config.register_lambda_context(ctx.lambda_context)

    def recorded(call: dict[str, Any]) -> dict[str, Any]:
        answer = run()
        ran.append(answer)
        if answer.status != 200:
            raise _NotRecorded(answer)
        return {"status": answer.status, "body": answer.body}

    once = idempotent_function(
        recorded,
        data_keyword_argument="call",
        persistence_store=_store(table, expiry),
        config=config,
        key_prefix=IDEMPOTENCY_KEY_PREFIX,
    )
    try:
        result = once(call={"callId": ctx.call_id, "tool": tool_name, "input": tool_input})
    except _NotRecorded as not_recorded:
        return not_recorded.answer
    except IdempotencyAlreadyInProgressError:
        observability.logger.info(
            "A call with this callId is still running", extra={"call_id": ctx.call_id, "tool": tool_name}
        )
        return _conflict(
            ErrorCode.IN_PROGRESS,
            "A call with this callId is still running. Retry later to get its answer; the tool will not run twice.",
        )
    except IdempotencyValidationError:
        observability.logger.warning(
            "A callId was reused for another call", extra={"call_id": ctx.call_id, "tool": tool_name}
        )
        return _conflict(
            ErrorCode.CALL_ID_REUSED,
            "This callId was already used for a call with another tool or input. Give each call its own callId.",
        )
    except Exception as error:  # the store failed: DynamoDB unreachable, the table missing, access denied
        return _store_failed(error, ctx, tool_name, ran[0] if ran else None)
    if replayed:
        observability.record_replay(tool_name)
        observability.logger.info("Answered with the recorded answer of an earlier run", extra={"call_id": ctx.call_id})
    return Answer(result["status"], result["body"])


def _conflict(code: str, message: str) -> Answer:
    return Answer(409, error_body(code, message, post=True))


def _store_failed(error: Exception, ctx: ToolContext, tool_name: str, answer: Answer | None) -> Answer:
    cause = error.__cause__ or error
    # The error's type and AWS's error code say what failed; its text might quote a stored answer.
    aws_error = getattr(cause, "response", {}).get("Error", {}) if hasattr(cause, "response") else {}
    observability.logger.error(
        "The idempotency table failed" + (" after the tool ran" if answer else "; the tool did not run"),
        extra={
            "call_id": ctx.call_id,
            "tool": tool_name,
            "error_type": type(error).__name__,
            "cause_type": type(cause).__name__,
            "aws_error_code": aws_error.get("Code"),
        },
    )
    if answer is not None:
        # The tool's work is done: its answer is the truth, even though the record of it was not saved.
        return answer
    reference = ctx.reference
    return Answer(
        500,
        error_body(
            ErrorCode.INTERNAL_ERROR,
            f"The server could not check whether this call already ran, so it did not run it; retry. "
            f"Reference {reference}.",
            post=True,
        ),
    )
