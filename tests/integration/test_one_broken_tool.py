"""At run time one broken tool is one broken tool, as deployed (the idempotency table on moto's DynamoDB, a
Lambda context with its deadline, a callId on every call) and as `make serve` runs it.

A tool whose settings, secret or parameter cannot be had answers 500 without running, its log line
says why in the words its author needs, and it counts as that tool's ToolCrashes, which the crash
alarm and a gradual deploy's rollback watch. Every other tool, and GET, keep answering. Each way
of failing is one case of the family below.
"""

from __future__ import annotations

import json
import sys
import textwrap
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda import Parameter, Secret, Settings, tool
from median_lambda.authoring.settings import forget_configuration
from median_lambda.protocol import TOOLS_PACKAGE_ENV
from pydantic import BaseModel, field_validator, model_validator

from tests.conftest import BOTH

if TYPE_CHECKING:
    from collections.abc import Callable

    from median_lambda.authoring.registry import Registry
    from median_lambda.testing import MedianAWS, MedianTestClient

    from tests.conftest import LogCapture


class ParcelInput(BaseModel):
    parcel: str = "P-1"


class CarrierSettings(Settings):
    carrier_base_url: str
    carrier_retries: int = 2


WHOLE_SETTINGS = """
[default]
CARRIER_BASE_URL = "https://sandbox.carrier.example"
CARRIER_TOKEN_SECRET = "median-tools/carrier-token"
"""


def _takes_settings() -> None:
    @tool(risk="low")
    def parcel_eta(args: ParcelInput, settings: CarrierSettings) -> dict[str, Any]:
        """Ask the carrier when a parcel arrives."""
        return {"baseUrl": settings.carrier_base_url}


def _takes_a_secret_named_by_a_setting() -> None:
    @tool(risk="low")
    def parcel_eta(args: ParcelInput, token: str = Secret(setting="CARRIER_TOKEN_SECRET")) -> dict[str, Any]:
        """Ask the carrier when a parcel arrives."""
        return {"tokenLength": len(token)}


def _takes_a_secret() -> None:
    @tool(risk="low")
    def parcel_eta(args: ParcelInput, token: str = Secret("median-tools/carrier-token")) -> dict[str, Any]:
        """Ask the carrier when a parcel arrives."""
        return {"tokenLength": len(token)}


def _takes_a_parameter() -> None:
    @tool(risk="low")
    def parcel_eta(args: ParcelInput, account: str = Parameter("/median-tools/carrier/account")) -> dict[str, Any]:
        """Ask the carrier when a parcel arrives."""
        return {"account": account}


@dataclass(frozen=True)
class Breakage:
    declare: Callable[[], None]
    settings_toml: str
    local_toml: str | None
    cause: str  # what the log line's cause says, in part


FAMILY = [
    pytest.param(
        Breakage(_takes_settings, "[default]\nCARRIER_RETRIES = 1\n", None, "CARRIER_BASE_URL is not set: add"),
        id="a value missing from the stage",
    ),
    pytest.param(
        Breakage(_takes_settings, WHOLE_SETTINGS + 'CARRIER_RETRIES = "many"\n', None, "CARRIER_RETRIES (from"),
        id="a malformed value",
    ),
    pytest.param(
        Breakage(_takes_settings, "[default]\nCARRIER_BASE_URL = https://unquoted\n", None, "not valid TOML"),
        id="a settings.toml that is not TOML",
    ),
    pytest.param(
        Breakage(_takes_settings, WHOLE_SETTINGS, "CARRIER_BASE_URL = 'http://127.0.0.1\n", "not valid TOML"),
        id="a settings.local.toml that is not TOML",
    ),
    pytest.param(
        Breakage(_takes_a_secret_named_by_a_setting, "[default]\n", None, "CARRIER_TOKEN_SECRET is not set"),
        id="a secret's name that is not set",
    ),
    pytest.param(
        Breakage(_takes_a_secret, WHOLE_SETTINGS, None, "reading secret 'median-tools/carrier-token' failed"),
        id="a secret that does not exist",
    ),
    pytest.param(
        Breakage(_takes_a_parameter, WHOLE_SETTINGS, None, "reading parameter '/median-tools/carrier/account' failed"),
        id="a parameter that does not exist",
    ),
]


@pytest.fixture
def tools_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scratch_registry: Registry, median_aws: MedianAWS
) -> Path:
    """A tools package of the test's own, whose settings files the test writes; moto's AWS, empty."""
    name = f"broken_tools_{uuid.uuid4().hex[:8]}"
    directory = tmp_path / name
    directory.mkdir()
    (directory / "__init__.py").write_text("", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(TOOLS_PACKAGE_ENV, name)
    forget_configuration()
    return directory


def register_a_healthy_tool() -> None:
    @tool(risk="low")
    def parcel_count(args: ParcelInput) -> dict[str, Any]:
        """Count the customer's parcels."""
        return {"parcels": 2}


def crashes_counted(logs: LogCapture) -> list[str]:
    metrics = logs.metrics()
    return [metric["tool"] for metric in metrics if "ToolCrashes" in metric]


@pytest.mark.parametrize("configuration", BOTH, indirect=True)
@pytest.mark.parametrize("breakage", FAMILY)
def test_a_tool_that_cannot_have_what_it_takes_fails_alone_and_counts_as_its_crash(
    tools_folder: Path,
    client_as_median: MedianTestClient,
    logs: LogCapture,
    breakage: Breakage,
    configuration: str,
) -> None:
    # GIVEN a tool whose settings, secret or parameter cannot be had, beside a tool that takes none
    (tools_folder / "settings.toml").write_text(textwrap.dedent(breakage.settings_toml), encoding="utf-8")
    if breakage.local_toml is not None:
        (tools_folder / "settings.local.toml").write_text(breakage.local_toml, encoding="utf-8")
    breakage.declare()
    register_a_healthy_tool()
    # WHEN Median GETs the manifest and calls each tool, each call with its callId
    manifest = client_as_median.manifest()
    healthy = client_as_median.call("parcelCount", {})
    broken = client_as_median.call("parcelEta", {})
    # THEN GET lists both tools and the healthy one answers
    assert manifest.status == 200, manifest.body
    assert [entry["name"] for entry in manifest.body["tools"]] == ["parcelEta", "parcelCount"]
    assert (healthy.status, healthy.body["output"]) == (200, {"parcels": 2})
    # AND the broken one answers 500 without running, naming nothing of its configuration
    assert broken.status == 500
    message = broken.body["error"]["message"]
    assert message.startswith("The tool could not read its configuration or secrets, so it did not run; retry later.")
    assert "CARRIER" not in message and "median-tools/" not in message and "toml" not in message
    # AND its log line gives the author the cause
    [record] = [each for each in logs.records() if each["message"].startswith("Tool parcelEta did not run")]
    assert breakage.cause in record["cause"]
    # AND only its call counts as a crash: the metric the crash alarm and a rollout's rollback watch
    assert crashes_counted(logs) == ["parcelEta"]


# --- A tool's own setup that crashes -------------------------------------------------------------
# A Settings class's own code that raises anything but the ValueError pydantic reports as a value's
# problem: pydantic lets it through. Each message quotes a value, as a real one might; no answer or
# log line may carry it.
QUOTED_VALUE = "https://carrier.example/?token=sk_live_quoted"


class SettingsWhoseValidatorRaisesTypeError(Settings):
    carrier_base_url: str

    @field_validator("carrier_base_url")
    @classmethod
    def _joined(cls, value: str) -> str:
        raise TypeError(f"cannot join {value!r} with None")


class SettingsWhoseValidatorRaisesKeyError(Settings):
    carrier_base_url: str

    @field_validator("carrier_base_url")
    @classmethod
    def _region(cls, value: str) -> str:
        raise KeyError(value)


class SettingsWhoseValidatorExits(Settings):
    carrier_base_url: str

    @field_validator("carrier_base_url")
    @classmethod
    def _region(cls, value: str) -> str:
        sys.exit("no carrier region configured")  # as a library that exits does


class SettingsWhoseModelValidatorRaisesRuntimeError(Settings):
    carrier_base_url: str

    @model_validator(mode="after")
    def _reachable(self) -> SettingsWhoseModelValidatorRaisesRuntimeError:
        raise RuntimeError(f"{self.carrier_base_url} is not configured for this region")


class SettingsWhosePostInitRaises(Settings):
    carrier_base_url: str

    def model_post_init(self, context: Any, /) -> None:
        raise LookupError(self.carrier_base_url)


class SettingsWhosePostInitRaisesAttributeError(Settings):
    carrier_base_url: str

    def model_post_init(self, context: Any, /) -> None:
        self.carrier_base_url.hostname  # noqa: B018 - the author's bug under test: str has no hostname


SETUP_CRASHES = [
    pytest.param(SettingsWhoseValidatorRaisesTypeError, "TypeError", id="a validator raising TypeError"),
    pytest.param(SettingsWhoseValidatorRaisesKeyError, "KeyError", id="a validator raising KeyError"),
    pytest.param(SettingsWhoseValidatorExits, "SystemExit", id="a validator calling sys.exit"),
    pytest.param(SettingsWhoseModelValidatorRaisesRuntimeError, "RuntimeError", id="a model validator raising"),
    pytest.param(SettingsWhosePostInitRaises, "LookupError", id="a model_post_init raising"),
    pytest.param(
        SettingsWhosePostInitRaisesAttributeError, "AttributeError", id="a model_post_init with a bug of its own"
    ),
]


def declared_at(settings_class: type[Settings]) -> str:
    """`tests/integration/test_one_broken_tool.py:<line>`, where this file declares `settings_class`."""
    source = Path(__file__)
    lines = source.read_text(encoding="utf-8").splitlines()
    line = next(number for number, text in enumerate(lines, 1) if text.startswith(f"class {settings_class.__name__}("))
    return f"{source.relative_to(Path.cwd())}:{line}"


@pytest.mark.parametrize("configuration", BOTH, indirect=True)
@pytest.mark.parametrize(("settings_class", "raised"), SETUP_CRASHES)
def test_a_tool_whose_settings_class_crashes_is_that_tools_crash_named_at_the_class(
    tools_folder: Path,
    client_as_median: MedianTestClient,
    logs: LogCapture,
    settings_class: type[Settings],
    raised: str,
    configuration: str,
) -> None:
    # GIVEN a tool taking a Settings class whose own code raises as it is built, beside a tool that takes none
    (tools_folder / "settings.toml").write_text(f'[default]\nCARRIER_BASE_URL = "{QUOTED_VALUE}"\n', encoding="utf-8")

    def parcel_eta(args: ParcelInput, settings: Settings) -> dict[str, Any]:
        """Ask the carrier when a parcel arrives."""
        return {"baseUrl": getattr(settings, "carrier_base_url", None)}

    parcel_eta.__annotations__["settings"] = settings_class  # the class of this case, as an author writes it
    tool(risk="low")(parcel_eta)
    register_a_healthy_tool()
    # WHEN Median calls each tool, each call with its callId
    broken = client_as_median.call("parcelEta", {})
    healthy = client_as_median.call("parcelCount", {})
    # THEN the broken one answers 500 internal_error, saying it failed before it ran, naming nothing of its values
    assert broken.status == 500, broken.body
    assert broken.body["error"]["code"] == "internal_error"
    assert broken.body["error"]["message"].startswith("The tool failed on the server before it ran; reference ")
    # AND the healthy one answers: one broken tool is one broken tool
    assert (healthy.status, healthy.body["output"]) == (200, {"parcels": 2})
    # AND the log names the class's file:line and the exception's type, never its text nor a traceback
    [record] = [each for each in logs.records() if each["message"].startswith("Tool parcelEta crashed before it ran")]
    assert record["cause"].startswith(f"{declared_at(settings_class)}: {settings_class.__name__} cannot be built")
    assert record["error_type"] == raised
    logged = json.dumps(logs.records())
    assert "sk_live_quoted" not in logged
    assert "Traceback" not in logged
    # AND it counts as that tool's crash, the metric the crash alarm and a rollout's rollback watch
    assert crashes_counted(logs) == ["parcelEta"]


def test_make_check_names_a_settings_class_whose_own_code_crashes_at_its_line(tools_folder: Path) -> None:
    # GIVEN a Settings class whose validator raises a TypeError, and a settings.toml with its value
    from median_lambda.authoring.settings import problems_in_stages

    (tools_folder / "settings.toml").write_text(f'[default]\nCARRIER_BASE_URL = "{QUOTED_VALUE}"\n', encoding="utf-8")
    # WHEN make check holds the stages to it
    problems = problems_in_stages([SettingsWhoseValidatorRaisesTypeError])
    # THEN it names the class's line, the stage and the exception's type, never the value
    assert problems == [
        f"{declared_at(SettingsWhoseValidatorRaisesTypeError)}: stage default: "
        "SettingsWhoseValidatorRaisesTypeError cannot be built: its own code (a validator, or model_post_init) "
        "raised TypeError"
    ]
