"""The inspector: one page at /_inspector and the small JSON API behind it.

The page shows the manifest as Median would receive it and the sync-rule problems from the
checker `make check` runs; a call is signed here with the dev key and goes through
`lambda_handler` exactly as Median's POST would. Local only: `make serve` binds to loopback,
and this module is never in the Lambda artifact (`python -m median_lambda.devserver.artifact_check`).
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from median_lambda.devserver.curl import post_command
from median_lambda.devserver.lambda_runner import invoke, one_request_at_a_time
from median_lambda.devserver.reloader import revision
from median_lambda.protocol import (
    DEV_KEY_ENV,
    IDEMPOTENCY_TABLE_ENV,
    JSON_CONTENT_TYPE,
    KEY_SECRET_ENV,
    MAX_FIELDS,
    MAX_MANIFEST_BYTES,
    MAX_NESTING_DEPTH,
    MAX_SCHEMA_CHARS,
    MAX_TOOLS,
    OP_CALL,
    OP_DIAGNOSTICS,
    OPS,
    RISK_MEANINGS,
    ErrorCode,
)
from median_lambda.request.responses import to_json
from median_lambda.testing import call_body, diagnostics_body, signed_event

INSPECTOR_PATH = "/_inspector"
API_PATH = f"{INSPECTOR_PATH}/api"
# How many times the tools have loaded (median_lambda.devserver.reloader): the page asks, and reloads when it moves.
REVISION_PATH = f"{API_PATH}/revision"
PAGE_FILE = Path(__file__).with_name("inspector.html")
# The page finds the token in its link's query, keeps it for the tab, and sends it in this header
# on every API request: a header no other site's page can add without a preflight, never granted.
TOKEN_PARAMETER = "token"  # noqa: S105 - the parameter's name, not a token
TOKEN_HEADER = "x-inspector-token"  # noqa: S105 - the header's name
# Median hands each call its conversation; the inspector's calls all belong to this one.
CONVERSATION = {"id": "conv_inspector"}

# The page is one file with its CSS and JS inline, and may reach nothing but this server:
# the browser itself then proves it works offline.
_PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
        "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes
    content_type: str = JSON_CONTENT_TYPE
    headers: dict[str, str] = field(default_factory=dict)


def owns(path: str) -> bool:
    return path == INSPECTOR_PATH or path.startswith(f"{INSPECTOR_PATH}/")


def _json(status: int, document: Any, headers: dict[str, str] | None = None) -> Reply:
    # to_json sends a lone surrogate (a callId's or a tool's) as U+FFFD: the body always encodes.
    body = to_json(document).encode("utf-8")
    return Reply(status, body, headers={"Cache-Control": "no-store", **(headers or {})})


def _error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Reply:
    return _json(status, {"error": {"code": code, "message": message}}, headers)


def _method_not_allowed(allowed: str) -> Reply:
    return _error(405, "method_not_allowed", f"Only {allowed} is answered here.", {"Allow": allowed})


def route(method: str, path: str, headers: dict[str, str], body: bytes, *, port: int, token: str) -> Reply:
    """The inspector's answer. `headers` are lower-cased; `token` is the one in the link the server printed.

    The server has already refused, for every path, a foreign Host or Origin and a body over
    the cap (median_lambda.devserver.guards); what is left here is the inspector's own.
    """
    if path in (INSPECTOR_PATH, f"{INSPECTOR_PATH}/"):
        # The page holds no secret: it is served to anyone, and runs nothing without the token.
        return _page() if method in ("GET", "HEAD") else _method_not_allowed("GET")
    if path == API_PATH or path.startswith(f"{API_PATH}/"):
        refusal = _token_refusal(headers, token)
        if refusal:
            return refusal
    if path == f"{API_PATH}/manifest":
        return manifest_view(port) if method in ("GET", "HEAD") else _method_not_allowed("GET")
    if path == REVISION_PATH:
        return _json(200, {"revision": revision()}) if method in ("GET", "HEAD") else _method_not_allowed("GET")
    if path == f"{API_PATH}/call":
        if method != "POST":
            return _method_not_allowed("POST")
        refusal = _cross_site_refusal(headers)
        return refusal or _call_from_request(body, port)
    return _error(404, "not_found", f"The inspector has no {path}; open {INSPECTOR_PATH}.")


def new_token() -> str:
    """The inspector's token for this run of the server: 256 random bits, as Jupyter's is."""
    return secrets.token_urlsafe(32)


def page_url(port: int, token: str) -> str:
    """The link the server prints: the page, with the token it keeps and sends on every API request."""
    return f"{endpoint_url(port).rstrip('/')}{INSPECTOR_PATH}?{TOKEN_PARAMETER}={token}"


def _token_refusal(headers: dict[str, str], token: str) -> Reply | None:
    """401 without the token, 403 with another; None when the request carries this server's.

    Reaching the loopback port is not enough: another user of a shared machine, or a container
    on the host's network, reaches it too. Only the person at the terminal saw the printed link.
    """
    given = headers.get(TOKEN_HEADER, "")
    if not given:
        return _error(
            401,
            ErrorCode.UNAUTHORIZED,
            "This page has no inspector token: open the inspector from the link `make serve` printed in its "
            "terminal, which carries it.",
        )
    # Compared in constant time, and as bytes: a header may hold any character.
    if not hmac.compare_digest(given.encode("utf-8", "surrogateescape"), token.encode("utf-8")):
        return _error(
            403,
            ErrorCode.FORBIDDEN,
            "This page's inspector token is not this server's (it prints a new one each time it starts): "
            "open the inspector from the link `make serve` printed in its terminal.",
        )
    return None


def _cross_site_refusal(headers: dict[str, str]) -> Reply | None:
    """Only the inspector's own page may make calls: another site's page could otherwise run tools here.

    The server has refused another site's Origin already; the content type stops a
    cross-site form post even from a browser that leaves its Origin out.
    """
    # A cross-site form cannot send this type without a preflight, which this server never grants.
    if headers.get("content-type", "").split(";", 1)[0].strip().lower() != JSON_CONTENT_TYPE:
        return _error(415, "unsupported_media_type", f"Send the call as {JSON_CONTENT_TYPE}.")
    return None


def _page() -> Reply:
    return Reply(200, PAGE_FILE.read_bytes(), "text/html; charset=utf-8", dict(_PAGE_HEADERS))


def endpoint_url(port: int) -> str:
    return f"http://127.0.0.1:{port}/"


def signing_key() -> tuple[str | None, str]:
    """The key the inspector signs with, or None and why calls cannot be made."""
    if os.environ.get(KEY_SECRET_ENV, "").strip():
        return None, (
            f"This server verifies with the key in Secrets Manager ({KEY_SECRET_ENV} is set), and the "
            f"inspector signs only with a local dev key. Unset {KEY_SECRET_ENV} to call tools from here."
        )
    key = os.environ.get(DEV_KEY_ENV, "").strip()
    if not key:
        return None, f"No dev key to sign with: start the server with `make serve`, which sets {DEV_KEY_ENV}."
    return key, ""


def manifest_view(port: int) -> Reply:
    """The manifest, its sync-rule problems and its size against Median's limits."""
    from median_lambda.authoring.registry import ToolLoadError, load_tools
    from median_lambda.manifest.build import build_manifest
    from median_lambda.manifest.rules import manifest_size

    with one_request_at_a_time:  # not while the tools reload
        try:
            manifest, problems = build_manifest(load_tools())
        except ToolLoadError as failed:
            # GET's own answer: the code and the lines, each naming the author's file and line.
            message = "The tools failed to import: " + "; ".join(failed.lines)
            body = {"error": {"code": ErrorCode.INVALID_MANIFEST, "message": message, "lines": failed.lines}}
            return _json(500, {**body, "revision": revision()})
    key, why_not = signing_key()
    return _json(
        200,
        {
            "revision": revision(),
            "endpoint": endpoint_url(port),
            "manifest": manifest,
            "problems": [
                {"tool": problem.tool, "field": problem.field, "rule": problem.rule, "text": str(problem)}
                for problem in problems
            ],
            "limits": {
                "tools": {"count": len(manifest["tools"]), "max": MAX_TOOLS},
                "bytes": {"size": manifest_size(manifest), "max": MAX_MANIFEST_BYTES},
                "fieldsPerTool": MAX_FIELDS,
                "schemaCharacters": MAX_SCHEMA_CHARS,
            },
            "risks": RISK_MEANINGS,
            "signing": {"available": key is not None, "reason": why_not},
            "retries": retries_view(),
        },
    )


def new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:16]}"


def retries_view() -> dict[str, object]:
    """Whether a call sent again with its callId is answered from a record here, in words the page shows.

    Deployed, the idempotency table answers a retry and the tool does not run again. Here that
    holds only with a table (`make serve LOCAL_AWS=moto` makes one on moto): without one, the
    inspector's "Reuse the last callId" runs the tool again, and the page says so plainly.
    """
    from median_lambda.calls.idempotency import table_name

    table = table_name()
    if table is None:
        return {
            "deduplicated": False,
            "message": (
                f"Calls are not deduplicated here: there is no idempotency table ({IDEMPOTENCY_TABLE_ENV} is not "
                "set), so a call sent again with the same callId runs the tool again. Deployed, the retry is "
                "answered from the table and the tool runs once; make serve LOCAL_AWS=moto has the table too."
            ),
        }
    return {
        "deduplicated": True,
        "message": (
            f"Calls are deduplicated as deployed: a call sent again with the same callId is answered from the "
            f"idempotency table ({table}), and the tool does not run again."
        ),
    }


def _call_from_request(body: bytes, port: int) -> Reply:
    try:
        document = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return _error(400, "bad_request", "Send the call as a JSON object.")
    if not isinstance(document, dict):
        return _error(400, "bad_request", "Send the call as a JSON object.")
    op = document.get("op", OP_CALL)
    if op not in OPS:
        return _error(400, "bad_request", f"op must be one of: {', '.join(OPS)}.")
    call_id = document.get("callId")
    if call_id is not None and (not isinstance(call_id, str) or not call_id):
        return _error(400, "bad_request", "callId must be a non-empty string, or left out for a fresh one.")
    if op == OP_DIAGNOSTICS:
        return perform(diagnostics_body(), None, port)
    tool, tool_input = document.get("tool"), document.get("input", {})
    if not isinstance(tool, str) or not tool:
        return _error(400, "bad_request", "Name the tool to call.")
    if not isinstance(tool_input, dict):
        return _error(400, "bad_request", "input must be a JSON object of the tool's fields.")
    from median_lambda.runtime.strict_json import nests_deeper_than

    call_id = call_id or new_call_id()
    # The handler's own limit, checked here because json.dumps cannot write back what 3.11's parser
    # still reads: the page gets the same 400 on every Python, and nothing is signed or sent.
    if nests_deeper_than(tool_input, MAX_NESTING_DEPTH - 1):
        return _error(
            400, "bad_request", f"input nests deeper than {MAX_NESTING_DEPTH} levels; Median's calls are flat objects."
        )
    return perform(call_body(tool, tool_input, callId=call_id, conversation=CONVERSATION), call_id, port)


def _explained(error: object, code: str, reference: str) -> str | None:
    """The traceback this process printed for the call under `reference`, when its answer's error is `code`:
    a crash's for internal_error, the exception behind the ToolError for tool_error."""
    from median_lambda.authoring.local_crash import explanation

    if not isinstance(error, dict) or error.get("code") != code:
        return None
    return explanation(reference)


def perform(body: bytes, call_id: str | None, port: int) -> Reply:
    """Sign the body with the dev key and POST it through the handler, as Median would."""
    key, why_not = signing_key()
    if key is None:
        return _error(503, "no_dev_key", why_not)
    reference = str(uuid.uuid4())  # the invocation's request id: what the handler explains a failure under
    response, elapsed_ms = invoke(signed_event("POST", body, key=key), request_id=reference)
    text = response.get("body", "")
    try:
        answer: Any = json.loads(text)
    except ValueError:
        answer = text
    error = answer.get("error") if isinstance(answer, dict) else None
    return _json(
        200,
        {
            "status": response["statusCode"],
            "ok": answer.get("ok") if isinstance(answer, dict) else None,
            "errorCode": error.get("code") if isinstance(error, dict) else None,
            "answer": answer,
            # Why a tool crashed, or what lay behind its ToolError, beside its answer: printed on this
            # machine's terminal too, never sent.
            "crash": _explained(error, ErrorCode.INTERNAL_ERROR, reference),
            "cause": _explained(error, ErrorCode.TOOL_ERROR, reference),
            "elapsedMs": round(elapsed_ms, 2),
            "callId": call_id,
            # Whether sending this callId again would be answered from a record, or run the tool again.
            "deduplicated": retries_view()["deduplicated"] if call_id is not None else None,
            "request": body.decode("utf-8"),
            "curl": post_command(endpoint_url(port), body),
        },
    )
