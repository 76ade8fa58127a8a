"""`python -m devserver`: serve the Lambda handler on http://127.0.0.1:3000 for local work.

Each HTTP request becomes an API Gateway HTTP API (payload 2.0) event and goes through
`handler.app.lambda_handler`, as it would behind API Gateway. It binds to loopback only.
"""

from __future__ import annotations

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

from handler.cli import LOCAL_DEV_KEY
from handler.protocol import DEV_KEY_ENV, KEY_SECRET_ENV
from handler.testing import FakeLambdaContext, http_event

HOST = "127.0.0.1"
DEFAULT_PORT = 3000
FUNCTION_TIMEOUT_SECONDS = 30.0


class LambdaBridge(BaseHTTPRequestHandler):
    server_version = "median-devserver"

    def _serve(self) -> None:
        from handler.app import lambda_handler

        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {name.lower(): value for name, value in self.headers.items()}
        path = self.path.split("?", 1)[0]
        event = http_event(self.command, body, headers=headers, path=path, base64_body=True)
        response = lambda_handler(event, FakeLambdaContext(timeout_seconds=FUNCTION_TIMEOUT_SECONDS))
        payload = response.get("body", "").encode("utf-8")
        self.send_response(response["statusCode"])
        for name, value in response.get("headers", {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _serve

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        # The request line only: never headers, which carry the signature.
        sys.stderr.write(f"{self.command} {self.path.split('?', 1)[0]} -> {args[1] if len(args) > 1 else ''}\n")


def main() -> int:
    port = int(os.environ.get("PORT", DEFAULT_PORT))
    if os.environ.get(KEY_SECRET_ENV):
        print(f"{KEY_SECRET_ENV} is set: the key comes from Secrets Manager.", file=sys.stderr)
    else:
        os.environ.setdefault(DEV_KEY_ENV, LOCAL_DEV_KEY)
        shown = "the built-in local dev key" if os.environ[DEV_KEY_ENV] == LOCAL_DEV_KEY else f"${DEV_KEY_ENV}"
        print(f"Verifying signatures with {shown}: {os.environ[DEV_KEY_ENV]}", file=sys.stderr)
    server = HTTPServer((HOST, port), LambdaBridge)
    url = f"http://{HOST}:{port}/"
    body = json.dumps({"version": 1, "op": "call", "tool": "orderStatus", "input": {"orderNumber": "ORD-1042"}})
    print(
        f"Serving the Median endpoint on {url}\n"
        "Try it from another terminal:\n"
        f'  curl -s {url} -H "median-signature: $(.venv/bin/python -m handler sign)"\n'
        f"  BODY='{body}'\n"
        f'  curl -s {url} -H "median-signature: $(.venv/bin/python -m handler sign --body "$BODY")" -d "$BODY"\n'
        "Press Ctrl-C to stop.",
        file=sys.stderr,
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
