"""The dev server's HTTP side: `/_inspector` is the inspector; every other request is the Lambda's.

Each request to the endpoint becomes an API Gateway HTTP API (payload 2.0) event and goes
through `handler.app.lambda_handler`, as it would behind API Gateway. Every request, on
either side, first passes `devserver.guards`: loopback's Host, no other site's Origin, and
a body within the cap by its Content-Length.
"""

from __future__ import annotations

import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from devserver import inspector
from devserver.guards import admitted_body_length
from devserver.inspector import Reply
from devserver.lambda_runner import invoke
from handler.protocol import JSON_CONTENT_TYPE
from handler.testing import http_event

HOST = "127.0.0.1"


class DevRequestHandler(BaseHTTPRequestHandler):
    server_version = "median-devserver"
    server: DevServer

    def _serve(self) -> None:
        path = self.path.split("?", 1)[0]
        length = admitted_body_length(self.headers, self.server.port)
        if isinstance(length, Reply):
            self.close_connection = True  # the body, if any, stays unread
            self._send(length)
            return
        body = self.rfile.read(length) if length else b""
        headers = {name.lower(): value for name, value in self.headers.items()}
        if inspector.owns(path):
            self._send(inspector.route(self.command, path, headers, body, port=self.server.port))
        else:
            self._send(self._bridge(path, headers, body))

    def _bridge(self, path: str, headers: dict[str, str], body: bytes) -> Reply:
        """The Lambda's answer to this request, sent through API Gateway's event shape."""
        event = http_event(self.command, body, headers=headers, path=path, base64_body=True)
        response, _ = invoke(event)
        response_headers = dict(response.get("headers", {}))
        content_type = response_headers.pop("Content-Type", JSON_CONTENT_TYPE)
        return Reply(response["statusCode"], response.get("body", "").encode("utf-8"), content_type, response_headers)

    def _send(self, reply: Reply) -> None:
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(reply.body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _serve

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        path = self.path.split("?", 1)[0]
        if path == inspector.REVISION_PATH:
            return  # the open inspector page asks every second: its lines would bury everything else
        # The request line only: never headers, which carry the signature.
        sys.stderr.write(f"{self.command} {path} -> {args[1] if len(args) > 1 else ''}\n")


class DevServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int) -> None:
        # Loopback only: the inspector signs with the dev key for whoever asks.
        super().__init__((HOST, port), DevRequestHandler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        return inspector.endpoint_url(self.port)
