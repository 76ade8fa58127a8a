"""`python -m devserver`: serve the Lambda handler on http://127.0.0.1:3000 for local work.

Each HTTP request becomes an API Gateway HTTP API (payload 2.0) event and goes through
`handler.app.lambda_handler`, as it would behind API Gateway; /_inspector serves the
inspector page, which runs tools only when opened from the link printed here (its token).
It binds to loopback only, and reloads the tools when a file of theirs is saved
(devserver.reloader).
"""

from __future__ import annotations

import os
import sys

from devserver.curl import example_call, get_command, post_command
from devserver.dev_key import use_dev_key
from devserver.reloader import ToolsReloader
from devserver.server import DevServer
from handler.local_key import DevKeyUnavailable
from handler.protocol import KEY_SECRET_ENV

DEFAULT_PORT = 3000


def _served_manifest() -> dict[str, object] | None:
    """The manifest of the tools served, for the example call; None if they fail to load."""
    from handler.manifest import build_manifest
    from handler.registry import load_tools

    try:
        return build_manifest(load_tools())[0]
    except Exception:  # the author's own code: GET and the inspector say what broke
        return None


def main() -> int:
    port = int(os.environ.get("PORT", DEFAULT_PORT))
    if os.environ.get(KEY_SECRET_ENV):
        print(f"{KEY_SECRET_ENV} is set: the key comes from Secrets Manager.", file=sys.stderr)
    else:
        try:
            print(use_dev_key(), file=sys.stderr)
        except DevKeyUnavailable as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    server = DevServer(port)
    url = server.url
    # No bytecode written for the tools: a .pyc is trusted by its source's size and mtime in whole
    # seconds, so a same-length edit saved within the second of the last compile would be served stale.
    sys.dont_write_bytecode = True
    # Loaded before serving, so a tool module that fails to import is said at once; the server runs regardless.
    reloader = ToolsReloader()
    reloader.load()
    reloader.start()
    example = post_command(url, example_call(_served_manifest()))
    indented = "\n".join(f"  {line}" for line in example.splitlines())
    print(
        f"Serving the Median endpoint on {url}\n"
        # The token in this link is what lets the page run tools: whoever reads this terminal has it.
        f"Inspect and try your tools in a browser: {server.inspector_url}\n"
        "Or from another terminal:\n"
        f"  {get_command(url)}\n"
        f"{indented}\n"
        "Press Ctrl-C to stop.",
        file=sys.stderr,
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        reloader.stop()
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
