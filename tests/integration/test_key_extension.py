"""The key through the AWS Parameters and Secrets Lambda Extension, and back to boto3 when it gives none.

The extension is a Lambda layer and cannot run here: tests.support.secrets_extension.SecretsExtensionStandIn
speaks its documented localhost API, backed by moto's Secrets Manager, so the secret it serves
is real. The handler's own boto3 client reaches moto through a TCP relay, which counts the
reads that did not go through the extension.
"""

from __future__ import annotations

import http.client
import json
import os
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda import app
from median_lambda.key.source import MedianKeySource
from median_lambda.protocol import (
    DEV_KEY_ENV,
    IDEMPOTENCY_TABLE_ENV,
    KEY_CACHE_SECONDS,
    KEY_MIN_REFRESH_SECONDS,
    KEY_SECRET_ENV,
    SECRETS_EXTENSION_PATH,
    SECRETS_EXTENSION_PORT_ENV,
    SECRETS_EXTENSION_TOKEN_ENV,
    SECRETS_EXTENSION_TOKEN_HEADER,
)
from median_lambda.testing import FakeLambdaContext, answer_of, signed_event

from tests.clock import SteppedClock
from tests.fault_relay import Fault, FaultRelay
from tests.support.cold_start import cold_start, lay_out_artifact
from tests.support.ports import free_port
from tests.support.secrets_extension import SecretsExtensionStandIn
from tests.threaded_server import serving_in_a_thread

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from median_lambda.testing import TestAnswer
    from mypy_boto3_secretsmanager import SecretsManagerClient

    from tests.conftest import LogCapture

KEY = "mk_live_extension_0123456789"
NEW_KEY = "mk_live_rotated_9876543210"
FORGED_KEY = "mk_forged_not_the_key_at_all"
SESSION_TOKEN = "session-token-of-this-container"
FALLBACK_MESSAGE = "The Parameters and Secrets Extension gave no secret"


@dataclass
class Container:
    """A warm container with the extension's port set; boto3 reaches moto through `relay`."""

    secrets: SecretsManagerClient
    extension: SecretsExtensionStandIn
    relay: FaultRelay
    secret_id: str
    clock: SteppedClock
    env: pytest.MonkeyPatch

    def get(self, key: str) -> TestAnswer:
        return answer_of(app.lambda_handler(signed_event("GET", key=key), FakeLambdaContext()))  # type: ignore[arg-type]

    def store(self, **value: Any) -> None:
        self.secrets.create_secret(Name=self.secret_id, **value)

    def point_extension_at(self, port: int) -> None:
        self.env.setenv(SECRETS_EXTENSION_PORT_ENV, str(port))

    def boto3_reads(self) -> int:
        return self.relay.requests


@pytest.fixture
def extension(moto_endpoint: str) -> Iterator[SecretsExtensionStandIn]:
    with SecretsExtensionStandIn(moto_endpoint, SESSION_TOKEN, ttl_seconds=300) as stand_in:
        yield stand_in


@pytest.fixture
def container(
    secrets: SecretsManagerClient,
    extension: SecretsExtensionStandIn,
    fault_relay: FaultRelay,
    clean_env: pytest.MonkeyPatch,
) -> Container:
    # GIVEN a new container, the extension's layer in place, and a secret only this test uses
    secret_id = f"median/extension-{uuid.uuid4().hex[:8]}"
    clean_env.setenv(KEY_SECRET_ENV, secret_id)
    clean_env.delenv(DEV_KEY_ENV, raising=False)
    clean_env.setenv(SECRETS_EXTENSION_PORT_ENV, str(extension.port))
    clean_env.setenv(SECRETS_EXTENSION_TOKEN_ENV, SESSION_TOKEN)
    clean_env.setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", fault_relay.endpoint)
    clock = SteppedClock()
    clean_env.setattr(app, "key_source", MedianKeySource(clock=clock))
    return Container(secrets, extension, fault_relay, secret_id, clock, clean_env)


def fallback_causes(logs: LogCapture) -> list[str]:
    return [record["cause"] for record in logs.records() if record["message"].startswith(FALLBACK_MESSAGE)]


# --- Through the extension ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "stored",
    [KEY, f"  {KEY}\n", f'{{"key": "{KEY}"}}', f'{{"key": " {KEY}\\n", "rotated": "2026-01"}}'],
    ids=["plain", "plain with whitespace", "JSON key", "JSON key with whitespace"],
)
def test_the_key_is_read_through_the_extension_without_boto3(container: Container, stored: str) -> None:
    # GIVEN the secret holds the key in one of its accepted forms
    container.store(SecretString=stored)
    # WHEN Median's first GET reaches the container
    answer = container.get(KEY)
    # THEN it is served with the key the extension gave, and boto3 read nothing
    assert answer.status == 200
    assert container.extension.requests == 1
    assert container.boto3_reads() == 0


def test_a_warm_container_keeps_the_key_and_asks_the_extension_once(container: Container) -> None:
    # GIVEN a container that has read the key through the extension
    container.store(SecretString=KEY)
    assert container.get(KEY).status == 200
    # WHEN more requests arrive within the key's cache lifetime
    answers = [container.get(KEY).status for _ in range(10)]
    # THEN none asks the extension again; after the lifetime, one does
    assert answers == [200] * 10
    assert container.extension.requests == 1
    container.clock.advance(KEY_CACHE_SECONDS)
    assert container.get(KEY).status == 200
    assert container.extension.requests == 2


@pytest.mark.parametrize(
    ("stored", "cause"),
    [
        ({"SecretString": "  \n"}, "the secret is empty"),
        ({"SecretString": '{"value": "x"}'}, 'without a string "key" member'),
        ({"SecretBinary": b"mk_live_as_bytes"}, "binary"),
    ],
    ids=["blank", "JSON without key", "binary"],
)
def test_an_unusable_secret_from_the_extension_is_no_key_with_the_cause_logged(
    container: Container, logs: LogCapture, stored: dict[str, Any], cause: str
) -> None:
    # GIVEN the extension serves a secret that holds no usable key
    container.store(**stored)
    # WHEN a signed GET arrives
    answer = container.get(KEY)
    # THEN 500 no_key, the log says why and not what the secret holds; boto3 would read the same, so it does not
    assert answer.status == 500
    assert answer.body["error"]["code"] == "no_key"
    [record] = [r for r in logs.records() if r["message"].startswith("No usable Median key")]
    assert cause in record["cause"]
    assert "mk_live_as_bytes" not in logs.text()
    assert container.boto3_reads() == 0


def test_the_dev_key_rules_are_unchanged_with_the_extension_set(container: Container) -> None:
    # GIVEN no secret named, outside Lambda, a dev key, and the extension's port still set
    container.env.delenv(KEY_SECRET_ENV)
    container.env.setenv(DEV_KEY_ENV, KEY)
    # WHEN a request signed with the dev key arrives
    answer = container.get(KEY)
    # THEN it verifies with the dev key, and the extension was never asked
    assert answer.status == 200
    assert container.extension.requests == 0


# --- Back to boto3 when the extension gives no secret -------------------------------------------


# The line's faults: not NONE, nor ANSWER, where the relay answers in the service's stead.
LINE_FAULTS = [fault for fault in Fault if fault not in (Fault.NONE, Fault.ANSWER)]


@pytest.mark.parametrize("fault", LINE_FAULTS, ids=lambda fault: fault.value)
def test_an_extension_that_cannot_be_reached_falls_back_to_boto3(
    container: Container, fault: Fault, logs: LogCapture
) -> None:
    # GIVEN the line to the extension fails: refused, dropped, reset, stalled, or its answer trickles in
    container.store(SecretString=KEY)
    with FaultRelay("127.0.0.1", container.extension.port) as line:
        line.fault = fault
        container.point_extension_at(line.port)
        # WHEN Median's GET arrives
        answer = container.get(KEY)
    # THEN it is served with the key boto3 read, and the log says why the extension was passed over
    assert answer.status == 200
    assert container.boto3_reads() == 1
    assert fallback_causes(logs) == [fallback_causes(logs)[0]]
    # A trickle is no failure of the line's: each wait for a byte is short, and the read as a whole took too long
    said = "did not answer within the 3.0 s it had" if fault is Fault.TRICKLE else "could not be reached"
    assert said in fallback_causes(logs)[0]


def test_a_closed_extension_port_falls_back_to_boto3(container: Container, logs: LogCapture) -> None:
    # GIVEN nothing listens on the extension's port
    container.store(SecretString=KEY)
    container.point_extension_at(free_port())
    # WHEN Median's GET arrives
    # THEN boto3 reads the key and the request is served
    assert container.get(KEY).status == 200
    assert container.boto3_reads() == 1
    assert "could not be reached" in fallback_causes(logs)[0]


def test_an_extension_that_refuses_the_token_falls_back_to_boto3(
    container: Container, moto_endpoint: str, logs: LogCapture
) -> None:
    # GIVEN an extension that expects another session token than this container's
    container.store(SecretString=KEY)
    with SecretsExtensionStandIn(moto_endpoint, "another-token") as other:
        container.point_extension_at(other.port)
        # WHEN Median's GET arrives
        answer = container.get(KEY)
    # THEN the extension's refusal sends the read to boto3, and the log names the status, once
    assert answer.status == 200
    assert container.boto3_reads() == 1
    assert fallback_causes(logs) == ["it answered HTTP 403"]
    # AND its line says what was done instead, and that it is said once per cause: more would be no news
    [line] = [record for record in logs.records() if record.get("cause") == "it answered HTTP 403"]
    assert line["level"] == "WARNING"
    assert line["message"] == (
        "The Parameters and Secrets Extension gave no secret; reading the Median key through boto3 instead "
        "(logged once per container for each cause)"
    )


def test_a_missing_secret_through_the_extension_falls_back_and_is_no_key(
    container: Container, logs: LogCapture
) -> None:
    # GIVEN the secret does not exist, so the extension refuses with Secrets Manager's error
    # WHEN a signed GET arrives
    answer = container.get(KEY)
    # THEN boto3 reads too, and the log names its precise cause
    assert answer.status == 500
    assert container.boto3_reads() == 1
    [record] = [r for r in logs.records() if r["message"].startswith("No usable Median key")]
    assert "ResourceNotFoundException" in record["cause"]


@contextmanager
def server_answering(status: int, content_type: str, body: bytes) -> Iterator[int]:
    """A loopback HTTP server that answers every GET the same way: not the extension at all."""

    class Answer(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            pass

    with serving_in_a_thread(ThreadingHTTPServer(("127.0.0.1", 0), Answer), poll_seconds=0.05) as server:
        yield int(server.server_address[1])


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("text/html", b"<html><body>Welcome</body></html>"),
        ("application/json", b'{"Parameter": {"Value": "mk_live_a_parameter"}}'),
        ("application/json", b'["SecretString"]'),
        ("application/json", b'{"SecretString": '),
        ("application/json", b""),
    ],
    ids=["html", "a parameter", "a list", "truncated", "empty"],
)
def test_an_answer_that_is_not_a_secret_falls_back_to_boto3(
    container: Container, logs: LogCapture, content_type: str, body: bytes
) -> None:
    # GIVEN something answers 200 on the extension's port, but not with a GetSecretValue answer
    container.store(SecretString=KEY)
    with server_answering(200, content_type, body) as port:
        container.point_extension_at(port)
        # WHEN Median's GET arrives
        answer = container.get(KEY)
    # THEN boto3 reads the key; the log says the answer was not a secret, and quotes none of it
    assert answer.status == 200
    assert container.boto3_reads() == 1
    assert fallback_causes(logs) == ["its answer is not a GetSecretValue answer"]
    assert "mk_live_a_parameter" not in logs.text()


@pytest.mark.parametrize(
    ("variable", "value", "cause"),
    [(SECRETS_EXTENSION_TOKEN_ENV, None, "AWS_SESSION_TOKEN is not set"), (SECRETS_EXTENSION_PORT_ENV, "27x3", "port")],
    ids=["no session token", "not a port"],
)
def test_a_configuration_the_extension_cannot_serve_falls_back_without_asking_it(
    container: Container, logs: LogCapture, variable: str, value: str | None, cause: str
) -> None:
    # GIVEN no session token to show the extension (as under SnapStart), or a port that is no number
    container.store(SecretString=KEY)
    if value is None:
        container.env.delenv(variable)
    else:
        container.env.setenv(variable, value)
    # WHEN Median's GET arrives
    answer = container.get(KEY)
    # THEN boto3 reads the key, the extension is not asked, and the log says why
    assert answer.status == 200
    assert container.extension.requests == 0
    assert cause in fallback_causes(logs)[0]


def test_the_fallback_is_logged_once_per_cause(container: Container, logs: LogCapture) -> None:
    # GIVEN an extension port nothing listens on
    container.store(SecretString=KEY)
    container.point_extension_at(free_port())
    # WHEN the key is read three times, each after its cache lifetime
    for _ in range(3):
        assert container.get(KEY).status == 200
        container.clock.advance(KEY_CACHE_SECONDS)
    # THEN three reads went through boto3, and the cause was logged once
    assert container.boto3_reads() == 3
    assert len(fallback_causes(logs)) == 1


# --- The same limits, and rotation --------------------------------------------------------------


def test_while_the_secret_is_missing_both_paths_read_once_per_floor(container: Container) -> None:
    # GIVEN the secret does not exist
    # WHEN a hundred requests arrive, Median's and forged ones mixed
    answers = [container.get(KEY if n % 2 else FORGED_KEY) for n in range(100)]
    # THEN each is 500 no_key; the extension was asked once, and boto3 read once after it
    assert {answer.status for answer in answers} == {500}
    assert (container.extension.requests, container.boto3_reads()) == (1, 1)
    # and once more each after the floor
    container.clock.advance(KEY_MIN_REFRESH_SECONDS)
    container.get(KEY)
    assert (container.extension.requests, container.boto3_reads()) == (2, 2)


def test_forged_requests_read_the_secret_once_per_floor_and_through_boto3(container: Container) -> None:
    # GIVEN a container that read the key through the extension, longer ago than the floor
    container.store(SecretString=KEY)
    assert container.get(KEY).status == 200
    container.clock.advance(KEY_MIN_REFRESH_SECONDS)
    # WHEN a hundred forged requests arrive
    answers = [container.get(FORGED_KEY).status for _ in range(100)]
    # THEN all are refused, at the cost of one boto3 read and no further request to the extension
    assert answers == [401] * 100
    assert (container.extension.requests, container.boto3_reads()) == (1, 1)


def test_a_rotated_key_is_read_past_the_extensions_cache(container: Container) -> None:
    # GIVEN the extension has cached the old key, and the key is then rotated
    container.store(SecretString=KEY)
    assert container.get(KEY).status == 200
    container.secrets.put_secret_value(SecretId=container.secret_id, SecretString=NEW_KEY)
    container.clock.advance(KEY_MIN_REFRESH_SECONDS)
    # WHEN Median signs with the new key
    answer = container.get(NEW_KEY)
    # THEN the mismatch's read went to Secrets Manager through boto3 and found it, though the
    # extension would still have answered with the old key
    assert answer.status == 200
    assert container.boto3_reads() == 1
    assert (
        json.loads(
            container.extension.answer(f"{SECRETS_EXTENSION_PATH}?secretId={container.secret_id}", SESSION_TOKEN)[1]
        )["SecretString"]
        == KEY
    )


# --- The stand-in is held to the extension's rules ---------------------------------------------


@pytest.mark.parametrize("token", [None, "", "not-the-session-token"], ids=["missing", "empty", "wrong"])
def test_the_stand_in_refuses_a_request_without_the_session_token(container: Container, token: str | None) -> None:
    # GIVEN the extension with a real secret behind it
    container.store(SecretString=KEY)
    # WHEN it is asked for the secret without this container's session token
    connection = http.client.HTTPConnection("127.0.0.1", container.extension.port, timeout=5)
    headers = {} if token is None else {SECRETS_EXTENSION_TOKEN_HEADER: token}
    connection.request("GET", f"{SECRETS_EXTENSION_PATH}?secretId={container.secret_id}", headers=headers)
    response = connection.getresponse()
    body = response.read()
    connection.close()
    # THEN it refuses, and read nothing from Secrets Manager
    assert response.status == 403
    assert KEY.encode() not in body
    assert container.extension.reads == 0


# --- A cold container -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return lay_out_artifact(tmp_path_factory.mktemp("artifact"), prebuilt_manifest=True)


def test_a_cold_get_through_the_extension_imports_neither_boto3_nor_botocore(
    artifact: Path, container: Container
) -> None:
    # GIVEN a new container on Lambda, the key in Secrets Manager, the extension's port set
    container.store(SecretString=KEY)
    env = {name: value for name, value in os.environ.items() if not name.startswith("MEDIAN_")}
    env.update(
        {
            KEY_SECRET_ENV: container.secret_id,
            SECRETS_EXTENSION_PORT_ENV: str(container.extension.port),
            SECRETS_EXTENSION_TOKEN_ENV: SESSION_TOKEN,
            IDEMPOTENCY_TABLE_ENV: "median-idempotency",
            "AWS_LAMBDA_FUNCTION_NAME": "median-tools",
        }
    )
    # WHEN it answers its first request, a signed GET
    started = cold_start(signed_event("GET", key=KEY), artifact, env)
    # THEN it serves the manifest with the key from the extension, having imported no AWS SDK
    assert started.answer.status == 200
    assert container.extension.requests == 1
    packages = {module.split(".")[0] for module in started.modules}
    assert "boto3" not in packages
    assert "botocore" not in packages
