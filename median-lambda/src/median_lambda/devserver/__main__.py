"""`python -m median_lambda.devserver`: serve the Lambda handler on http://127.0.0.1:3000 for local work.

Each HTTP request becomes an API Gateway HTTP API (payload 2.0) event and goes through
`median_lambda.app.lambda_handler`, as it would behind API Gateway; /_inspector serves the
inspector page, which runs tools only when opened from the link printed here (its token).
It binds to loopback only, and reloads the tools when a file of theirs is saved
(median_lambda.devserver.reloader).
"""

from __future__ import annotations

import errno
import os
import signal
import sys

from median_lambda.devserver import local_aws
from median_lambda.devserver.curl import ExampleCall, example_call, get_command, post_command
from median_lambda.devserver.dev_key import use_dev_key
from median_lambda.devserver.reloader import ToolsReloader
from median_lambda.devserver.server import HOST, DevServer
from median_lambda.key.local_key import DevKeyUnavailable
from median_lambda.protocol import KEY_SECRET_ENV

DEFAULT_PORT = 3000
ANOTHER_PORT = 8080  # what a busy port's message suggests instead
MAX_PORT = 65535


def _example_call() -> ExampleCall:
    """The example call of the tools served, held to the first one's input model; the diagnostics operation if
    they fail to load."""
    from median_lambda.authoring.registry import load_tools
    from median_lambda.manifest.build import build_manifest

    try:
        registry = load_tools()
        manifest = build_manifest(registry)[0]
    except Exception:  # the author's own code: GET and the inspector say what broke
        return example_call(None)
    return example_call(manifest, {tool.name: tool.input_model for tool in registry.tools})


def _port() -> int | None:
    """$PORT as a TCP port number, or None once it has said why it is not one."""
    given = os.environ.get("PORT", "").strip() or str(DEFAULT_PORT)
    try:
        port = int(given)
    except ValueError:
        port = -1
    if not 0 <= port <= MAX_PORT:
        print(
            f"error: PORT={given} is not a port number; give one from 1024 to {MAX_PORT}: {_another(port)}",
            file=sys.stderr,
        )
        return None
    return port


def _another(taken: int) -> str:
    """The command that serves on another port."""
    return f"PORT={ANOTHER_PORT if taken != ANOTHER_PORT else ANOTHER_PORT + 1} make serve"


def _listening(port: int) -> DevServer | None:
    """The server bound to loopback's `port`, or None once it has said, in one line, why it cannot be."""
    try:
        return DevServer(port)
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            why = f"port {port} is already in use on {HOST} (another make serve, or a make start-api?)"
        elif error.errno == errno.EACCES:
            why = f"port {port} needs privileges this user does not have"
        else:
            why = f"cannot listen on {HOST}:{port} ({error.strerror or error})"
        print(f"error: {why}. Stop it, or pick another port: {_another(port)}", file=sys.stderr)
        return None


def _stage_line() -> str | None:
    """Which table of settings.toml the tools read, when $MEDIAN_STAGE names a stage other than the default."""
    from median_lambda.authoring.settings import DEFAULT_STAGE, settings_file_shown, stage

    current = stage()
    if current == DEFAULT_STAGE:
        return None
    return f"Stage {current}: the tools read {settings_file_shown()} [{current}], then [{DEFAULT_STAGE}]."


def _refused_stage() -> str | None:
    """Why `make serve` will not start as $MEDIAN_STAGE: it names no stage of settings.toml (a typo, most
    often), which a deployed function would refuse too; None when it names one."""
    from median_lambda.authoring.settings import ConfigurationError, this_stage_problem

    try:
        return this_stage_problem()
    except ConfigurationError:
        return None  # the file itself is broken: loading the tools says so, at once


def _named_as_deployed() -> None:
    """The logs and metrics named by the project's stack, as deployed, not by median-lambda's placeholder; a name
    the environment gives stays."""
    from median_lambda.project.sam_config import named_as_deployed

    for variable, name in named_as_deployed().items():
        if not os.environ.get(variable, "").strip():
            os.environ[variable] = name


def main() -> int:
    _named_as_deployed()
    port = _port()
    if port is None:
        return 2
    refused = _refused_stage()
    if refused is not None:
        print(f"error: {refused}. A function deployed as it would refuse every request.", file=sys.stderr)
        return 2
    server = _listening(port)
    if server is None:
        return 1
    if os.environ.get(KEY_SECRET_ENV):
        print(f"{KEY_SECRET_ENV} is set: the key comes from Secrets Manager.", file=sys.stderr)
    else:
        try:
            print(use_dev_key(), file=sys.stderr)
        except DevKeyUnavailable as error:
            print(f"error: {error}", file=sys.stderr)
            server.server_close()
            return 2
    url = server.url
    try:
        moto = local_aws.start() if local_aws.requested() else None
    except local_aws.LocalAwsError as error:
        server.server_close()
        print(f"error: {error}", file=sys.stderr)
        return 2
    if moto is not None:
        # Before the tools load: their clients, and the handler's, are made pointed at moto.
        print(moto.summary(), file=sys.stderr)
    stage_line = _stage_line()
    if stage_line is not None:
        print(stage_line, file=sys.stderr)
    # No bytecode written for the tools: a .pyc is trusted by its source's size and mtime in whole
    # seconds, so a same-length edit saved within the second of the last compile would be served stale.
    sys.dont_write_bytecode = True
    # Loaded before serving, so a tool module that fails to import is said at once; the server runs regardless.
    reloader = ToolsReloader()
    reloader.load()
    reloader.start()
    example = _example_call()
    indented = "\n".join(f"  {line}" for line in post_command(url, example.body).splitlines())
    if example.refused:
        indented += f"\n  ({example.refused})"
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
    # A closed terminal (SIGHUP) or a process manager's stop (SIGTERM) ends it as Ctrl-C does, so
    # what it made goes with it: the local AWS's credential file among it (median_lambda/devserver/local_aws.py).
    for stop in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(stop, _interrupted)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        reloader.stop()
        server.server_close()
        if moto is not None:
            moto.stop()
    return 0


def _interrupted(signal_number: int, frame: object) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    raise SystemExit(main())
