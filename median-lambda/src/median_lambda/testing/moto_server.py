"""moto's server for this machine's own AWS clients only: what `median_aws` and `make serve LOCAL_AWS=moto` run.

moto's server answers whatever reaches it: any `Host`, any `Origin`, with CORS granting every
origin. On loopback that still includes every web page the developer opens: a page can send
requests to 127.0.0.1 through the browser, read the answers where CORS allows it, and, by a DNS
name rebound to 127.0.0.1, even without CORS. It would read every seeded secret, and rewrite a
parameter a tool reads its carrier's base URL from, so the tool sends its token elsewhere.

So the server listens on 127.0.0.1 only, and a small WSGI middleware in front of moto's own WSGI
application refuses, with 403 before moto sees it:

- a request whose `Host` is not a loopback name (`127.0.0.1`, `localhost`, `[::1]`): a page
  whose DNS name was rebound to 127.0.0.1. A browser's `Host` names the address it connected to,
  so another port only ever comes through a relay on this machine (the tests' fault relay);
- a request carrying an `Origin`: browsers send one with every cross-site request and every
  preflight, boto3 never does;
- a request a browser marks as sent from another site (`Sec-Fetch-Site: cross-site` or
  `same-site`, which covers another port of localhost).

and takes every `Access-Control-*` header off moto's answers, so its CORS allows no origin at all.

Loopback is this machine's, not this developer's: every other account on the machine reaches
127.0.0.1 too. moto checks no signature, so any of them could read every seeded secret and plant
another value. So behind that guard, a second one, `SignedWithTheRunsCredential`, lets moto see
only a request signed (AWS Signature Version 4, or S3's version 2, which boto3 still presigns S3
links with for an endpoint like this) with this run's credential: a random secret
access key made by the process that starts the server (`run_credentials`), which reaches the
processes that must use it through their environment only (`aws_environment`), never a command
line, which any account can read in `ps`. The signature is checked, not just the key id: botocore's
own signer computes it anew from what arrived (the method, the path, the query, the signed headers
and a digest of the body), as moto's own IAM authentication does, so a request without it, one
signed with a guessed key (moto's documented `testing`), and a signature taken from another
request (another body, another target) are all refused, 403 before moto reads them, in the
error shape the call's protocol reads (`LocalAwsCredentialRequired`). So are a signature older
than the 15 minutes AWS allows, and moto's own `/moto-api/` (its dashboard, its data dump, its
reset) unless signed too.

Why not moto's own authentication (`INITIAL_NO_AUTH_ACTION_COUNT`): it checks a signature against
an IAM user kept inside moto, which the reset before every `median_aws` test deletes, and then
holds every call to that user's IAM policies, so each test would have to make a user and an
allow-all policy again before its first call; and it leaves `/moto-api/` open.

Why not `ThreadedMotoServer`: it takes no middleware, and wrapping its application would mean
replacing an attribute of its private `_server`. This runs what it and moto's own CLI run
(`DomainDispatcherApplication(create_backend_app)` with `MotoRequestHandler`, from
moto.moto_server.werkzeug_app, which both import, under werkzeug's public `make_server`), with the
middleware around it: the same moto, twenty lines more.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import io
import json
import logging
import os
import re
import threading
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from median_lambda.testing.no_aws import LocalCredentials, aws_error, run_credentials

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from werkzeug.serving import BaseWSGIServer

    StartResponse = Callable[..., Any]
    Application = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]

HOST = "127.0.0.1"
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
# Fetch Metadata values a browser sends for a request one of its pages made to another site.
_OTHER_SITES = ("cross-site", "same-site")

# What would send a boto3 call elsewhere than the endpoint named, or sign it as someone real: a
# profile, a session token (the run's credential has none), a service's own
# AWS_ENDPOINT_URL_<SERVICE> (which wins over AWS_ENDPOINT_URL), the switch that makes boto3
# ignore both, the sources of real credentials after the environment's, and the Parameters and
# Secrets extension's port, which the handler would read secrets through.
_REAL_ACCOUNT_VARIABLES = (
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_REGION",
    "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
    "AWS_ROLE_SESSION_NAME",
    "PARAMETERS_SECRETS_EXTENSION_HTTP_PORT",
)
SERVICE_ENDPOINT_PREFIX = "AWS_ENDPOINT_URL_"


def aws_environment(
    endpoint: str | None,
    region: str,
    current: Iterable[str] = (),
    credentials: LocalCredentials | None = None,
) -> tuple[dict[str, str], list[str]]:
    """The variables that point every boto3 client at `endpoint` and nowhere else: (to set, to unset).

    `current` is the names the environment holds now, so a service's own endpoint variable is unset too.
    The run's credential (`credentials`, this process's by default) comes first in boto3's chain,
    and its config and credentials files are none, so a developer's profile, keys, SSO session or
    `endpoint_url` in ~/.aws never applies. With no `endpoint`, none is named either: clients go to
    AWS's own addresses, where a test's guard (median_lambda/testing/no_aws.py) or moto's `mock_aws` answers them.
    """
    to_set = {
        **(credentials or run_credentials()).environment(),
        "AWS_DEFAULT_REGION": region,
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    services = [name for name in current if name.startswith(SERVICE_ENDPOINT_PREFIX)]
    if endpoint is None:
        return to_set, [*_REAL_ACCOUNT_VARIABLES, "AWS_ENDPOINT_URL", *services]
    return {**to_set, "AWS_ENDPOINT_URL": endpoint}, [*_REAL_ACCOUNT_VARIABLES, *services]


class LoopbackOnly:
    """WSGI middleware: this machine's AWS clients reach the application; no web page does (see the module)."""

    def __init__(self, application: Application) -> None:
        self.application = application

    @staticmethod
    def refusal(environ: dict[str, Any]) -> str | None:
        """Why this request is refused, or None. A header sent twice arrives joined, and matches nothing."""
        host = str(environ.get("HTTP_HOST", "")).strip().lower()
        name = host.rsplit(":", 1)[0] if host.rsplit(":", 1)[-1].isdigit() else host
        if name not in _LOOPBACK_NAMES:
            return "This local AWS answers only at 127.0.0.1 (or localhost), where its clients point."
        if "HTTP_ORIGIN" in environ:
            return "This local AWS takes no requests from web pages."
        if str(environ.get("HTTP_SEC_FETCH_SITE", "")).strip().lower() in _OTHER_SITES:
            return "This local AWS takes no requests from other sites' pages."
        return None

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        refused = self.refusal(environ)
        if refused is not None:
            body = json.dumps({"error": {"code": "forbidden", "message": refused}}).encode("utf-8")
            headers = [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
            start_response("403 Forbidden", headers)
            return [body]

        def without_cors(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            kept = [(name, value) for name, value in headers if not name.lower().startswith("access-control-")]
            return start_response(status, kept, exc_info)

        return self.application(environ, without_cors)


# --- Only this run's credential ----------------------------------------------------------------------

CREDENTIAL_REQUIRED = "LocalAwsCredentialRequired"
_HOW_TO_REACH_IT = (
    "This local AWS answers only requests signed with the credential its run made, which its processes get through "
    "their environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY): make serve's tools, a test's boto3, a process "
    "either starts. From another shell of yours, load the file make serve names (README.md's configuration guide)."
)
_ALGORITHM = "AWS4-HMAC-SHA256"
_TIMESTAMP = "%Y%m%dT%H%M%SZ"
# How far a signature's time may be from now, as AWS allows (its RequestTimeTooSkewed).
_SKEW = datetime.timedelta(minutes=15)
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")


def _lower_headers(environ: dict[str, Any]) -> dict[str, str]:
    """The request's headers as WSGI holds them, by lower-case name."""
    headers = {
        key[5:].replace("_", "-").lower(): str(value) for key, value in environ.items() if key.startswith("HTTP_")
    }
    for key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
        if environ.get(key):
            headers[key.replace("_", "-").lower()] = str(environ[key])
    return headers


def _raw_target(environ: dict[str, Any]) -> str:
    """The path and query exactly as the request line sent them, which is what was signed."""
    raw = str(environ.get("RAW_URI") or environ.get("REQUEST_URI") or "")
    if not raw.startswith("/"):
        from urllib.parse import quote

        raw = quote(str(environ.get("PATH_INFO", "/")))
        if environ.get("QUERY_STRING"):
            raw += f"?{environ['QUERY_STRING']}"
    return raw


def _query_pairs(target: str) -> list[str]:
    """The raw `name=value` pairs of the query, as sent."""
    query = target.partition("?")[2]
    return query.split("&") if query else []


def _query_values(pairs: list[str]) -> dict[str, str]:
    return {name: unquote(value) for name, _, value in (pair.partition("=") for pair in pairs)}


def signature_problem(
    credentials: LocalCredentials,
    method: str,
    target: str,
    headers: dict[str, str],
    body: bytes,
    now: datetime.datetime | None = None,
) -> str | None:
    """Why a request (its raw path and query, its headers by lower-case name, its body) is not signed
    with `credentials`; None when it is.

    botocore's signers, not code of our own, compute what the signature must be: they are what
    signed the request, path encoding, query order and header folding included, and their public
    steps recompute a signature for the request's own time. moto's own IAM authentication
    (moto/iam/access_control.py) checks signatures the same way. Signature Version 4 in an
    Authorization header or a presigned URL; S3's version 2 too, which boto3 still presigns S3
    URLs with for an endpoint like this one.
    """
    now = now or datetime.datetime.now(datetime.UTC)
    names = {pair.partition("=")[0] for pair in _query_pairs(target)}
    authorization = headers.get("authorization", "").strip()
    if authorization.startswith(f"{_ALGORITHM} ") or (not authorization and "X-Amz-Signature" in names):
        return _sigv4_problem(credentials, method, target, headers, body, now)
    if authorization.startswith("AWS ") or (not authorization and {"AWSAccessKeyId", "Signature"} <= names):
        return _s3_sigv2_problem(credentials, method, target, headers, now)
    if authorization:
        return "this request is not signed with AWS Signature Version 4"
    return "this request is not signed"


def _other_key(claimed: str, credentials: LocalCredentials) -> bool:
    return not hmac.compare_digest(claimed.encode(), credentials.access_key_id.encode())


def _sigv4_problem(
    credentials: LocalCredentials,
    method: str,
    target: str,
    headers: dict[str, str],
    body: bytes,
    now: datetime.datetime,
) -> str | None:
    from botocore.auth import S3SigV4Auth, S3SigV4QueryAuth, SigV4Auth, SigV4QueryAuth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    path = target.partition("?")[0]
    pairs = _query_pairs(target)
    presigned = "authorization" not in headers
    if presigned:
        # The signature and what it covers are in the query, and its own pair is not part of what was signed.
        values = _query_values(pairs)
        fields = {
            "Credential": values.get("X-Amz-Credential", ""),
            "SignedHeaders": values.get("X-Amz-SignedHeaders", ""),
            "Signature": values.get("X-Amz-Signature", ""),
        }
        timestamp = values.get("X-Amz-Date", "")
        url = f"http://localhost{path}?{'&'.join(p for p in pairs if p.partition('=')[0] != 'X-Amz-Signature')}"
    else:
        fields = dict(part.strip().partition("=")[::2] for part in headers["authorization"].split(" ", 1)[1].split(","))
        timestamp = headers.get("x-amz-date", "")
        url = f"http://localhost{target}"
    scope = fields.get("Credential", "").split("/")
    if len(scope) != 5 or scope[4] != "aws4_request" or not fields.get("Signature") or not fields.get("SignedHeaders"):
        return "its signature is not a whole SigV4 one (Credential, SignedHeaders, Signature)"
    access_key_id, day, region, service, _ = scope
    if _other_key(access_key_id, credentials):
        return "it is signed with another credential than this run's"
    try:
        signed_at = datetime.datetime.strptime(timestamp, _TIMESTAMP).replace(tzinfo=datetime.UTC)
    except ValueError:
        return "its signature's time (X-Amz-Date) is not one"
    if not timestamp.startswith(day) or signed_at - now > _SKEW:
        return "its signature's time is not now"
    if presigned:
        try:
            expires = datetime.timedelta(seconds=int(_query_values(pairs).get("X-Amz-Expires", "")))
        except ValueError:
            return "its presigned URL says no X-Amz-Expires"
        if now > signed_at + expires:
            return "its presigned URL has expired"
    elif now - signed_at > _SKEW:
        return "it was signed more than 15 minutes ago"
    signed_headers = fields["SignedHeaders"].split(";")
    if any(name not in headers for name in signed_headers):
        return "a header its signature covers is missing"
    declared = headers.get("x-amz-content-sha256", "") if "x-amz-content-sha256" in signed_headers else ""
    if _SHA256_HEX.fullmatch(declared) and not hmac.compare_digest(declared, hashlib.sha256(body).hexdigest()):
        return "its body is not the one signed (X-Amz-Content-SHA256)"
    request = AWSRequest(method=method, url=url, headers={name: headers[name] for name in signed_headers}, data=body)
    request.context["timestamp"] = timestamp
    signer_class = {
        (False, False): SigV4Auth,
        (False, True): S3SigV4Auth,
        (True, False): SigV4QueryAuth,
        (True, True): S3SigV4QueryAuth,
    }[(presigned, service == "s3")]
    signer = signer_class(Credentials(credentials.access_key_id, credentials.secret_access_key), service, region)
    expected = signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request)
    if not hmac.compare_digest(expected.encode(), fields["Signature"].encode()):
        return "its signature does not match this run's credential"
    return None


def _bucket_resource(target: str) -> str | None:
    """S3's resource for a request on a bucket alone, `/bucket/`, as botocore signs it (its authPath);
    None for any other, whose resource is its path."""
    path = target.partition("?")[0]
    return f"{path}/" if path.count("/") == 1 and len(path) > 1 else None


def _s3_sigv2_problem(
    credentials: LocalCredentials, method: str, target: str, headers: dict[str, str], now: datetime.datetime
) -> str | None:
    """S3's Signature Version 2: `Authorization: AWS key:signature` with a Date, or a presigned URL's
    AWSAccessKeyId, Signature and Expires, over botocore's canonical string (HmacV1Auth)."""
    from email.utils import parsedate_to_datetime
    from urllib.parse import urlsplit

    from botocore.auth import HmacV1Auth
    from botocore.compat import HTTPHeaders
    from botocore.credentials import Credentials

    values = _query_values(_query_pairs(target))
    if "authorization" in headers:
        access_key_id, _, signature = headers["authorization"].strip().removeprefix("AWS ").partition(":")
        signed = headers
        try:
            signed_at = parsedate_to_datetime(headers.get("date", ""))
        except (TypeError, ValueError):
            return "its signature's time (Date) is not one"
        if signed_at.tzinfo is None or abs(now - signed_at) > _SKEW:
            return "it was signed more than 15 minutes from now"
        date = headers["date"]
    else:
        access_key_id, signature = values.get("AWSAccessKeyId", ""), values.get("Signature", "")
        # A presigned URL carries in its query the headers it was signed with.
        signed = {
            name.lower(): value
            for name, value in values.items()
            if name.lower().startswith("x-amz-") or name.lower() in ("content-md5", "content-type")
        }
        try:
            expires = int(values.get("Expires", ""))
        except ValueError:
            return "its presigned URL says no Expires"
        if now.timestamp() > expires:
            return "its presigned URL has expired"
        date = str(expires)
    if _other_key(access_key_id, credentials):
        return "it is signed with another credential than this run's"
    custom = HTTPHeaders()
    for name, value in signed.items():
        custom[name] = value
    signer = HmacV1Auth(Credentials(credentials.access_key_id, credentials.secret_access_key))
    amz_headers = signer.canonical_custom_headers(custom)  # type: ignore[arg-type]  # botocore passes HTTPHeaders too
    string_to_sign = "\n".join(
        [
            method.upper(),
            signed.get("content-md5", "").strip(),
            signed.get("content-type", "").strip(),
            date,
            *([amz_headers] if amz_headers else []),
            signer.canonical_resource(urlsplit(f"http://localhost{target}"), auth_path=_bucket_resource(target)),
        ]
    )
    if not hmac.compare_digest(signer.sign_string(string_to_sign).encode(), signature.encode()):
        return "its signature does not match this run's credential"
    return None


class SignedWithTheRunsCredential:
    """WSGI middleware: moto sees only a request signed with this server's credential (see the module)."""

    def __init__(self, application: Application, credentials: LocalCredentials) -> None:
        self.application = application
        self.credentials = credentials

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        from werkzeug.wsgi import get_input_stream

        # Read whole, to digest what was signed, and handed to moto as it arrived.
        body = get_input_stream(environ).read()
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        headers = _lower_headers(environ)
        method = str(environ.get("REQUEST_METHOD", "GET"))
        try:
            problem = signature_problem(self.credentials, method, _raw_target(environ), headers, body)
        except Exception:  # whatever a made-up signature trips in the parsing (a huge X-Amz-Expires), it is refused
            problem = "its signature cannot be read"
        if problem is None:
            return self.application(environ, start_response)
        content_type, answer = aws_error(headers, CREDENTIAL_REQUIRED, f"Refused: {problem}. {_HOW_TO_REACH_IT}")
        start_response(
            "403 Forbidden",
            [
                ("Content-Type", content_type),
                ("Content-Length", str(len(answer))),
                ("x-amzn-ErrorType", CREDENTIAL_REQUIRED),
            ],
        )
        return [answer]


class LocalMotoServer:
    """moto's server on a free port of 127.0.0.1, behind `LoopbackOnly` and `SignedWithTheRunsCredential`,
    in a thread of this process. It answers `credentials` (this process's run credential by default) alone."""

    def __init__(self, credentials: LocalCredentials | None = None) -> None:
        self.credentials = credentials or run_credentials()
        self._server: BaseWSGIServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> str:
        """Start serving; moto's URL, http://127.0.0.1:<port>."""
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
        from werkzeug.serving import make_server

        # werkzeug, moto's HTTP server, logs a line per AWS call even when not verbose: they would
        # bury the dev server's and the tests' own lines, and a failed call says what failed anyway.
        logging.getLogger("werkzeug").setLevel(logging.WARNING)
        guard = LoopbackOnly(
            SignedWithTheRunsCredential(DomainDispatcherApplication(create_backend_app), self.credentials)
        )
        # Port 0: the kernel picks a free port as it binds, so no other process can take it in between.
        self._server = make_server(HOST, 0, guard, threaded=True, request_handler=MotoRequestHandler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="moto", daemon=True)
        self._thread.start()
        return self.endpoint

    @property
    def endpoint(self) -> str:
        if self._server is None:
            raise RuntimeError("start() the server first")
        return f"http://{HOST}:{self._server.port}"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
