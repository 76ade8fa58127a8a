"""The answers the endpoint sends: one JSON shape for every API Gateway and Function URL flavour."""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from median_lambda.protocol import ALLOW_HEADER, JSON_CONTENT_TYPE, MAX_RESPONSE_BYTES, PROTOCOL_VERSION, ErrorCode

_JSON_HEADERS = {"Content-Type": JSON_CONTENT_TYPE}


class Answer(NamedTuple):
    """A POST's answer before it is serialised: what dispatch builds and idempotency records.

    A NamedTuple, not a frozen dataclass: as immutable, and a cold GET, which imports this
    module, then never imports `dataclasses` (which imports `inspect`, `ast` and `tokenize`):
    with the key from the extension, those cost a cold GET ~0.2x of its floor (bench/README.md,
    "cold GET, key through the extension").
    """

    status: int
    body: dict[str, Any]
    # The body as JSON, when dispatch has serialised it already to check that a tool's output
    # is JSON: the answer sends that text rather than serialising the body a second time.
    serialized: str | None = None
    # True when the tool crashed or ran out of time, so whether it did its work is unknown and
    # a retry runs it again; every answer of a tool that returned is recorded and replayed.
    rerun_on_retry: bool = False

    def json(self) -> str:
        return self.serialized if self.serialized is not None else to_json(self.body)


# Built once: json.dumps with any option builds an encoder on every call, ~1 us of a warm POST.
# An encoder keeps no state between values.
_COMPACT_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)
# A UTF-16 surrogate alone is no Unicode character: UTF-8 cannot carry it, and an answer holding
# one cannot be sent (json.loads makes one of a "\ud800" escape; a tool can make one of bad data).
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
# What the answer's dict holds beside its body (statusCode, the handler's own few short headers,
# isBase64Encoded), as JSON, with room to spare (tests/unit/test_every_answer_fits.py holds it).
_ENVELOPE_BYTES = 1024
# Lambda's Python runtime returns the handler's dict as json.dumps writes it, the body a string
# inside it: before Python 3.12 with ASCII escapes (a character outside ASCII is \uXXXX, six bytes;
# one beyond the BMP two of them, twelve; the body's own escapes escaped again), from 3.12 as
# UTF-8 (awslambdaric's marshaller; never longer than the escapes). One character of the body
# takes at most 12 bytes either way: a body of this many characters or fewer always fits.
_ALWAYS_SENDABLE_CHARS = (MAX_RESPONSE_BYTES - _ENVELOPE_BYTES) // 12


def to_json(value: Any) -> str:
    """Compact JSON that refuses NaN and Infinity, which no JSON parser on Median's side accepts,
    with every lone surrogate replaced by U+FFFD, so that the text always encodes as UTF-8."""
    text = _COMPACT_ENCODER.encode(value)
    # An ASCII string is flagged as such by CPython: isascii() answers without a scan.
    if text.isascii():
        return text
    return _LONE_SURROGATE.sub("\ufffd", text)


def holds_lone_surrogate(value: Any) -> bool:
    """Whether any string in the JSON value (a member's name included) holds a lone surrogate."""
    return _LONE_SURROGATE.search(_COMPACT_ENCODER.encode(value)) is not None


def fits_in_a_response(response: dict[str, Any]) -> bool:
    """Whether Lambda can return this answer: the whole dict as its Python runtime writes it, in MAX_RESPONSE_BYTES.

    The one measure of every answer (median_lambda/app.py applies it to each before it is returned).
    Measured with ASCII escapes, json.dumps's default and the older runtimes' way, which is never
    shorter than the UTF-8 that Python 3.12 and later write: what fits so fits either way.
    """
    body = response.get("body")
    if isinstance(body, str) and len(body) <= _ALWAYS_SENDABLE_CHARS:
        return True
    return len(json.dumps(response)) <= MAX_RESPONSE_BYTES


def body_fits(body: str) -> bool:
    """Whether an answer with this body fits: `fits_in_a_response` of it as `raw_json_answer` returns it."""
    return len(body) <= _ALWAYS_SENDABLE_CHARS or fits_in_a_response(raw_json_answer(200, body))


def shortened(text: str, limit: int) -> str:
    """`text`, or its first `limit` characters and what is left out: for a message that quotes a list without end."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters, in the function's log)"


def raw_json_answer(status: int, body: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """An answer whose body is already serialised, such as the prebuilt manifest."""
    return {
        "statusCode": status,
        "headers": {**_JSON_HEADERS, **headers} if headers else _JSON_HEADERS.copy(),
        "body": body,
        "isBase64Encoded": False,
    }


def json_answer(status: int, body: Any, headers: dict[str, str] | None = None) -> dict[str, Any]:
    return raw_json_answer(status, to_json(body), headers)


def error_body(
    code: str, message: str, *, post: bool, details: list[dict[str, str]] | None = None, omitted: int = 0
) -> dict[str, Any]:
    """`{"error": …}`, with `version` and `ok` added on POST, where every answer carries them.

    `omitted` counts the details left out of a long list; it is sent only when there are some.
    """
    error: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        error["details"] = details
    if omitted:
        error["omitted"] = omitted
    if post:
        return {"version": PROTOCOL_VERSION, "ok": False, "error": error}
    return {"error": error}


def error_answer(
    status: int,
    code: str,
    message: str,
    *,
    post: bool,
    details: list[dict[str, str]] | None = None,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    return json_answer(status, error_body(code, message, post=post, details=details), headers)


def method_not_allowed() -> dict[str, Any]:
    return error_answer(
        405,
        ErrorCode.METHOD_NOT_ALLOWED,
        f"Only {ALLOW_HEADER} are answered here.",
        post=False,
        headers={"Allow": ALLOW_HEADER},
    )


def ok_body(output: Any) -> dict[str, Any]:
    return {"version": PROTOCOL_VERSION, "ok": True, "output": output}
