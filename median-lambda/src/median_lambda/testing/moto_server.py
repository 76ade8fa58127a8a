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

Why not `ThreadedMotoServer`: it takes no middleware, and wrapping its application would mean
replacing an attribute of its private `_server`. This runs what it and moto's own CLI run
(`DomainDispatcherApplication(create_backend_app)` with `MotoRequestHandler`, from
moto.moto_server.werkzeug_app, which both import, under werkzeug's public `make_server`), with the
middleware around it: the same moto, twenty lines more.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from werkzeug.serving import BaseWSGIServer

    StartResponse = Callable[..., Any]

HOST = "127.0.0.1"
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
# Fetch Metadata values a browser sends for a request one of its pages made to another site.
_OTHER_SITES = ("cross-site", "same-site")

# Fake credentials, as moto's own documentation uses: anything signs, and nothing real is sent.
FAKE_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing"}
# What would send a boto3 call elsewhere than the endpoint named, or sign it as someone real: a
# profile, a service's own AWS_ENDPOINT_URL_<SERVICE> (which wins over AWS_ENDPOINT_URL), the
# switch that makes boto3 ignore both, the sources of real credentials after the environment's,
# and the Parameters and Secrets extension's port, which the handler would read secrets through.
_REAL_ACCOUNT_VARIABLES = (
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
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


def aws_environment(endpoint: str, region: str, current: Iterable[str] = ()) -> tuple[dict[str, str], list[str]]:
    """The variables that point every boto3 client at `endpoint` and nowhere else: (to set, to unset).

    `current` is the names the environment holds now, so a service's own endpoint variable is unset too.
    Fake credentials come first in boto3's chain, and its config and credentials files are none,
    so a developer's profile, keys, SSO session or `endpoint_url` in ~/.aws never applies.
    """
    to_set = {
        **FAKE_CREDENTIALS,
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_DEFAULT_REGION": region,
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    services = [name for name in current if name.startswith(SERVICE_ENDPOINT_PREFIX)]
    return to_set, [*_REAL_ACCOUNT_VARIABLES, *services]


class LoopbackOnly:
    """WSGI middleware: this machine's AWS clients reach the application; no web page does (see the module)."""

    def __init__(self, application: Callable[[dict[str, Any], StartResponse], Iterable[bytes]]) -> None:
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


class LocalMotoServer:
    """moto's server on a free port of 127.0.0.1, behind `LoopbackOnly`, in a thread of this process."""

    def __init__(self) -> None:
        self._server: BaseWSGIServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> str:
        """Start serving; moto's URL, http://127.0.0.1:<port>."""
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
        from werkzeug.serving import make_server

        # werkzeug, moto's HTTP server, logs a line per AWS call even when not verbose: they would
        # bury the dev server's and the tests' own lines, and a failed call says what failed anyway.
        logging.getLogger("werkzeug").setLevel(logging.WARNING)
        guard = LoopbackOnly(DomainDispatcherApplication(create_backend_app))
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
