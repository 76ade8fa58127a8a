"""No log line carries the key, a signature or a customer's input, whatever the request did."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from handler.protocol import SIGNATURE_HEADER, TOOL_TIME_MARGIN_SECONDS
from handler.signature import sign
from handler.testing import TEST_KEY, FakeLambdaContext, call_body, http_event, signed_event

if TYPE_CHECKING:
    from handler.testing import MedianTestClient
    from tests.conftest import LogCapture
    from tests.scratch_tools import ScratchTools

# The calls go to the sample tools (tests/sample_tools/).
pytestmark = pytest.mark.usefixtures("sample_tools")

# Values a customer might type, distinct enough that any echo of them is unmistakable.
INPUT_VALUES = ("TCK-SECRET-7781", "Jane Secretname", "card ending 4242 zq", "refund me zq19")
FORGED_KEY = "mk_forged_not_the_endpoints_key"


def test_no_log_line_holds_the_key_a_signature_or_an_input_value(
    client: MedianTestClient, scratch: ScratchTools, logs: LogCapture
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
        client.send(event)
    client.send(
        signed_event("POST", call_body("waitForRelease", {"note": note}, callId="call_3")),
        FakeLambdaContext(timeout_seconds=TOOL_TIME_MARGIN_SECONDS + 0.2),
    )
    lines = logs.lines()
    # THEN there were log lines to check, for every kind of request
    assert any("Signature refused" in line for line in lines)
    assert any("crashed" in line for line in lines)
    assert any("timed out" in line for line in lines)
    # AND none holds the key, a signature (as sent, or any 64-hex digest) or an input value
    secrets = [TEST_KEY, FORGED_KEY, *signatures, *INPUT_VALUES]
    for line in lines:
        assert not [secret for secret in secrets if secret in line], line
        assert not re.search(r"[0-9a-f]{64}", line), line


def test_the_signature_a_server_would_expect_is_not_logged_either(client: MedianTestClient, logs: LogCapture) -> None:
    # GIVEN a forged request: the correct signature for its body is what an attacker wants to learn
    body = call_body("ticketStatus", {"ticketNumber": "TCK-1042"})
    event = signed_event("POST", body, key=FORGED_KEY)
    expected = sign(TEST_KEY, body, timestamp=int(event["headers"][SIGNATURE_HEADER].split(",")[0][2:]))
    # WHEN it is refused
    answer = client.send(event)
    # THEN neither the log nor the answer gives the expected signature away
    assert answer.status == 401
    expected_hex = expected.rsplit("v1=", 1)[-1]
    assert all(expected_hex not in line for line in logs.lines())
    assert expected_hex not in str(answer.body)
