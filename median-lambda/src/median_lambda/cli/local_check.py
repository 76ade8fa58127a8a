"""`sam local` as a user runs it, end to end: `make invoke` (a GET, then a POST) and `make start-api` with `make call`.

    median local check                     # the template's architecture
    LOCAL_ARCH=x86_64 median local check

It needs Docker (or Finch) and Lambda's Python image: GitHub's runners pull AWS's; offline,
`SAM_FLAGS=--skip-pull-image` uses one already present. It runs the Makefile's targets, not SAM
directly, so what it proves is what the docs tell a user to type. It calls whichever tools
`tools/` holds: the first tool of the manifest with an empty input, which its model answers
with 200 or 422, or, with no tools at all, a name that none has (404 `unknown_tool`).
Exit 0 when every answer is as the contract says; 1 with the first that is not.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path.cwd()  # the project's: every command runs in its root, as make runs them
START_API_WAIT_SECONDS = 180.0  # a first start builds SAM's image layer for the function
UNKNOWN_TOOL = "noSuchToolHere"


class CheckFailed(Exception):
    pass


def _make(*arguments: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - make, with the Makefile's own targets
        ["make", "--no-print-directory", *arguments],  # noqa: S607 - make is on PATH wherever this runs
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
    )


def _invoke_answer(request_env: dict[str, str]) -> tuple[int, dict[str, Any]]:
    """`make invoke`'s answer: sam local invoke prints the function's result as the last line of its stdout."""
    finished = _make("invoke", env=request_env)
    lines = [line for line in finished.stdout.splitlines() if line.strip().startswith("{")]
    if finished.returncode != 0 or not lines:
        raise CheckFailed(
            f"make invoke failed (exit {finished.returncode}):\n{finished.stdout[-2000:]}{finished.stderr[-2000:]}"
        )
    result = json.loads(lines[-1])
    return int(result["statusCode"]), json.loads(result.get("body") or "null")


def _post_request(manifest: dict[str, Any]) -> tuple[dict[str, str], set[int]]:
    """The POST to send, and the statuses the contract allows for it."""
    tools = manifest.get("tools") or []
    if tools:
        return {"TOOL": tools[0]["name"], "INPUT": "{}"}, {200, 422}
    return {"TOOL": UNKNOWN_TOOL, "INPUT": "{}"}, {404}


def check_invoke() -> dict[str, Any]:
    status, manifest = _invoke_answer({"TOOL": "", "INPUT": ""})
    if status != 200 or not isinstance(manifest, dict) or "tools" not in manifest:
        raise CheckFailed(f"make invoke (GET) answered {status}: {manifest}")
    print(f"make invoke (GET): 200, {len(manifest['tools'])} tool(s)")
    request, allowed = _post_request(manifest)
    status, body = _invoke_answer(request)
    if status not in allowed:
        raise CheckFailed(
            f"make invoke (POST {request['TOOL']}) answered {status}, not one of {sorted(allowed)}: {body}"
        )
    print(f"make invoke (POST {request['TOOL']}): {status}")
    return manifest


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1.0)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _status_line(stderr: str) -> str:
    """`make call`'s "METHOD URL -> STATUS REASON" line (make adds its own after an error answer)."""
    return next((line for line in stderr.splitlines() if " -> " in line), stderr.strip())


def check_start_api(manifest: dict[str, Any]) -> None:
    port = _free_port()
    server = subprocess.Popen(  # noqa: S603 - make, with the Makefile's own target
        ["make", "--no-print-directory", "start-api", f"PORT={port}"],  # noqa: S607
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # so the whole group (make, sam, its containers' client) stops together
    )
    try:
        deadline = time.monotonic() + START_API_WAIT_SECONDS
        while not _listening(port):
            if server.poll() is not None or time.monotonic() > deadline:
                output = server.stdout.read() if server.stdout else ""
                raise CheckFailed(f"make start-api never listened on port {port}:\n{output[-3000:]}")
            time.sleep(1.0)
        url = f"http://127.0.0.1:{port}/"
        got = _make("call", env={"URL": url, "TOOL": "", "INPUT": ""})
        if got.returncode != 0 or "-> 200" not in got.stderr:
            raise CheckFailed(f"make call (GET {url}) failed:\n{got.stderr[-2000:]}{got.stdout[-2000:]}")
        print(f"make start-api + make call (GET): {_status_line(got.stderr)}")
        request, allowed = _post_request(manifest)
        posted = _make("call", env={"URL": url, **request})
        if not any(f"-> {status} " in posted.stderr for status in allowed):
            raise CheckFailed(
                f"make call (POST {request['TOOL']}) answered other than {sorted(allowed)}:\n{posted.stderr[-2000:]}"
            )
        print(f"make start-api + make call (POST {request['TOOL']}): {_status_line(posted.stderr)}")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)


def main() -> int:
    try:
        manifest = check_invoke()
        check_start_api(manifest)
    except CheckFailed as failure:
        print(f"sam local check failed: {failure}", file=sys.stderr)
        return 1
    print("sam local: every answer as the contract says.")
    return 0
