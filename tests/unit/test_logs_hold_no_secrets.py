"""No log line carries the key or a signature, whatever the request did.

That a deployed function's log holds no customer's input either, crashes included, is
tests/integration/test_deployed_logs_hold_no_secrets.py's: off Lambda, a crash is printed in
full for its author (median_lambda/authoring/local_crash.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from median_lambda.protocol import SIGNATURE_HEADER
from median_lambda.request.signature import sign
from median_lambda.testing import TEST_KEY, call_body, signed_event

if TYPE_CHECKING:
    from median_lambda.testing import MedianTestClient

    from tests.conftest import LogCapture

# The calls go to the sample tools (tests/sample_tools/).
pytestmark = pytest.mark.usefixtures("sample_tools")

# Values a customer might type, distinct enough that any echo of them is unmistakable.
INPUT_VALUES = ("TCK-SECRET-7781", "Jane Secretname", "card ending 4242 zq", "refund me zq19")
FORGED_KEY = "mk_forged_not_the_endpoints_key"


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
