"""A call runs its tool at most once per callId: Powertools Idempotency over the DynamoDB table IDEMPOTENCY_TABLE.

The record is keyed on the callId alone and checked against the call's identity (its tool,
its input and its conversation: call_identity), so a callId reused for another call is
refused (409 `call_id_reused`) rather than answered with another call's result. Every
answer of a tool that returned is recorded and replayed: `ok: true` outputs, `tool_error`s,
and the 500 of an answer that cannot be sent. A crash or a timeout deletes the record, so a
retry runs the tool again; if the Lambda itself dies mid-call, the record's in-progress
mark lapses when the invocation would have timed out.

When the table fails. Each request to it is one bounded attempt (median_lambda/runtime/aws_clients.py's
STORE_CALL), and dispatch keeps its time out of the tool's, so every case below answers
before Lambda's deadline; none raises. "The lapse" is the in-progress mark's expiry: the
end of the invocation that wrote it (Lambda's remaining time when the call began).

| the table fails on                         | the answer          | the tool | a retry gets                        |
| ------------------------------------------ | ------------------- | -------- | ----------------------------------- |
| the in-progress write, which did not land  | 500 "did not run"   | not run  | a normal call: the tool runs once   |
| the in-progress write, which landed (1)    | 500 "did not run"   | not run  | 409 in_progress until the lapse,    |
|                                            |                     |          | then a normal call                  |
| the answer's save, then saved again (2)    | the tool's own      | ran once | the recorded answer                 |
| the answer's save, and again (3)           | the tool's own      | ran once | 409 in_progress until the lapse;    |
|                                            |                     |          | after it the tool would run again   |
| the delete after a crash or a timeout      | that 500 or 504     | ran      | 409 in_progress until the lapse,    |
|                                            |                     |          | then the tool runs again            |
| none: the answer is too large for an item  | the tool's own      | ran once | a 500 that says it ran: no rerun    |

"Did not land": refused, reset or dropped before the request, stalled, throttled, access
denied. (1) A read timeout, or the line dropped after the request: the write happened, its
answer was lost. (2) Once more, if the time kept for it is still there; or the lost save had
landed. (3) Or no time was left to try again; the log line names the callId and the lapse.

Why the lapse stays, though it lets a retry run the tool again after a failed save: the
same record is what an invocation killed mid-tool leaves behind, and what a landed write
whose answer was lost leaves behind before the tool ran. A mark that never lapsed would
hold those callIds at 409 for the record's whole expiry, losing calls that never ran. The
failed-save case needs the table to take the first write and refuse two more within
seconds, and Median to lose an answer it was sent; its log line says when a retry would run
the tool again, so an operator can check.

Light to import: app.py imports this at cold start to log whether idempotency is on.
Powertools' idempotency utility (~150 ms of imports) loads on the first call that needs it.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import TYPE_CHECKING, Any

from median_lambda.protocol import (
    CONVERSATION_ID_MEMBER,
    IDEMPOTENCY_EXPIRY_SECONDS,
    IDEMPOTENCY_EXPIRY_SECONDS_ENV,
    IDEMPOTENCY_KEY_PREFIX,
    IDEMPOTENCY_MAX_RECORDED_ANSWER_BYTES,
    IDEMPOTENCY_TABLE_ENV,
    ErrorCode,
)
from median_lambda.request.responses import Answer, error_body
from median_lambda.runtime import observability
from median_lambda.runtime.env import seconds_from_env, setting

if TYPE_CHECKING:
    from collections.abc import Callable

    from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer
    from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord
    from mypy_boto3_dynamodb import DynamoDBClient

    from median_lambda.authoring.api import ToolContext

# What Powertools reads from the payload it is given: the key, and what a reuse of the key must
# match. The payload holds two strings and nothing of the call's own values: Powertools copies
# it (deepcopy) and hashes it (json.dumps), and neither may meet what a call can carry.
_KEY_EXPRESSION = "callId"
_IDENTITY_EXPRESSION = "identity"
# sort_keys: one text per JSON value, whatever order its members came in. ensure_ascii: ASCII
# whatever the strings hold. Every value here came from the strict parser, which refused NaN,
# infinities and repeated keys and bounded the nesting (MAX_NESTING_DEPTH).
_IDENTITY_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False)

_stores: dict[tuple[str, int], DynamoDBPersistenceLayer] = {}
_clients: list[DynamoDBClient] = []


def table_name() -> str | None:
    return setting(IDEMPOTENCY_TABLE_ENV) or None


def log_state_at_cold_start() -> None:
    if table_name() is None:
        observability.logger.info(
            f"Idempotency is off: {IDEMPOTENCY_TABLE_ENV} is not set, so a retried call runs its tool again"
        )


def applies(call_id: str | None, idempotent_tool: bool) -> bool:
    """Whether this call goes through the record: it has a callId, its tool did not opt out, the table is set."""
    return bool(call_id) and idempotent_tool and table_name() is not None


class _NotRecorded(Exception):
    """Carries a crash's or a timeout's answer out of the recorded function, so that Powertools deletes the record."""

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
    # One client for every store: making a boto3 client costs ~0.1 s, a tenth of a request's whole budget.
    if not _clients:
        from median_lambda.runtime.aws_clients import STORE_CALL, bounded_client

        _clients.append(bounded_client("dynamodb", STORE_CALL))
    return _clients[0]


def forget_clients() -> None:
    """Drop the DynamoDB client and the stores built on it (SnapStart: no client goes into a snapshot)."""
    _stores.clear()
    _clients.clear()


def _conversation_identity(conversation: dict[str, Any]) -> list[Any]:
    """The conversation as a call's identity holds it: by its `id` when it names one, else by all of it.

    Tagged: ["id", <id>] and ["conversation", <all of it>] never match each other, whatever they hold.
    """
    named = conversation.get(CONVERSATION_ID_MEMBER)
    # JSON's empty values name nothing (`is`, not `==`: 0 == False in Python, and 0 names a conversation).
    if named is None or named is False or (isinstance(named, (str, list, dict)) and not named):
        return ["conversation", conversation]
    return ["id", named]


def call_identity(tool_name: str, tool_input: Any, conversation: dict[str, Any]) -> str:
    """What a reuse of a callId must match, as a SHA-256 hex digest of the tool, the input and the conversation.

    Two calls get one identity exactly when they name the same tool, carry equal inputs (as
    parsed: a string by its text, an integer exactly, any other number by its double), and
    come from the same conversation (_conversation_identity). The JSON text hashed is one to
    one with those values, and SHA-256, unlike Powertools' default MD5, is collision resistant.
    Dispatch hands it the input as the tool gets it where a double would not tell (a whole
    float in an integer field past 2**53, as its exact integer: whole_numbers.as_identified), so
    two calls the tool would tell apart never share an identity.
    """
    text = _IDENTITY_ENCODER.encode([tool_name, tool_input, _conversation_identity(conversation)])
    return hashlib.sha256(text.encode("ascii")).hexdigest()


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
        payload_validation_jmespath=_IDENTITY_EXPRESSION,
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
        if answer.rerun_on_retry:
            raise _NotRecorded(answer)
        return _record_of(answer, ctx)

    store = _store(table, expiry)
    once = idempotent_function(
        recorded,
        data_keyword_argument="call",
        persistence_store=store,
        config=config,
        key_prefix=IDEMPOTENCY_KEY_PREFIX,
    )
    call = {"callId": ctx.call_id, "identity": call_identity(tool_name, tool_input, ctx.conversation)}
    try:
        result = once(call=call)
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
            "This callId was already used for a call with another tool, input or conversation. "
            "Give each call its own callId.",
        )
    except Exception as error:  # the store failed: unreachable, timed out, throttled, access denied, no table
        answer = ran[0] if ran else None
        _log_store_failure(error, ctx, tool_name, answer)
        if answer is None:
            return _not_run(ctx)
        if not answer.rerun_on_retry:
            _save_again(store, call, answer, ctx, tool_name)
        # The tool's work is done: its answer is the truth, whether or not its record was saved.
        return answer
    if ran:
        return ran[0]  # as run() made it, already serialised, whatever the record keeps
    if replayed:
        observability.record_replay(tool_name)
        observability.logger.info("Answered with the recorded answer of an earlier run", extra={"call_id": ctx.call_id})
    return Answer(result["status"], result["body"])


def _record_of(answer: Answer, ctx: ToolContext) -> dict[str, Any]:
    """What the record keeps for a retry: the answer, or, when no item can hold it, a 500 that says so."""
    text = answer.json()
    record = {"status": answer.status, "body": answer.body}
    # Powertools stores the record as json.dumps writes it (sort_keys, ASCII escapes, ", " and
    # ": " between members), where a character of the compact text takes at most 12 bytes: only
    # a longer answer is written out again to be measured as Powertools will write it.
    if len(text) * 12 > IDEMPOTENCY_MAX_RECORDED_ANSWER_BYTES and len(json.dumps(record, sort_keys=True)) > (
        IDEMPOTENCY_MAX_RECORDED_ANSWER_BYTES
    ):
        observability.logger.warning(
            "The answer is too large to record; a retry will get a 500 saying the call ran",
            extra={"call_id": ctx.call_id, "answer_characters": len(text)},
        )
        return {"status": 500, "body": _unkept_answer_body(ctx)}
    return record


def _unkept_answer_body(ctx: ToolContext) -> dict[str, Any]:
    return error_body(
        ErrorCode.INTERNAL_ERROR,
        f"This call already ran, but its answer was over the {IDEMPOTENCY_MAX_RECORDED_ANSWER_BYTES:,} bytes "
        "kept for a retry, so it cannot be sent again; the tool will not run again for this callId. "
        f"Reference {ctx.reference}.",
        post=True,
    )


def _save_again(
    store: DynamoDBPersistenceLayer, call: dict[str, Any], answer: Answer, ctx: ToolContext, tool_name: str
) -> None:
    """After the tool ran and its answer's save failed: save once more, if the time kept for it is still there.

    The record says "in progress" until it lapses; saved, a retry gets the answer instead of
    a 409 and, after the lapse, a second run.
    """
    remaining = ctx.remaining_seconds()
    where = {"call_id": ctx.call_id, "tool": tool_name}
    if remaining is None or remaining > 0:
        try:
            store.save_success(data=call, result=_record_of(answer, ctx))
        except Exception as error:
            where.update(_error_fields(error))
        else:
            observability.logger.info("The answer was recorded on a second try", extra=where)
            return
    observability.logger.error(
        "The answer is not recorded: a retry gets 409 in_progress until the in-progress mark lapses, "
        "and would then run the tool again",
        extra={**where, "lapses_at": _lapse_time(ctx)},
    )


def _lapse_time(ctx: ToolContext) -> str | None:
    """When this invocation's in-progress mark lapses, as Powertools set it: Lambda's end, in UTC."""
    context = ctx.lambda_context
    if context is None:
        return None
    ends = time.time() + context.get_remaining_time_in_millis() / 1000
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ends))


def _conflict(code: str, message: str) -> Answer:
    return Answer(409, error_body(code, message, post=True))


def _error_fields(error: BaseException) -> dict[str, Any]:
    """The error's type and AWS's error code: what failed, never its text, which might quote a stored answer."""
    cause = error.__cause__ or error  # Powertools wraps the botocore error it met
    response = getattr(cause, "response", None)  # a ClientError's; botocore's network errors have none
    aws_error = response.get("Error") if isinstance(response, dict) else None
    code = aws_error.get("Code") if isinstance(aws_error, dict) else None
    return {
        "error_type": type(error).__name__,
        "cause_type": type(cause).__name__,
        "aws_error_code": code if isinstance(code, str) else None,
    }


def _log_store_failure(error: Exception, ctx: ToolContext, tool_name: str, answer: Answer | None) -> None:
    if answer is None:
        what = "; the tool did not run"
    elif answer.rerun_on_retry:
        what = " releasing the record of a call that crashed or timed out"
    else:
        what = " saving the answer of a tool that ran"
    observability.logger.error(
        "The idempotency table failed" + what,
        extra={"call_id": ctx.call_id, "tool": tool_name, **_error_fields(error)},
    )


def _not_run(ctx: ToolContext) -> Answer:
    return Answer(
        500,
        error_body(
            ErrorCode.INTERNAL_ERROR,
            "The server could not check whether this call already ran, so it did not run it; retry. "
            f"Reference {ctx.reference}.",
            post=True,
        ),
    )
