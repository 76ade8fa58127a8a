"""`make serve`'s server over real HTTP: the endpoint as before, and the inspector beside it."""

from __future__ import annotations

import json
import shlex
import subprocess
import urllib.request
from typing import TYPE_CHECKING, Any
from urllib.error import HTTPError

import pytest
from median_lambda.key.local_key import dev_key
from median_lambda.protocol import SIGNATURE_HEADER
from median_lambda.request.signature import sign

from tests.devserver_process import REPO, running_devserver
from tests.scratch_tools import EMPTY_TOOLS

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from median_lambda.authoring.registry import Registry

    from tests.devserver_process import DevServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServerProcess]:
    with running_devserver(tmp_path_factory.mktemp("devserver")) as running:
        yield running


def fetch(url: str, *, method: str = "GET", body: bytes | None = None, headers: dict[str, str] | None = None) -> Any:
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})  # noqa: S310 - loopback
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - a loopback URL of our own
            return response.status, dict(response.headers), response.read()
    except HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_a_signed_get_still_answers_the_manifest(server: DevServerProcess, sample_tools: Registry) -> None:
    # GIVEN the dev server, verifying with the local dev key
    # WHEN Median's GET arrives, signed with that key
    status, _, body = fetch(server.url, headers={SIGNATURE_HEADER: sign(dev_key(), b"")})
    # THEN it answers the manifest of the tools it serves, through the handler
    assert status == 200
    assert [tool["name"] for tool in json.loads(body)["tools"]] == [tool.name for tool in sample_tools.tools]


def test_other_methods_still_get_405(server: DevServerProcess) -> None:
    # GIVEN the dev server
    # WHEN a PUT arrives
    status, headers, body = fetch(server.url, method="PUT", body=b"{}")
    # THEN the handler refuses it as the protocol says
    assert status == 405
    assert headers["Allow"] == "GET, POST"
    assert json.loads(body)["error"]["code"] == "method_not_allowed"


def test_the_startup_text_points_at_the_inspector_and_shows_curl(server: DevServerProcess) -> None:
    # GIVEN the dev server has started
    # WHEN its startup text is read
    text = server.output()
    # THEN it names the inspector's address, with its token, and gives copy-paste curl commands
    assert f"Inspect and try your tools in a browser: http://127.0.0.1:{server.port}/_inspector?token=" in text
    assert len(server.token) >= 43  # 32 random bytes
    assert f'curl -s {server.url} -H "median-signature: $(.venv/bin/python -m median_lambda sign)"' in text
    assert "BODY='" in text


def test_the_startup_post_example_calls_the_first_tool_served_and_runs_as_printed(
    server: DevServerProcess, sample_tools: Registry
) -> None:
    # GIVEN the two lines of the startup text's POST example: $BODY, then the signed curl
    lines = [line.strip() for line in server.output().splitlines()]
    start = next(index for index, line in enumerate(lines) if line.startswith("BODY="))
    body_line, curl_line = lines[start : start + 2]
    # WHEN they are pasted into a shell in the project folder
    ran = subprocess.run(  # noqa: S603 - the command under test
        ["/bin/bash", "-c", f"{body_line}\n{curl_line}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    # THEN they call the first tool served (not a tool the project may have deleted), every required
    # field given, and the tool itself answers: a placeholder ticket number is no ticket it knows
    assert ran.returncode == 0, ran.stderr
    sent = json.loads(shlex.split(body_line.removeprefix("BODY="))[0])
    assert (sent["tool"], sent["input"]) == (sample_tools.tools[0].name, {"ticketNumber": "example"})
    answer = json.loads(ran.stdout)
    assert answer["error"]["code"] == "tool_error"
    assert answer["error"]["message"].startswith("No ticket has that number.")


def test_an_endpoint_with_no_tools_starts_and_its_example_is_diagnostics(tmp_path: Path) -> None:
    # GIVEN a tools package with no tool, as tools/ is once the examples are deleted
    with running_devserver(tmp_path, tools_package=EMPTY_TOOLS) as empty:
        # WHEN the server starts and Median GETs the manifest
        status, _, body = fetch(empty.url, headers={SIGNATURE_HEADER: sign(dev_key(), b"")})
        text = empty.output()
    # THEN it serves the empty manifest, and its POST example is the diagnostics operation
    assert (status, json.loads(body)) == (200, {"version": 1, "tools": [], "diagnostics": False})
    assert """BODY='{"version": 1, "op": "diagnostics"}'""" in text


def test_the_inspector_page_is_one_file_that_may_load_nothing_from_outside(server: DevServerProcess) -> None:
    # GIVEN the dev server
    # WHEN the inspector page is fetched
    status, headers, body = fetch(f"{server.url}_inspector", headers={"Host": f"127.0.0.1:{server.port}"})
    # THEN it is HTML whose policy lets it reach only this server, and it links to nothing else
    assert status == 200
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    assert "connect-src 'self'" in headers["Content-Security-Policy"]
    assert b"<script src" not in body
    assert b"<link" not in body


def test_the_inspector_refuses_a_foreign_host(server: DevServerProcess) -> None:
    # GIVEN a page on another site whose name was rebound to 127.0.0.1
    # WHEN its request reaches the inspector with that site's Host
    status, _, body = fetch(f"{server.url}_inspector/api/manifest", headers={"Host": "attacker.example"})
    # THEN the inspector refuses it
    assert status == 403
    assert json.loads(body)["error"]["code"] == "forbidden"


def test_the_curl_command_from_a_call_runs_as_printed(server: DevServerProcess, tmp_path: Path) -> None:
    # GIVEN a call made from the inspector
    request = json.dumps({"op": "call", "tool": "ticketStatus", "input": {"ticketNumber": "TCK-1042"}}).encode()
    status, _, body = fetch(
        server.inspector_api("call"),
        method="POST",
        body=request,
        headers={"Content-Type": "application/json", "Origin": server.url.rstrip("/"), **server.token_header},
    )
    assert status == 200
    curl = json.loads(body)["curl"]
    # WHEN its curl command is pasted into a shell in the project folder
    ran = subprocess.run(  # noqa: S603 - the command under test
        ["/bin/bash", "-c", curl], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    )
    # THEN it sends the same request, freshly signed, and gets the tool's answer
    assert ran.returncode == 0, ran.stderr
    answer = json.loads(ran.stdout)
    assert answer["ok"] is True
    assert answer["output"]["status"] == "waiting"


PATTERNED_TOOL = '''\
from median_lambda import tool
from pydantic import BaseModel, Field


class OrderInput(BaseModel):
    orderNumber: str = Field(pattern=r"^ORD-[0-9]{4}$", description="The order number, like ORD-1042.")


@tool(risk="low")
def order_status(args: OrderInput) -> dict[str, str]:
    """Tell an order's status."""
    return {"status": "shipped"}
'''


def test_a_project_is_served_under_its_own_stack_and_its_example_says_when_its_tool_refuses_it(
    tmp_path: Path,
) -> None:
    # GIVEN a project whose stack is acme-returns, whose one tool holds its field to a pattern with no example
    root = tmp_path / "project"
    (root / "tools").mkdir(parents=True)
    (root / "tools" / "__init__.py").write_text("", encoding="utf-8")
    (root / "tools" / "orders.py").write_text(PATTERNED_TOOL, encoding="utf-8")
    (root / "samconfig.toml").write_text(
        'version = 0.1\n[default.global.parameters]\nstack_name = "acme-returns"\n', encoding="utf-8"
    )
    unnamed = {"POWERTOOLS_SERVICE_NAME": "", "POWERTOOLS_METRICS_NAMESPACE": ""}
    with running_devserver(tmp_path, cwd=root, tools_package=None, env=unnamed) as served:
        # WHEN Median GETs the manifest
        status, _, _ = fetch(served.url, headers={SIGNATURE_HEADER: sign(dev_key(), b"")})
        text = served.output()
    # THEN its log lines are the stack's, as the deployed function's are (template.yaml names them by the stack)
    assert status == 200
    logged = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    assert logged
    assert {line["service"] for line in logged} == {"acme-returns"}
    # AND the example call is printed with what is true of it: the tool refuses its input, and how to fix that
    assert (
        "(orderStatus refuses this example's orderNumber: String should match pattern '^ORD-[0-9]{4}$'. Give the "
        "field an example of its own (Field(..., examples=[...])), and make serve's example is one orderStatus takes.)"
    ) in text
