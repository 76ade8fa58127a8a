"""Turns an API Gateway (REST payload 1.0, HTTP payload 2.0) or Function URL event into one request.

Any other event (a load balancer's, a WebSocket API's, VPC Lattice's, ...) is refused as a BadEvent.

Powertools' event data classes read these shapes too, but they trust the event to be
well formed; this endpoint faces events with null headers, bodies that are not strings
and broken base64, and must answer each with a 4xx rather than an exception. It is also
on the cold-start path of every GET, where importing them (any Powertools module imports
Logger, Metrics and Tracer with it) took "cold GET, key through the extension" from 1.17x to
2.26x its floor, against a target of 1.3x (bench/README.md, "Simple where a microsecond is
all it buys").
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, NamedTuple

from median_lambda.protocol import MAX_BODY_BYTES, SERVED_EVENT_SHAPES

# base64 grows a body by 4/3; a body larger than this cannot decode to MAX_BODY_BYTES or less.
_MAX_ENCODED_BODY_CHARS = (MAX_BODY_BYTES + 2) // 3 * 4


class BadEvent(Exception):
    """The event is not one this endpoint can read; the message says why, for the caller."""


class BodyTooLarge(Exception):
    """The body is over MAX_BODY_BYTES, in the form it arrived in or once decoded."""


class Request(NamedTuple):
    # A NamedTuple, not a frozen dataclass: as immutable, and half the cost to build on every request.
    method: str
    body: bytes
    event: dict[str, Any]  # for what is read on demand: the headers (most requests need one), the request id

    def header(self, name: str) -> str | None:
        """One header's value, its name (given in lower case) matched case-insensitively."""
        single = self.event.get("headers")
        if isinstance(single, dict):
            value = single.get(name)
            # HTTP API (2.0) and Function URL events name every header in lower case: this finds
            # it without lower-casing the dozen that API Gateway adds to every request.
            if isinstance(value, str):
                return value
        return self.headers.get(name)

    @property
    def headers(self) -> dict[str, str]:
        """Every header, by its lower-cased name."""
        return _headers(self.event)

    @property
    def request_id(self) -> str:
        """API Gateway's id for the request, or "" when the event has none."""
        return _request_id(self.event)


def method_of(event: Any) -> str:
    """The HTTP method, upper-cased; raises BadEvent for any event not of a served shape.

    Each shape is known by what it must carry: payload 2.0 (HTTP API, Function URL) its
    `version` and `requestContext.http.method`; payload 1.0 (REST API, and an HTTP API's 1.0)
    `httpMethod` and the API's `requestContext.apiId`, which a load balancer's event lacks,
    and no `connectionId`, which a WebSocket API's carries. A VPC Lattice event has neither
    `requestContext.http` nor `apiId`.
    """
    if not isinstance(event, dict):
        raise BadEvent("The event is not a JSON object.")
    context = event.get("requestContext")
    method: object = None
    if isinstance(context, dict):
        http = context.get("http")
        if isinstance(http, dict):
            if event.get("version") == "2.0":
                method = http.get("method")
        elif isinstance(context.get("apiId"), str) and "connectionId" not in context:
            method = event.get("httpMethod")
    if not isinstance(method, str) or not method:
        raise BadEvent(_not_served(event, context))
    return method.upper()


def _not_served(event: dict[str, Any], context: object) -> str:
    """Why the event is refused, naming what it seems to be and the shapes that are served."""
    context = context if isinstance(context, dict) else {}
    if "elb" in context:
        seen = "an Application Load Balancer event"
    elif "connectionId" in context or "eventType" in context:
        seen = "an API Gateway WebSocket event"
    elif "serviceNetworkArn" in context or "raw_path" in event:
        seen = "a VPC Lattice event"
    elif "httpMethod" in event or "http" in context or "routeKey" in event:
        seen = "an HTTP event of none of these shapes, or one missing what its shape must carry"
    else:
        seen = "not an HTTP request"
    served = ", ".join(SERVED_EVENT_SHAPES[:-1]) + " and " + SERVED_EVENT_SHAPES[-1]
    return f"This endpoint serves {served} events; this event is {seen}."


def read_request(event: dict[str, Any], method: str) -> Request:
    """The method, the raw body bytes and the event's headers; raises BadEvent or BodyTooLarge."""
    return Request(method, _body(event), event)


def _headers(event: dict[str, Any]) -> dict[str, str]:
    headers: dict[str, str] = {}
    # REST API events repeat every header in multiValueHeaders; the single-value map wins.
    multi = event.get("multiValueHeaders")
    if isinstance(multi, dict):
        for name, values in multi.items():
            if isinstance(name, str) and isinstance(values, list) and values and isinstance(values[-1], str):
                headers[name.lower()] = values[-1]
    single = event.get("headers")
    if isinstance(single, dict):
        for name, value in single.items():
            if isinstance(name, str) and isinstance(value, str):
                headers[name.lower()] = value
    return headers


def _body(event: dict[str, Any]) -> bytes:
    body = event.get("body")
    if body is None:
        return b""
    if not isinstance(body, str):
        raise BadEvent("The event's body is not a string.")
    if event.get("isBase64Encoded") is True:
        if len(body) > _MAX_ENCODED_BODY_CHARS:
            raise BodyTooLarge
        try:
            raw = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            raise BadEvent("The body is marked base64-encoded but is not valid base64.") from None
    else:
        if len(body) > MAX_BODY_BYTES:
            raise BodyTooLarge
        try:
            raw = body.encode("utf-8")
        except UnicodeEncodeError:
            raise BadEvent("The body is not valid UTF-8 text.") from None
    if len(raw) > MAX_BODY_BYTES:
        raise BodyTooLarge
    return raw


def _request_id(event: dict[str, Any]) -> str:
    context = event.get("requestContext")
    if isinstance(context, dict):
        request_id = context.get("requestId")
        if isinstance(request_id, str):
            return request_id[:128]
    return ""
