"""The Lambda entry point: `median_lambda.app.lambda_handler`.

Checks run in the protocol's order: the method (405), the body's size (413), the
signature header's shape and age (401, no key needed), the key (500 no_key), the
signature itself (401), and only then is the body read and the request served.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

from median_lambda.calls.idempotency import log_state_at_cold_start
from median_lambda.key.source import KeyUnavailable, MedianKeySource, log_key_unavailable
from median_lambda.protocol import (
    ALLOWED_METHODS,
    ANY_STAGE,
    DEFAULT_STAGE,
    MAX_BODY_BYTES,
    MAX_QUOTED_PROBLEMS_CHARS,
    MAX_RESPONSE_BYTES,
    PREBUILT_MANIFEST_FILE,
    PREBUILT_STAGES_FILE,
    SIGNATURE_HEADER,
    STAGE_ENV,
    ErrorCode,
)
from median_lambda.request.events import BadEvent, BodyTooLarge, method_of, read_request
from median_lambda.request.responses import error_answer, fits_in_a_response, method_not_allowed, raw_json_answer
from median_lambda.request.signature import SignatureError, matches, parse_header
from median_lambda.runtime import observability, time_limits
from median_lambda.runtime.env import running_in_deployed_lambda, setting
from median_lambda.runtime.observability import (
    flush_metrics,
    invocation_started,
    record_no_tool_can_run,
    record_rejected_signature,
    record_server_error,
    traced_handler,
)
from median_lambda.snapstart import register_hooks_under_snapstart

if TYPE_CHECKING:
    from collections.abc import Callable

    from aws_lambda_powertools.utilities.typing import LambdaContext

    from median_lambda.request.events import Request
    from median_lambda.request.responses import Answer
    from median_lambda.request.signature import SignatureHeader

    HandlePost = Callable[[bytes, str, LambdaContext | None], Answer]

key_source = MedianKeySource()
# os.path and os.urandom rather than pathlib and uuid: a cold GET through the extension
# imports nothing the floor does not but the handler's own modules, `typing`, and what the time
# limits need (`signal`, `threading`, `contextvars`) (bench/README.md, "cold GET, key through the
# extension"). Nor `contextlib` (~2 ms here, 2.5% of that floor): try/except where it would suppress.
PREBUILT_MANIFEST = os.path.join(os.path.dirname(__file__), PREBUILT_MANIFEST_FILE)  # noqa: PTH118, PTH120
_manifest_answer: tuple[int, str] | None = None
PREBUILT_STAGES = os.path.join(os.path.dirname(__file__), PREBUILT_STAGES_FILE)  # noqa: PTH118, PTH120
# True once the stages the build wrote have shown this container's stage to be one: never asked again.
_stage_known = False
_handle_post: HandlePost | None = None
log_state_at_cold_start()


def _prebuilt_manifest() -> str | None:
    """The manifest `sam build` serialised into the artifact, or None in a source checkout.

    Served as it is: the build ran the sync rules (`python -m median_lambda manifest` refuses a
    manifest that breaks one), so GET needs neither the tools nor pydantic to answer it.
    """
    try:
        with open(PREBUILT_MANIFEST, encoding="utf-8") as file:  # noqa: PTH123 - see PREBUILT_MANIFEST
            text = file.read().strip()
    except OSError:
        return None
    return text or None


def _manifest_from_tools() -> tuple[int, str]:
    from median_lambda.authoring.registry import ToolLoadError, load_tools
    from median_lambda.manifest.build import build_manifest
    from median_lambda.request.responses import error_body, shortened, to_json

    try:
        registry = load_tools()
    except ToolLoadError as failed:
        # Each line is `tools/<file>.py:<line>: <what is wrong>`: the author's place, not a traceback.
        observability.logger.error("The tools failed to import; GET answers 500", extra={"problems": failed.lines})
        listed = shortened("; ".join(failed.lines), MAX_QUOTED_PROBLEMS_CHARS)
        message = "The endpoint's tools failed to import: " + listed
        return 500, to_json(error_body(ErrorCode.INVALID_MANIFEST, message, post=False))
    manifest, problems = build_manifest(registry)
    if problems:
        observability.logger.error(
            "The tools break Median's sync rules; GET answers 500", extra={"problems": [str(p) for p in problems]}
        )
        listed = shortened("; ".join(str(p) for p in problems), MAX_QUOTED_PROBLEMS_CHARS)
        message = "The endpoint's tools break Median's sync rules: " + listed
        return 500, to_json(error_body(ErrorCode.INVALID_MANIFEST, message, post=False))
    return 200, to_json(manifest)


def manifest_answer() -> dict[str, Any]:
    """GET's answer: the prebuilt manifest if the build left one, else built from the tools; once per container."""
    global _manifest_answer
    if _manifest_answer is None:
        prebuilt = _prebuilt_manifest()
        _manifest_answer = (200, prebuilt) if prebuilt is not None else _manifest_from_tools()
    status, body = _manifest_answer
    return raw_json_answer(status, body)


def forget_manifest() -> None:
    """Build GET's answer anew at the next GET: `make serve` calls this once it has reloaded the tools."""
    global _manifest_answer
    _manifest_answer = None


def _stages_the_build_wrote() -> frozenset[str] | None:
    """The stages `sam build` wrote beside the manifest (settings.toml's tables); None in a source checkout."""
    try:
        with open(PREBUILT_STAGES, encoding="utf-8") as file:  # noqa: PTH123 - see PREBUILT_MANIFEST
            written = frozenset(file.read().split())
    except OSError:
        return None
    return written or None


def _unknown_stage() -> str | None:
    """Why this container must serve nothing: its $MEDIAN_STAGE names no stage of tools/settings.toml (a
    typo in a deploy's Stage, most often), with the fix; None when it names one.

    Refused rather than served from [default] alone: a deploy of "prodution" would otherwise answer
    GET and fail or misbehave on every call that reads a setting, with nothing counted as an error.
    """
    global _stage_known
    current = setting(STAGE_ENV) or DEFAULT_STAGE
    built = _stages_the_build_wrote()
    if built is not None and (current == DEFAULT_STAGE or current in built or ANY_STAGE in built):
        _stage_known = True  # a deployed container: its stage and its files never change
        return None
    # A source checkout (make serve, the tests) reads settings.toml itself, anew each time: it is
    # saved while make serve runs. A deployed container gets here only to say why it refuses.
    from median_lambda.authoring.settings import ConfigurationError, known_stages, unknown_stage

    try:
        known = [DEFAULT_STAGE, *sorted(built - {DEFAULT_STAGE})] if built is not None else known_stages()
    except ConfigurationError:
        return None  # settings.toml itself cannot be read: each tool that takes a setting says why
    return unknown_stage(current, known)


def _serving_nothing(problem: str, reference: str, post: bool) -> dict[str, Any]:
    """500 to every request of a container whose stage is unknown, logged and counted as a crash each time."""
    observability.logger.error(f"This function refuses every request: {problem}", extra={"reference": reference})
    record_no_tool_can_run()
    return error_answer(
        500,
        ErrorCode.INTERNAL_ERROR,
        f"This endpoint's deployment is misconfigured, so it serves no request; reference {reference}.",
        post=post,
    )


def _import_handle_post() -> HandlePost:
    """POST's machinery (pydantic, the tools, Metrics), imported at the first POST and kept at hand:
    an import statement run on every call costs a warm POST ~2 µs to find the module again."""
    global _handle_post
    from median_lambda.calls.dispatch import handle_post

    _handle_post = handle_post
    return handle_post


def _verified(request: Request, header: SignatureHeader, context: LambdaContext | None) -> bool:
    """Whether the signature matches the key, reading the key anew once if it may have been rotated.

    A read ends in time to answer before the invocation's deadline (`context`), a stalled
    Secrets Manager included: the answer is then 500 no_key, never Lambda's own timeout.
    """
    key = key_source.get(context)
    if matches(header, key, request.body):
        return True
    # A failed read here keeps the key in hand and is logged by the key source: the answer is 401.
    fresh = key_source.refreshed_after_mismatch(key, context)
    return fresh is not None and matches(header, fresh, request.body)


def _request_id(request: Request, context: LambdaContext | None) -> str:
    return getattr(context, "aws_request_id", None) or request.request_id or os.urandom(16).hex()


def _serve(event: Any, context: LambdaContext | None) -> dict[str, Any]:
    try:
        method = method_of(event)
    except BadEvent as error:
        return error_answer(400, ErrorCode.BAD_REQUEST, str(error), post=False)
    if method not in ALLOWED_METHODS:
        return method_not_allowed()
    post = method == "POST"
    try:
        request = read_request(event, method)
    except BodyTooLarge:
        return error_answer(413, ErrorCode.TOO_LARGE, f"The body is over {MAX_BODY_BYTES:,} bytes.", post=post)
    except BadEvent as error:
        return error_answer(400, ErrorCode.BAD_REQUEST, str(error), post=post)

    try:
        header = parse_header(request.header(SIGNATURE_HEADER))
        if not _verified(request, header, context):
            raise SignatureError.mismatch()
    except SignatureError as refused:
        observability.logger.warning("Signature refused", extra={"reason": refused.reason, "method": method})
        record_rejected_signature(refused.reason)
        return error_answer(401, ErrorCode.UNAUTHORIZED, refused.message, post=post)
    except KeyUnavailable as error:
        log_key_unavailable(error)
        # No tool can be served without the key: a version that cannot read it is rolled back.
        record_no_tool_can_run()
        return error_answer(500, ErrorCode.NO_KEY, "The server has no usable Median key to verify with.", post=post)

    if not _stage_known:
        unknown = _unknown_stage()
        if unknown is not None:
            return _serving_nothing(unknown, _request_id(request, context), post)
    if not post:
        return manifest_answer()
    handle_post = _handle_post or _import_handle_post()
    answer = handle_post(request.body, _request_id(request, context), context)
    return raw_json_answer(answer.status, answer.json())


def _sendable(response: dict[str, Any], context: LambdaContext | None) -> dict[str, Any]:
    """`response`, or, where Lambda could not return it, a 500 in JSON that can be sent and says why.

    Every answer passes here, whatever made it (a refusal, a 422, a tool's output, a retry's
    recorded answer, the manifest): past MAX_RESPONSE_BYTES, API Gateway would answer its own
    502 without JSON. The answers that can grow are bounded where they are made; this holds for
    whatever is not.
    """
    if fits_in_a_response(response):
        return response
    reference = getattr(context, "aws_request_id", None) or os.urandom(16).hex()
    body = response["body"]
    observability.logger.error(
        "The answer is over Lambda's response limit; answering 500 instead",
        extra={"status": response.get("statusCode"), "body_characters": len(body), "reference": reference},
    )
    try:  # a POST's answers, recorded ones included, carry `ok`: the 500 is shaped as theirs are
        post = "ok" in json.loads(body)
    except (ValueError, TypeError):
        post = False
    message = (
        f"The answer is over the {MAX_RESPONSE_BYTES:,} bytes Lambda can return, so it was not sent; "
        f"reference {reference}."
    )
    return error_answer(500, ErrorCode.INTERNAL_ERROR, message, post=post)


def _last_resort(error: BaseException, context: LambdaContext | None) -> dict[str, Any]:
    """A JSON 500 for an error nothing else answered, made with nothing imported and no file opened.

    What failed may be the container itself: with no file descriptor left, an import fails too
    (it opens the module's file), and so would an answer that needed one. The answer is made of
    modules loaded at the cold start; the log line goes through the Logger, or, where making it
    fails (its first line imports Powertools), is written as the same JSON by hand; the crash is
    explained on the author's machine only, if its module can still be had.
    """
    reference = getattr(context, "aws_request_id", None) or os.urandom(16).hex()  # getrandom(2): no file
    answer = error_answer(500, ErrorCode.INTERNAL_ERROR, f"The server failed; reference {reference}.", post=True)
    fields = {"error_type": type(error).__name__, "reference": reference}
    try:
        observability.logger.error("Unhandled error", extra=fields)
    except Exception:
        line = {"level": "ERROR", "message": "Unhandled error", "service": observability.service_name(), **fields}
        try:  # noqa: SIM105 - contextlib.suppress would import contextlib at every cold GET (see PREBUILT_MANIFEST)
            sys.stdout.write(json.dumps(line) + "\n")
        except Exception:  # noqa: S110 - nowhere left to say it: the answer goes out all the same
            pass
    if not running_in_deployed_lambda():
        try:
            from median_lambda.authoring.local_crash import explain_locally

            explain_locally("The request", reference, error, authors_frames_only=False)
        except Exception:  # noqa: S110 - an explanation that fails must not cost the answer
            pass
    return answer


@traced_handler
def lambda_handler(event: Any, context: LambdaContext | None) -> dict[str, Any]:
    invocation_started(context)  # every line it logs carries its request id
    answer: dict[str, Any] | None = None
    try:
        answer = _sendable(_serve(event, context), context)
    except BaseException as error:  # the last line of defence, SystemExit too: Median gets JSON, never a Lambda error
        answer = _last_resort(error, context)
    finally:
        time_limits.lift_all()  # none outlasts its invocation, whatever ended it
        # Every 5XX counted here, in one place, whatever answered it (a tool's crash, the table failing
        # before the tool, a 504, the last resort): the series a version's rollback alarm reads.
        if answer is not None and answer["statusCode"] >= 500:
            record_server_error()
        flush_metrics()
    return answer


# Last, once manifest_answer exists: the hooks are handed what they warm and what they forget, so
# that snapstart.py never imports this module back.
register_hooks_under_snapstart(key_source, manifest_answer)
