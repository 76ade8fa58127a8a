"""The answers the endpoint sends: one JSON shape for every API Gateway and Function URL flavour."""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from handler.protocol import ALLOW_HEADER, JSON_CONTENT_TYPE, PROTOCOL_VERSION, ErrorCode

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

    def json(self) -> str:
        return self.serialized if self.serialized is not None else to_json(self.body)


# Built once: json.dumps with any option builds an encoder on every call, ~1 us of a warm POST.
# An encoder keeps no state between values.
_COMPACT_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def to_json(value: Any) -> str:
    """Compact JSON that refuses NaN and Infinity, which no JSON parser on Median's side accepts."""
    return _COMPACT_ENCODER.encode(value)


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


def error_body(code: str, message: str, *, post: bool, details: list[dict[str, str]] | None = None) -> dict[str, Any]:
    """`{"error": …}`, with `version` and `ok` added on POST, where every answer carries them."""
    error: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        error["details"] = details
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
