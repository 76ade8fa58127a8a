"""No real AWS from a test: every boto3 request to an address off this machine is refused, whenever its client was made.

The pytest plugin (median_lambda/testing/pytest_plugin.py) calls `guard_every_session` as pytest
loads it, which is before any conftest or test module is imported. It appends a `before-send`
handler to botocore's BUILTIN_HANDLERS, the list every botocore session (boto3's default one
included) registers as it is made, as moto does for its own `mock_aws`: so every client made
afterwards in the test process, at a conftest's import or in a test, holds it. Registered last,
it is asked only after every other `before-send` handler, and botocore sends the first answer
one of them gives: under moto's `mock_aws`, moto's handler answers first and this one stands
aside; a client pointed at this machine (the `median_aws` fixture's moto server, or one of the
test's own) is let through. Anything else is answered, without a byte leaving the machine, with
a 400 in the shape the call's protocol reads (JSON, XML or CBOR): botocore raises a ClientError
whose code is `UseTheMedianAwsFixture` and whose message names the service, the URL and the fix,
and it never retries one.

The `median_aws` fixture's moto server is on this machine, and answers only the test that asked
for it: while a test that did not (neither `median_aws` nor `median_aws_endpoint`, among its
fixtures or pulled in as it runs) sets up and runs, a request to it is refused too, so a test never
passes on an earlier test's tables, however an environment variable pointing at it was left behind.

A session made before the plugin loaded does not hold the handler, and neither does any client it
made. `made_before_the_guard` names what can be found of them (boto3's default session, a client,
session or resource a module holds): the plugin stops the run before any conftest, naming each.
"""

from __future__ import annotations

import functools
import ipaddress
import json
import secrets
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit
from xml.sax.saxutils import escape

if TYPE_CHECKING:
    from collections.abc import Iterator

    from botocore.awsrequest import AWSPreparedRequest, AWSResponse

ERROR_CODE = "UseTheMedianAwsFixture"
_FIX = (
    "a test reaches no real AWS. Give it the median_aws fixture (moto's server on this machine: "
    "docs/your-own-systems.md, 'Test each'), or run it under moto's own mock_aws"
)
# Said besides when moto is loaded: moto's handler is in a session only if moto was imported first.
_MOTO_ORDER = (
    " (under mock_aws already? Then this client's session was made before moto was imported, so moto "
    "cannot answer it: import moto before making the client, as moto's documentation says)"
)
# Whose clients never carry the guard's absence: made by botocore, boto3, moto or this library for their own use.
_OWN_MODULES = ("botocore", "boto3", "s3transfer", "moto", "median_lambda")

_NOT_ASKED = (
    "this test did not ask for the median_aws fixture, whose moto server answers only the tests that do: add "
    "median_aws to the test's parameters (docs/your-own-systems.md, 'Test each')"
)
# "asked": whether the test running now may reach the fixture's servers ("servers": their host:port); True
# between tests and while one tears down, where fixtures of any scope finish.
_state: dict[str, Any] = {"guarded": False, "made_before": [], "servers": set(), "asked": True}


@dataclass(frozen=True)
class LocalCredentials:
    """The credential a local moto server answers to: made at random for a run, known only to its processes.
    Nobody's account's: the test run signs with it, so neither a client a conftest makes nor any other carries
    the developer's."""

    access_key_id: str
    secret_access_key: str = field(repr=False)

    @classmethod
    def generate(cls) -> LocalCredentials:
        # An access key id as AWS shapes one (20 upper-case characters), never a real account's (AKIA/ASIA).
        return cls(f"LOCAL{secrets.token_hex(8).upper()[:15]}", secrets.token_urlsafe(32))

    def environment(self) -> dict[str, str]:
        """The variables boto3 reads it from, first in its chain."""
        return {"AWS_ACCESS_KEY_ID": self.access_key_id, "AWS_SECRET_ACCESS_KEY": self.secret_access_key}


@functools.cache
def run_credentials() -> LocalCredentials:
    """This process's credential for the moto servers it starts, made once: the test session's clients
    and `make serve`'s tools sign with it, and a process they start inherits it with their environment."""
    return LocalCredentials.generate()


class _Body:
    """The raw body botocore reads an answer from (AWSResponse.raw): `stream()` yields it."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._data


def _cbor_text(text: str) -> bytes:
    """A CBOR text string: major type 3, its length, its UTF-8 bytes."""
    data = text.encode("utf-8")
    if len(data) < 24:
        return bytes([0x60 + len(data)]) + data
    if len(data) < 256:
        return bytes([0x78, len(data)]) + data
    return bytes([0x79]) + len(data).to_bytes(2, "big") + data


def _cbor_error(code: str, message: str) -> bytes:
    """{"__type": code, "message": text} in CBOR, what smithy's rpc-v2-cbor protocol reads an error from."""
    return bytes([0xA2]) + _cbor_text("__type") + _cbor_text(code) + _cbor_text("message") + _cbor_text(message)


def _xml_error(code: str, message: str, *, query: bool) -> bytes:
    error = f"<Error><Type>Sender</Type><Code>{escape(code)}</Code><Message>{escape(message)}</Message></Error>"
    document = f"<ErrorResponse>{error}<RequestId>no-aws</RequestId></ErrorResponse>" if query else error
    return document.encode("utf-8")


def aws_error(headers: dict[str, str], code: str, message: str) -> tuple[str, bytes]:
    """(Content-Type, body) of an error botocore reads as `code` and `message`, in the protocol the
    request's headers (lower-case names) show it speaks. Send it with `x-amzn-ErrorType: code` too."""
    content_type = headers.get("content-type", "").lower()
    if headers.get("smithy-protocol", "").lower() == "rpc-v2-cbor":
        return "application/cbor", _cbor_error(code, message)
    if "x-amz-target" in headers or "json" in content_type:
        return "application/x-amz-json-1.1", json.dumps({"__type": code, "message": message}).encode("utf-8")
    if "x-www-form-urlencoded" in content_type:
        return "text/xml", _xml_error(code, message, query=True)  # the query protocol: STS, SNS, CloudFormation
    # A REST service: S3's XML, or the JSON of Lambda and API Gateway, which read the header.
    if "/s3/" in headers.get("authorization", "") or "x-amz-content-sha256" in headers:
        return "application/xml", _xml_error(code, message, query=False)
    return "application/json", json.dumps({"message": message}).encode("utf-8")


def on_this_machine(host: str | None) -> bool:
    """Whether a URL's host is a loopback address or name (RFC 6761: `localhost` and every `*.localhost`)."""
    if not host:
        return False
    name = host.lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def refuse_real_aws(request: AWSPreparedRequest, event_name: str, **_: Any) -> AWSResponse | None:
    """botocore's `before-send` handler: None (send it) for this machine; otherwise the refusal, as the answer."""
    from botocore.awsrequest import AWSResponse
    from botocore.compat import HTTPHeaders

    url = urlsplit(request.url)
    # before-send.<service>.<operation>, as botocore names the event.
    call = " ".join(event_name.split(".")[1:3]) or "an AWS request"
    where = f"{url.scheme}://{url.netloc}{url.path}"
    if on_this_machine(url.hostname):
        if _state["asked"] or url.netloc not in _state["servers"]:
            return None
        message = f"median-lambda refused {call} to {where}: {_NOT_ASKED}"
    else:
        message = f"median-lambda refused {call} to {where}: {_FIX}"
        if "moto" in sys.modules:
            message += _MOTO_ORDER
    headers = {
        str(name).lower(): value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        for name, value in request.headers.items()
    }
    content_type, body = aws_error(headers, ERROR_CODE, message)
    answer_headers = HTTPHeaders()
    for name, value in (
        ("Content-Type", content_type),
        ("x-amzn-ErrorType", ERROR_CODE),
        ("Content-Length", str(len(body))),
    ):
        answer_headers[name] = value
    return AWSResponse(request.url, 400, answer_headers, _Body(body))


def guard_every_session() -> None:
    """Put `refuse_real_aws` into every botocore session made from now on in this process, once; first note
    what was made before (`made_before_the_guard`)."""
    if _state["guarded"]:
        return
    # Only a process that imported botocore before this can hold a session made without the guard.
    if "botocore" in sys.modules:
        _state["made_before"] = _sessions_and_clients_found()
    from botocore import handlers

    handlers.BUILTIN_HANDLERS.append(("before-send", refuse_real_aws, handlers.REGISTER_LAST))
    _state["guarded"] = True


def answers_only_who_asks(endpoint: str) -> None:
    """The `median_aws` fixture's server at `endpoint` (http://host:port): only a test that asked reaches it."""
    _state["servers"].add(urlsplit(endpoint).netloc)


def running_test_asked(asked: bool) -> None:
    """Whether the test now setting up or running asked for `median_aws` (True again as it tears down)."""
    _state["asked"] = asked


def made_before_the_guard() -> list[str]:
    """What `guard_every_session` found made before it, which it cannot guard: one line each."""
    return list(_state["made_before"])


def _sessions_and_clients_found() -> list[str]:
    """boto3's default session, and every client, session or resource a module holds at its top level, each named."""
    from botocore.client import BaseClient
    from botocore.session import Session as BotocoreSession

    kinds: list[tuple[type, str]] = [(BaseClient, "client"), (BotocoreSession, "botocore session")]
    boto3 = sys.modules.get("boto3")
    if boto3 is not None:
        from boto3.resources.base import ServiceResource
        from boto3.session import Session as Boto3Session

        kinds += [(Boto3Session, "boto3 session"), (ServiceResource, "resource")]
    found = []
    if boto3 is not None and boto3.DEFAULT_SESSION is not None:
        found.append(
            "boto3's default session (boto3.client(), boto3.resource() and boto3.setup_default_session() make it)"
        )
    for module_name, module in list(sys.modules.items()):
        if module_name.split(".")[0] in _OWN_MODULES:
            continue
        try:
            names = list(vars(module).items())
        except TypeError:  # an object standing in sys.modules without a __dict__
            continue
        for name, value in names:
            said = next((said for kind, said in kinds if isinstance(value, kind)), None)
            if said is not None:
                found.append(f"{module_name}.{name}: {_service_of(value)}{said}")
    return found


def _service_of(made: Any) -> str:
    """`a DynamoDB ` for a client or resource of DynamoDB; `a ` for a session."""
    meta = getattr(made, "meta", None)
    model = getattr(meta, "service_model", None)
    service = getattr(model, "service_id", None) or getattr(meta, "service_name", None)
    return f"a {service} " if service else "a "
