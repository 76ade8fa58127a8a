"""The answers the endpoint sends: one JSON shape for every API Gateway and Function URL flavour."""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from handler.protocol import ALLOW_HEADER, JSON_CONTENT_TYPE, MAX_RESPONSE_BYTES, PROTOCOL_VERSION, ErrorCode

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
# What Lambda wraps around the body (statusCode, headers, isBase64Encoded), with room to spare.
_ENVELOPE_BYTES = 1024
# Lambda serialises its response as JSON with the body a string inside it, where a character
# may take up to 12 bytes (an astral one as two \uXXXX escapes): below this, any body fits.
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


def fits_in_a_response(body: str) -> bool:
    """Whether Lambda can return this body: its response, as JSON, stays within MAX_RESPONSE_BYTES."""
    if len(body) <= _ALWAYS_SENDABLE_CHARS:
        return True
    # As escaped as any encoder makes it (ensure_ascii), so the true size is at most this.
    return len(json.dumps(body)) + _ENVELOPE_BYTES <= MAX_RESPONSE_BYTES


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
