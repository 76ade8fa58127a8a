"""A deployed function's log holds no key, signature or customer's input, whatever the request did, crashes included.

Deployed as on Lambda: AWS_LAMBDA_FUNCTION_NAME set, not under sam local, the key read from
(moto's) Secrets Manager. Off Lambda a crash is printed in full for its author
(tests/unit/test_crashes_explained_locally.py); here, only its type and place are logged.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from median_lambda.protocol import SIGNATURE_HEADER, TOOL_TIME_MARGIN_SECONDS
from median_lambda.testing import FakeLambdaContext, call_body, diagnostics_body, http_event, signed_event

if TYPE_CHECKING:
    from collections.abc import Callable

    from median_lambda.testing import TestAnswer

    from tests.conftest import LogCapture
    from tests.scratch_tools import ScratchTools

# The calls go to the sample tools (tests/sample_tools/).
pytestmark = pytest.mark.usefixtures("sample_tools")

# Values a customer might type, distinct enough that any echo of them is unmistakable.
INPUT_VALUES = ("TCK-SECRET-7781", "Jane Secretname", "card ending 4242 zq", "refund me zq19")
FORGED_KEY = "mk_forged_not_the_endpoints_key"


@pytest.fixture
def deployed(key_in_secrets_manager: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The function as Lambda runs it: its name set, not sam local, the key from Secrets Manager."""
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "median-tools")
    monkeypatch.delenv("AWS_SAM_LOCAL", raising=False)
    return key_in_secrets_manager


def test_no_log_line_holds_the_key_a_signature_or_an_input_value(
    deployed: str, invoke: Callable[..., TestAnswer], scratch: ScratchTools, logs: LogCapture
) -> None:
    # GIVEN a run of valid, forged and failing requests, each carrying a customer's values
    order, name, card, note = INPUT_VALUES
    events = [
        signed_event("GET"),
        signed_event("POST", call_body("ticketStatus", {"ticketNumber": order}, callId="call_1")),
        signed_event("POST", call_body("ticketStatus", {"ticketNumber": "TCK-1042"})),
        signed_event("POST", call_body("crashQuotingInput", {"note": name}, callId="call_2")),
        signed_event("POST", call_body("declineWithRunCount", {"note": card})),
        signed_event("POST", call_body("ticketStatus", {"ticketNumber": order, "extra": card})),
        signed_event("POST", call_body("ticketStatus", {"ticketNumber": 42, "note": note})),
        signed_event("POST", call_body("noSuchTool", {"ticketNumber": order})),
        signed_event(
            "POST", b'{"version":1,"op":"call","tool":"ticketStatus","input":{"ticketNumber":"' + note.encode()
        ),
        signed_event("POST", call_body("ticketStatus", {"ticketNumber": order}), key=FORGED_KEY),
        signed_event("POST", call_body("ticketStatus", {"ticketNumber": card}), timestamp=1),
        http_event("POST", call_body("ticketStatus", {"ticketNumber": name})),
        http_event(
            "POST", call_body("ticketStatus", {"ticketNumber": name}), headers={SIGNATURE_HEADER: f"t=1,v1={card}"}
        ),
        signed_event("PUT", call_body("ticketStatus", {"ticketNumber": order})),
    ]
    signatures = {
        event["headers"][SIGNATURE_HEADER].rsplit("v1=", 1)[-1]
        for event in events
        if SIGNATURE_HEADER in event["headers"]
    }
    # WHEN they are served, and a tool runs past its time with an input value
    for event in events:
        invoke(event)
    invoke(
        signed_event("POST", call_body("waitForRelease", {"note": note}, callId="call_3")),
        FakeLambdaContext(timeout_seconds=TOOL_TIME_MARGIN_SECONDS + 0.2),
    )
    lines = logs.lines()
    # THEN there were log lines to check, for every kind of request
    assert any("Signature refused" in line for line in lines)
    assert any("crashed" in line for line in lines)
    assert any("timed out" in line for line in lines)
    # AND none holds the key, a signature (as sent, or any 64-hex digest) or an input value
    secrets = [deployed, FORGED_KEY, *signatures, *INPUT_VALUES]
    for line in lines:
        assert not [secret for secret in secrets if secret in line], line
        assert not re.search(r"[0-9a-f]{64}", line), line


@pytest.mark.parametrize(
    "request_body",
    [call_body("crashQuotingInput", {"note": INPUT_VALUES[1]}), diagnostics_body()],
    ids=["a tool", "diagnostics"],
)
def test_a_deployed_crash_logs_its_type_and_place_and_prints_no_traceback(
    deployed: str,
    invoke: Callable[..., TestAnswer],
    scratch: ScratchTools,
    logs: LogCapture,
    request_body: bytes,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN a deployed function whose tool (or diagnostics) crashes with a customer's input in its message
    from median_lambda.authoring.registry import load_tools

    def crashing_health() -> dict[str, object]:
        raise ValueError(f"cannot reach the desk for {INPUT_VALUES[1]!r}")

    monkeypatch.setattr(load_tools(), "diagnostics", [crashing_health])
    # WHEN it is called
    answer = invoke(signed_event("POST", request_body))
    # THEN the answer is a 500 with a reference and no message
    assert answer.status == 500
    assert INPUT_VALUES[1] not in str(answer.body)
    # AND the log names the exception's type and the places it passed, and nothing prints the message or a traceback
    [record] = [record for record in logs.records() if record["level"] == "ERROR"]
    assert record["error_type"] == "ValueError"
    assert record["frames"]
    assert INPUT_VALUES[1] not in logs.text()
    assert "Traceback" not in logs.text()
    assert "crashed;" not in logs.text()


def test_a_deployed_timeout_prints_no_place(
    deployed: str, invoke: Callable[..., TestAnswer], scratch: ScratchTools, logs: LogCapture
) -> None:
    # GIVEN a deployed function whose tool runs past its time
    # WHEN it is called
    answer = invoke(
        signed_event("POST", call_body("waitForRelease", {"note": INPUT_VALUES[3]})),
        FakeLambdaContext(timeout_seconds=TOOL_TIME_MARGIN_SECONDS + 0.2),
    )
    # THEN it is answered 504, its log says it timed out, and nothing prints where it was (off Lambda, stderr does)
    assert answer.status == 504
    assert [record["message"] for record in logs.records() if record["level"] == "ERROR"] == [
        "Tool waitForRelease timed out"
    ]
    assert "Traceback" not in logs.text()
    assert "timed out;" not in logs.text()
