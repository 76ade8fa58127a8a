"""`make serve` names a tool's missing configuration value at its Settings line, serves every other tool
meanwhile, and a saved settings.toml fixes it; a settings.local.toml that is not TOML is named as this machine's."""

from __future__ import annotations

import json
import textwrap
import urllib.request
from typing import TYPE_CHECKING, Any
from urllib.error import HTTPError

from median_lambda.protocol import DEV_KEY_ENV, SIGNATURE_HEADER
from median_lambda.request.signature import sign
from median_lambda.testing import TEST_KEY

from tests.devserver_process import running_devserver
from tests.integration.test_devserver_reload import signed_get, until

if TYPE_CHECKING:
    from pathlib import Path

    from tests.devserver_process import DevServerProcess

PARCELS_TOOL = '''
from __future__ import annotations

from pydantic import BaseModel

from median_lambda import Settings, tool


class ParcelSettings(Settings):
    parcels_table: str


class ParcelInput(BaseModel):
    parcel: str


@tool(risk="low")
def parcel_location(args: ParcelInput, settings: ParcelSettings) -> dict:
    """Tell where a parcel is."""
    return {"table": settings.parcels_table}


@tool(risk="low")
def parcel_count(args: ParcelInput) -> dict:
    """Count the customer's parcels."""
    return {"parcels": 2}
'''


def signed_call(server: DevServerProcess, tool: str) -> tuple[int, Any]:
    body = json.dumps({"version": 1, "op": "call", "tool": tool, "input": {"parcel": "P-1"}}).encode()
    request = urllib.request.Request(  # noqa: S310 - a loopback URL of our own
        server.url, data=body, method="POST", headers={SIGNATURE_HEADER: sign(TEST_KEY, body)}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - as above
            return response.status, json.loads(response.read())
    except HTTPError as error:
        return error.code, json.loads(error.read())


def a_project(tmp_path: Path, settings: str) -> Path:
    tools = tmp_path / "project" / "tools"
    tools.mkdir(parents=True)
    (tools / "__init__.py").write_text("", encoding="utf-8")
    (tools / "parcels.py").write_text(textwrap.dedent(PARCELS_TOOL), encoding="utf-8")
    (tools / "settings.toml").write_text(settings, encoding="utf-8")
    return tools


def test_a_missing_value_is_named_until_settings_toml_is_saved_with_it(tmp_path: Path) -> None:
    # GIVEN make serve on a tool whose Settings value is in no settings file, beside a tool that takes none
    tools = a_project(tmp_path, "[default]\n")
    with running_devserver(tmp_path, cwd=tools.parent, tools_package=None, env={DEV_KEY_ENV: TEST_KEY}) as server:
        # THEN GET serves both tools, the other tool answers, and the one without its value answers 500
        status, body = signed_get(server)
        assert status == 200, body
        assert [entry["name"] for entry in body["tools"]] == ["parcelLocation", "parcelCount"]
        assert signed_call(server, "parcelCount") == (200, {"version": 1, "ok": True, "output": {"parcels": 2}})
        status, body = signed_call(server, "parcelLocation")
        assert status == 500
        assert "did not run; retry later" in body["error"]["message"]
        # AND the terminal said it when the tools loaded, and beside the answer: the class's line, the
        # variable and where to set it, without a traceback
        line = "tools/parcels.py:9: ParcelSettings cannot be read: PARCELS_TABLE is not set"
        output = server.output()
        assert "The configuration on this machine has 1 problem(s)" in output
        assert f"  {line}" in output and "(taken by parcelLocation)" in output
        assert "Tool parcelLocation did not run, answered 500 internal_error" in output
        assert "tools/settings.local.toml" in output
        assert "Traceback" not in output

        # WHEN the value is saved into settings.toml
        (tools / "settings.toml").write_text('[default]\nPARCELS_TABLE = "parcels"\n', encoding="utf-8")
        # THEN the server reloads and the tool answers, with no restart
        status, body = until(lambda got: got[0] == 200, lambda: signed_call(server, "parcelLocation"))
        assert status == 200, body
        assert body["output"] == {"table": "parcels"}


def test_a_local_file_that_is_not_toml_is_named_as_this_machines_own(tmp_path: Path) -> None:
    # GIVEN make serve on tools whose settings.toml is whole, and a settings.local.toml with a TOML mistake
    tools = a_project(tmp_path, '[default]\nPARCELS_TABLE = "parcels"\n')
    (tools / "settings.local.toml").write_text('PARCELS_TABLE = "parcels-local\n', encoding="utf-8")
    with running_devserver(tmp_path, cwd=tools.parent, tools_package=None, env={DEV_KEY_ENV: TEST_KEY}) as server:
        # THEN the terminal names the local file, the parser's line, and that no build or deploy reads it
        output = server.output()
        assert "tools/settings.local.toml: not valid TOML" in output
        assert "(this machine's own file: make serve and the tests read it; the build and deploys never do)" in output
        # AND GET and the tool that takes no settings go on answering
        assert signed_get(server)[0] == 200
        assert signed_call(server, "parcelCount")[0] == 200


def test_a_stage_whose_table_is_removed_while_serving_is_refused_and_said(tmp_path: Path) -> None:
    # GIVEN make serve as staging, whose table settings.toml has
    tools = a_project(tmp_path, '[default]\nPARCELS_TABLE = "parcels"\n[staging]\n')
    env = {DEV_KEY_ENV: TEST_KEY, "MEDIAN_STAGE": "staging"}
    with running_devserver(tmp_path, cwd=tools.parent, tools_package=None, env=env) as server:
        assert signed_get(server)[0] == 200
        # WHEN the table is deleted from settings.toml, and saved
        (tools / "settings.toml").write_text('[default]\nPARCELS_TABLE = "parcels"\n', encoding="utf-8")
        # THEN every request is refused, as a function deployed as staging would refuse it, and the terminal says why
        status, body = until(lambda got: got[0] == 500, lambda: signed_get(server))
        assert status == 500, body
        assert body["error"]["message"].startswith("This endpoint's deployment is misconfigured")
        said = "MEDIAN_STAGE=staging names no stage of tools/settings.toml, whose stages are default: check its"
        _, output = until(lambda got: said in got[1], lambda: (0, server.output()))
        assert f"{said} spelling, or add a [staging] table to the file (it may be empty): every request is refused" in (
            output
        )
