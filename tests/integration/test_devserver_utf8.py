"""Through `make serve`'s server over real HTTP, a lone surrogate never costs the connection.

Before, an answer holding one could not be encoded as UTF-8: the dev server dropped the
connection after the tool had run. Now the call is refused before its tool runs, and a
tool's own lone surrogate is sent as U+FFFD.
"""

from __future__ import annotations

import json
import urllib.request
from typing import TYPE_CHECKING, Any
from urllib.error import HTTPError

import pytest
from median_lambda.protocol import DEV_KEY_ENV, KEY_SECRET_ENV, SIGNATURE_HEADER
from median_lambda.request.signature import sign
from median_lambda.testing import TEST_KEY

from tests.devserver_process import running_devserver
from tests.integration.conftest import ToolsPackage

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.devserver_process import DevServerProcess

BROKEN_TEXT_TOOL = '''
from pydantic import BaseModel, Field

from median_lambda import ToolContext, tool


class NoteInput(BaseModel):
    note: str = Field(default="", description="Any text.")


@tool(risk="low")
def return_broken_text(args: NoteInput, ctx: ToolContext) -> dict:
    """Return text with a lone surrogate, as badly decoded data holds one."""
    return {"text": "a\\ud800b", "callId": ctx.call_id}
'''


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServerProcess]:
    package = ToolsPackage(tmp_path_factory.mktemp("tools_package"))
    package.module("broken_text", BROKEN_TEXT_TOOL)
    environment = {DEV_KEY_ENV: TEST_KEY, KEY_SECRET_ENV: ""}
    devserver_log = tmp_path_factory.mktemp("devserver")
    with running_devserver(devserver_log, cwd=package.root, tools_package=None, env=environment) as running:
        yield running


def post(server: DevServerProcess, document: dict[str, Any]) -> tuple[int, bytes]:
    body = json.dumps({"version": 1, "op": "call", **document}).encode("ascii")  # lone surrogates as \uXXXX
    request = urllib.request.Request(  # noqa: S310 - a loopback URL of our own
        server.url, data=body, method="POST", headers={SIGNATURE_HEADER: sign(TEST_KEY, body)}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - loopback
            return response.status, response.read()
    except HTTPError as error:
        return error.code, error.read()


def test_a_call_id_with_a_lone_surrogate_is_answered_400_over_http(server: DevServerProcess) -> None:
    # GIVEN the dev server, and a call whose callId holds a lone surrogate
    # WHEN it is posted
    status, body = post(server, {"tool": "returnBrokenText", "callId": "call_\ud800"})
    # THEN the connection carries a JSON 400 in UTF-8, rather than being dropped
    assert status == 400
    assert json.loads(body.decode("utf-8"))["error"]["code"] == "bad_request"


def test_a_tools_lone_surrogate_is_sent_as_the_replacement_character(server: DevServerProcess) -> None:
    # GIVEN the dev server, and a tool whose output holds a lone surrogate
    # WHEN it is called
    status, body = post(server, {"tool": "returnBrokenText", "callId": "call_plain"})
    # THEN its answer arrives, as UTF-8, with U+FFFD in the surrogate's place
    assert status == 200
    assert json.loads(body.decode("utf-8"))["output"] == {"text": "a\ufffdb", "callId": "call_plain"}


def test_the_server_keeps_serving_after_both(server: DevServerProcess) -> None:
    # GIVEN the dev server after the calls above
    # WHEN another call comes
    status, _ = post(server, {"tool": "returnBrokenText"})
    # THEN it is served as usual
    assert status == 200
