"""Only the three event shapes the protocol names are served; any other gets a 400 that names them.

The fixtures are events as AWS documents or captured them, with their bodies made a call:
an Application Load Balancer's (Elastic Load Balancing's guide, "Lambda functions as
targets"), an API Gateway WebSocket API's `$connect` and message (captured, as Powertools
keeps them), and VPC Lattice's two event structures (VPC Lattice's guide, "Lambda functions
as targets in VPC Lattice").
"""

from __future__ import annotations

import base64
import copy
import json
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda.protocol import SERVED_EVENT_SHAPES, SIGNATURE_HEADER
from median_lambda.request.signature import sign
from median_lambda.testing import TEST_KEY

from tests.conftest import EVENTS_DIR

if TYPE_CHECKING:
    from collections.abc import Callable

    from median_lambda.testing import TestAnswer

    from tests.conftest import EventBuilder

OTHER_SHAPES = {
    "alb": "an Application Load Balancer event",
    "websocket_connect": "an API Gateway WebSocket event",
    "websocket_message": "an API Gateway WebSocket event",
    "vpc_lattice_v1": "a VPC Lattice event",
    "vpc_lattice_v2": "a VPC Lattice event",
}


def signed_fixture(name: str) -> dict[str, Any]:
    """The fixture, with a valid signature of its body under the test key: only its shape is wrong."""
    event: dict[str, Any] = copy.deepcopy(json.loads((EVENTS_DIR / f"{name}.json").read_text(encoding="utf-8")))
    body = (event.get("body") or "").encode("utf-8")
    if event.get("is_base64_encoded"):
        body = base64.b64decode(body)
    event.setdefault("headers", {})[SIGNATURE_HEADER] = sign(TEST_KEY, body)
    return event


@pytest.mark.parametrize("name", sorted(OTHER_SHAPES))
def test_an_event_of_another_shape_is_400_naming_the_shapes_served(
    name: str, client_key: None, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN an event as a load balancer, a WebSocket API or VPC Lattice sends it, correctly signed
    event = signed_fixture(name)
    # WHEN the function is invoked with it
    answer = invoke(event)
    # THEN it is refused as a bad request that names what it is and the three shapes served
    assert answer.status == 400
    assert answer.body["error"]["code"] == "bad_request"
    message = answer.body["error"]["message"]
    assert OTHER_SHAPES[name] in message
    assert all(shape in message for shape in SERVED_EVENT_SHAPES)


def test_an_alb_event_is_not_answered_as_api_gateways_even_with_an_api_gateway_method(
    client_key: None, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN a load balancer's event, which carries httpMethod just as a REST API's does
    event = signed_fixture("alb")
    assert event["httpMethod"] == "POST"
    # WHEN the function is invoked with it
    answer = invoke(event)
    # THEN it is refused before the body is read: no tool runs for it
    assert answer.status == 400
    assert "ok" not in answer.body


def _drop_version(event: dict[str, Any]) -> None:
    del event["version"]


def _drop_api_id(event: dict[str, Any]) -> None:
    del event["requestContext"]["apiId"]


@pytest.mark.parametrize(
    ("shape", "change"),
    [
        pytest.param("http_api_v2", _drop_version, id="HTTP API without its version"),
        pytest.param("function_url", _drop_version, id="Function URL without its version"),
        pytest.param("rest_api_v1", _drop_api_id, id="REST API without its API's id"),
    ],
)
def test_a_served_shape_missing_what_it_must_carry_is_400(
    shape: str, change: Callable[[dict[str, Any]], None], make_event: EventBuilder, invoke: Callable[..., TestAnswer]
) -> None:
    # GIVEN a served event that lost a member its shape must carry
    event = make_event(shape, "GET")
    change(event)
    # WHEN the function is invoked with it
    answer = invoke(event)
    # THEN it is refused, and the message says why
    assert answer.status == 400
    assert "missing what its shape must carry" in answer.body["error"]["message"]


@pytest.fixture
def client_key(clean_env: pytest.MonkeyPatch) -> None:
    """The handler verifies with the test key, as under `make serve`, so only the shape can fail."""
    clean_env.setenv("MEDIAN_DEV_KEY", TEST_KEY)
    clean_env.delenv("MEDIAN_KEY_SECRET_ID", raising=False)
