"""What a stopped call leaves behind is bounded, and the handler's last answer needs nothing it may lack.

An `async def` tool that will not stop (it blocks its event loop with sync code, or catches its
cancellation) is stopped by the backstop, 0.25 s past its deadline. The loop it was stopped in
held three file descriptors (its selector and self-pipe) and the connections the tool opened:
kept for the container's life, a few hundred such calls left no descriptor for any tool, and
then none for the handler's own last answer either, which imported a module to explain the
error, so Median got a Lambda error with no JSON. Here each container is a process of its own,
as Lambda runs one, its descriptors limited for real (RLIMIT_NOFILE), never mocked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from handler.protocol import IDEMPOTENCY_TABLE_ENV, TOOLS_PACKAGE_ENV

PROJECT_ROOT = Path(__file__).resolve().parents[2]

# How many descriptors the container may open beyond those it holds once warm: a few stopped calls'
# worth, as they were kept (three for the loop, one for the tool's connection).
HEADROOM = 20
STOPPED_CALLS = 12
# A function this close to its timeout leaves the tool 0.3 s; it is stopped 0.25 s after that.
SHORT_FUNCTION_SECONDS = 0.8

_TOOLS = """
import asyncio
import os
import time

from pydantic import BaseModel

from handler import tool


class Nothing(BaseModel):
    pass


@tool(risk="low", idempotent=False)
async def stuck(args: Nothing) -> str:
    \"\"\"Open a connection to the carrier, then refuse to stop.\"\"\"
    reader, writer = await asyncio.open_connection("127.0.0.1", int(os.environ["CARRIER_PORT"]))
    if os.environ["MISBEHAVIOUR"] == "blocks its event loop":
        time.sleep(60)
    if os.environ["MISBEHAVIOUR"] == "blocks its event loop for a second":
        time.sleep(1)
        return "late"
    while True:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            pass


@tool(risk="low", idempotent=False)
async def answer_at_once(args: Nothing) -> str:
    \"\"\"Answer at once.\"\"\"
    await asyncio.sleep(0)
    return "here"
"""

_STOPPED_CALLS_THEN_ONE_MORE = """
import json
import os
import resource
import socket
import threading
import time

from handler.testing import FakeLambdaContext, MedianTestClient, call_body, signed_event

carrier = socket.create_server(("127.0.0.1", 0), backlog=256)  # never accepts: connections wait in its backlog
os.environ["CARRIER_PORT"] = str(carrier.getsockname()[1])
client = MedianTestClient(call_ids=False)


def send_here(name, seconds):
    try:
        answer = client.send(signed_event("POST", call_body(name, {})), FakeLambdaContext(timeout_seconds=seconds))
    except Exception as error:
        return {"raised": type(error).__name__}
    return {"status": answer.status, "body": answer.body}


def send(name, seconds):
    if os.environ.get("FROM_A_THREAD") != "1":  # as Lambda calls the handler: on the main thread
        return send_here(name, seconds)
    answers = []  # as a threaded server calls it, where no time limit can be armed
    thread = threading.Thread(target=lambda: answers.append(send_here(name, seconds)))
    thread.start()
    thread.join()
    return answers[0]


def open_descriptors():
    return len(os.listdir("/proc/self/fd"))


warm = send("answerAtOnce", 30)
before = open_descriptors()
_, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (before + %(headroom)d, hard))
stopped = [send("stuck", %(short)r) for _ in range(%(calls)d)]
time.sleep(%(settle)r)  # a tool left running in a thread ends, and its loop with it
try:
    after = open_descriptors()
except OSError:
    after = None
last = send("answerAtOnce", 30)
print(json.dumps({"warm": warm, "stopped": stopped, "last": last, "before": before, "after": after}))
"""


def run_container(tmp_path: Path, script: str, env: dict[str, str]) -> dict[str, Any]:
    """`script` run as a Lambda container runs the handler (its main thread), on a tools package of `_TOOLS`."""
    package = tmp_path / f"stuck_tools_{uuid.uuid4().hex[:8]}"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "carrier.py").write_text(_TOOLS, encoding="utf-8")
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(PROJECT_ROOT)]),
        TOOLS_PACKAGE_ENV: package.name,
        **env,
    }
    environment.pop(IDEMPOTENCY_TABLE_ENV, None)
    environment.update(env)
    finished = subprocess.run(  # noqa: S603 - this interpreter, this test's own script
        [sys.executable, "-c", script],
        env=environment,
        cwd=PROJECT_ROOT,
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert finished.returncode == 0, finished.stderr.decode()[-3000:]
    lines = [line for line in finished.stdout.decode().splitlines() if line.strip()]
    outcome: dict[str, Any] = json.loads(lines[-1])
    outcome["log"] = lines[:-1]
    return outcome


@pytest.mark.parametrize(
    ("misbehaviour", "thread"),
    [
        ("blocks its event loop", "main"),
        ("catches its cancellation", "main"),
        # Off the main thread no time limit can be armed: the tool runs on in the worker thread left
        # behind, and its loop is closed when it ends.
        ("blocks its event loop for a second", "a thread of its own"),
    ],
)
def test_stopped_async_calls_hold_no_descriptor_and_every_tool_goes_on_answering(
    tmp_path: Path, misbehaviour: str, thread: str
) -> None:
    # GIVEN a warm container whose descriptors are limited to a few stopped calls' worth beyond those it holds,
    # and an async tool that opens a connection, then will not stop
    script = _STOPPED_CALLS_THEN_ONE_MORE % {
        "headroom": HEADROOM,
        "short": SHORT_FUNCTION_SECONDS,
        "calls": STOPPED_CALLS,
        "settle": 1.5 if thread != "main" else 0.0,
    }
    env = {"MISBEHAVIOUR": misbehaviour, "FROM_A_THREAD": "1" if thread != "main" else "0"}
    # WHEN it is called and stopped, many times over that limit, and then another tool is called
    outcome = run_container(tmp_path, script, env)
    # THEN every stopped call was answered 504 timeout, in JSON
    assert outcome["warm"]["status"] == 200, outcome["warm"]
    assert [call.get("status") for call in outcome["stopped"]] == [504] * STOPPED_CALLS, outcome["stopped"]
    # AND none left a descriptor behind: its loop and its connection were closed
    assert outcome["after"] is not None
    assert outcome["after"] <= outcome["before"], outcome
    # AND the next tool answers as it always did
    assert outcome["last"] == {"status": 200, "body": {"version": 1, "ok": True, "output": "here"}}


_NO_DESCRIPTOR_LEFT = """
import json
import os
import resource

from handler.testing import FakeLambdaContext, MedianTestClient, call_body, signed_event

client = MedianTestClient(call_ids=False)
manifest = client.manifest()  # the key read and the tools imported, as a container's first GET does
event = signed_event("POST", call_body("answerAtOnce", {}))
_, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + 8, hard))
held = []
try:
    while True:
        held.append(os.open(os.devnull, os.O_RDONLY))
except OSError:
    pass
context = FakeLambdaContext()
try:
    answer = client.send(event, context)
    outcome = {"status": answer.status, "body": answer.body}
except Exception as error:
    outcome = {"raised": type(error).__name__}
for descriptor in held:
    os.close(descriptor)
outcome["manifest"] = manifest.status
outcome["request_id"] = context.aws_request_id
print(json.dumps(outcome))
"""


@pytest.mark.parametrize(
    "logger", ["made at the cold start", "not made yet"], ids=["logger made", "logger not made yet"]
)
def test_with_no_descriptor_left_the_last_answer_is_still_a_json_500_and_its_line_is_logged(
    tmp_path: Path, logger: str
) -> None:
    # GIVEN a container that has answered its first GET, whose POST machinery is not imported yet, and whose
    # every file descriptor is taken: any import now fails. Its Logger was made at the cold start (idempotency
    # off is said there), or is not made yet (a table is named, so nothing was logged)
    env = {"MISBEHAVIOUR": "", "CARRIER_PORT": "0"}
    if logger == "not made yet":
        env[IDEMPOTENCY_TABLE_ENV] = "idempotency-never-reached"
    # WHEN Median's POST arrives
    outcome = run_container(tmp_path, _NO_DESCRIPTOR_LEFT, env)
    # THEN it is answered the handler's own 500 internal_error in JSON, never a Lambda error
    assert outcome["manifest"] == 200
    reference = outcome["request_id"]
    assert outcome.get("status") == 500, outcome
    assert outcome["body"] == {
        "version": 1,
        "ok": False,
        "error": {"code": "internal_error", "message": f"The server failed; reference {reference}."},
    }
    # AND its log line, by the Logger or written as its JSON, carries the reference an operator looks it up by
    unhandled = [json.loads(line) for line in outcome["log"] if '"Unhandled error"' in line]
    assert [(line["level"], line["reference"]) for line in unhandled] == [("ERROR", reference)]
