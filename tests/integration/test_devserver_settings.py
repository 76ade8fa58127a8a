"""`make serve` names a tool's missing configuration value at its Settings line, and a saved settings.toml fixes it."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from handler.protocol import DEV_KEY_ENV
from handler.testing import TEST_KEY
from tests.devserver_process import running_devserver
from tests.integration.test_devserver_reload import signed_get, until

if TYPE_CHECKING:
    from pathlib import Path

PARCELS_TOOL = '''
from __future__ import annotations

from pydantic import BaseModel

from handler import Settings, tool


class ParcelSettings(Settings):
    parcels_table: str


class ParcelInput(BaseModel):
    parcel: str


@tool(risk="low")
def parcel_location(args: ParcelInput, settings: ParcelSettings) -> dict:
    """Tell where a parcel is."""
    return {"table": settings.parcels_table}
'''


def test_a_missing_value_is_named_until_settings_toml_is_saved_with_it(tmp_path: Path) -> None:
    # GIVEN make serve on a tool whose Settings value is in no settings file
    project = tmp_path / "project"
    tools = project / "tools"
    tools.mkdir(parents=True)
    (tools / "__init__.py").write_text("", encoding="utf-8")
    (tools / "parcels.py").write_text(textwrap.dedent(PARCELS_TOOL), encoding="utf-8")
    (tools / "settings.toml").write_text("[default]\n", encoding="utf-8")
    with running_devserver(tmp_path, cwd=project, tools_package=None, env={DEV_KEY_ENV: TEST_KEY}) as server:
        # THEN GET answers invalid_manifest with the class's line, the variable and where to set it
        status, body = signed_get(server)
        assert status == 500
        assert body["error"]["code"] == "invalid_manifest"
        line = "tools/parcels.py:9: ParcelSettings cannot be read: PARCELS_TABLE is not set"
        assert line in body["error"]["message"]
        assert "tools/settings.local.toml" in body["error"]["message"]
        # AND the terminal says it, without a traceback
        assert line in server.output()
        assert "Traceback" not in server.output()

        # WHEN the value is saved into settings.toml
        (tools / "settings.toml").write_text('[default]\nPARCELS_TABLE = "parcels"\n', encoding="utf-8")
        # THEN the server reloads and serves the tool, with no restart
        status, body = until(lambda got: got[0] == 200, lambda: signed_get(server))
        assert status == 200, body
        assert [entry["name"] for entry in body["tools"]] == ["parcelLocation"]
