"""With only a dev key set, nothing reads Secrets Manager: not a GET, not a forged request.

A mismatch makes a deployed key source read its secret again, in case the key was rotated. With
no secret named there is nothing to read: were the key source to read anyway, it would ask for a
secret whose name is empty or made up, from whatever account the machine's credentials reach.
Reads are counted where they would reach the service (the fault relay in front of moto's server).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from median_lambda import app
from median_lambda.key.source import MedianKeySource
from median_lambda.protocol import DEV_KEY_ENV, KEY_SECRET_ENV
from median_lambda.testing import FakeLambdaContext, answer_of, signed_event

from tests.clock import SteppedClock

if TYPE_CHECKING:
    from median_lambda.testing import TestAnswer

    from tests.fault_relay import FaultRelay

DEV_KEY = "mk_dev_local_0123456789"
FORGED_KEY = "mk_forged_not_the_key_at_all"


def _get(key: str) -> TestAnswer:
    return answer_of(app.lambda_handler(signed_event("GET", key=key), FakeLambdaContext()))  # type: ignore[arg-type]


@pytest.mark.parametrize("secret_id", [None, "", "   "], ids=["unset", "empty", "blank"])
def test_a_mismatch_under_the_dev_key_reads_no_secret(
    fault_relay: FaultRelay, clean_env: pytest.MonkeyPatch, secret_id: str | None
) -> None:
    # GIVEN a local endpoint with only MEDIAN_DEV_KEY, no secret named (or a blank name), and a
    # Secrets Manager that would count any read
    if secret_id is None:
        clean_env.delenv(KEY_SECRET_ENV, raising=False)
    else:
        clean_env.setenv(KEY_SECRET_ENV, secret_id)
    clean_env.setenv(DEV_KEY_ENV, DEV_KEY)
    clean_env.delenv("AWS_LAMBDA_FUNCTION_NAME", raising=False)
    clean_env.setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", fault_relay.endpoint)
    clock = SteppedClock()
    clean_env.setattr(app, "key_source", MedianKeySource(clock=clock))
    # WHEN a request signed with the dev key comes, then forged ones, past every floor
    served = _get(DEV_KEY)
    forged = [_get(FORGED_KEY)]
    clock.advance(3600)
    forged.append(_get(FORGED_KEY))
    # THEN the dev key verifies, the forgeries are refused as mismatches, and no secret is read
    assert served.status == 200
    assert [(answer.status, answer.body["error"]["message"].split(":")[0]) for answer in forged] == [
        (401, "mismatch"),
        (401, "mismatch"),
    ]
    assert fault_relay.requests == 0
    assert app.key_source.holds_nothing()
