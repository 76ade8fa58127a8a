"""The local AWS stand-in answers this machine's AWS clients, and no web page the developer visits.

Both moto servers the project starts are held: the `median_aws` fixture's (tests) and
`make serve LOCAL_AWS=moto`'s. Each is sent what a browser would send for a page: a request by
a DNS name rebound to 127.0.0.1 (a foreign `Host`), a cross-site request or its CORS preflight
(an `Origin`), a no-cors request (`Sec-Fetch-Site: cross-site`). Each is refused 403 before moto
reads it: no seeded secret in the answer, no parameter rewritten, and no CORS header granting a
page the right to read anything. boto3, which sends none of these, is answered as before.
"""

from __future__ import annotations

import json
import socket
from typing import TYPE_CHECKING, Any

import boto3
import pytest

from handler.testing.moto_server import LoopbackOnly
from tests.devserver_process import read_answer
from tests.devserver_process import serving_local_aws as serving

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from pathlib import Path

    from handler.testing import MedianAWS
    from tests.devserver_process import DevServerProcess

SECRET_NAME = "median-tools/carrier-token"
SECRET_VALUE = "the-carriers-real-looking-token"
PARAMETER_NAME = "/median-tools/carrier/base-url"
PARAMETER_VALUE = "https://api.carrier.example"
ATTACKER_URL = "https://attacker.example"


def raw_request(
    endpoint: str, service: str, target: str, document: dict[str, Any], **headers: str
) -> tuple[int, dict[str, str], bytes]:
    """An AWS JSON-protocol call as a page's fetch() can make it, sent on a plain socket; its answer.

    The page guard refuses it before anything else is looked at, the signature included: a made-up
    Authorization header naming the service is all a page needs to get that far.
    """
    host, port = endpoint.removeprefix("http://").rsplit(":", 1)
    body = json.dumps(document).encode("utf-8")
    credential = f"Credential=testing/20261201/us-east-1/{service}/aws4_request"
    lines = [
        "POST / HTTP/1.1",
        f"Host: {headers.pop('Host', f'{host}:{port}')}",
        f"Authorization: AWS4-HMAC-SHA256 {credential}, SignedHeaders=host, Signature=00",
        f"X-Amz-Target: {target}",
        "Content-Type: application/x-amz-json-1.1",
        f"Content-Length: {len(body)}",
        "Connection: close",
        *(f"{name.replace('_', '-')}: {value}" for name, value in headers.items()),
    ]
    with socket.create_connection((host, int(port)), timeout=30) as connection:
        connection.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        return read_answer(connection)


def read_secret(endpoint: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    return raw_request(
        endpoint, "secretsmanager", "secretsmanager.GetSecretValue", {"SecretId": SECRET_NAME}, **headers
    )


def rewrite_parameter(endpoint: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    document = {"Name": PARAMETER_NAME, "Value": ATTACKER_URL, "Type": "String", "Overwrite": True}
    return raw_request(endpoint, "ssm", "AmazonSSM.PutParameter", document, **headers)


# What a page can make a browser send to the local AWS, by the header that gives it away.
PAGES = {
    "a DNS name rebound to 127.0.0.1": {"Host": "attacker.example:{port}"},
    "a cross-site fetch": {"Origin": ATTACKER_URL},
    "another port of this machine": {"Origin": "http://127.0.0.1:3000"},
    "a no-cors request": {"Sec_Fetch_Site": "cross-site", "Sec_Fetch_Mode": "no-cors"},
    "another localhost site": {"Sec_Fetch_Site": "same-site"},
}


def page_headers(endpoint: str, page: str) -> dict[str, str]:
    port = endpoint.rsplit(":", 1)[1]
    return {name: value.format(port=port) for name, value in PAGES[page].items()}


def assert_refused(answer: tuple[int, dict[str, str], bytes]) -> None:
    status, headers, body = answer
    assert status == 403, body
    assert not [name for name in headers if name.startswith("access-control-")]
    assert SECRET_VALUE.encode() not in body
    assert json.loads(body)["error"]["code"] == "forbidden"


# --- The median_aws fixture's server --------------------------------------------------------------


@pytest.fixture
def seeded(median_aws: MedianAWS) -> str:
    """The test's moto holding a secret and a parameter a tool reads its base URL from."""
    median_aws.create_secret(SECRET_NAME, SECRET_VALUE)
    median_aws.put_parameter(PARAMETER_NAME, PARAMETER_VALUE, secure=False)
    return median_aws.endpoint


@pytest.mark.parametrize("page", list(PAGES))
def test_a_page_can_neither_read_a_secret_nor_rewrite_a_parameter(
    seeded: str, median_aws: MedianAWS, page: str
) -> None:
    # GIVEN the fixture's moto, holding a secret and a parameter
    headers = page_headers(seeded, page)
    # WHEN a page the developer visits asks for the secret, and to point the parameter at itself
    read, write = read_secret(seeded, **headers), rewrite_parameter(seeded, **headers)
    # THEN both are refused before moto reads them, with no CORS grant and no value in the answer
    assert_refused(read)
    assert_refused(write)
    # AND the parameter is as it was
    assert median_aws.client("ssm").get_parameter(Name=PARAMETER_NAME)["Parameter"]["Value"] == PARAMETER_VALUE


def test_a_cors_preflight_is_granted_nothing(seeded: str) -> None:
    # GIVEN the fixture's moto
    host, port = seeded.removeprefix("http://").rsplit(":", 1)
    # WHEN a page's fetch() asks first whether it may send an AWS call
    preflight = (
        f"OPTIONS / HTTP/1.1\r\nHost: {host}:{port}\r\nOrigin: {ATTACKER_URL}\r\n"
        "Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: x-amz-target\r\n"
        "Connection: close\r\n\r\n"
    )
    with socket.create_connection((host, int(port)), timeout=30) as connection:
        connection.sendall(preflight.encode("ascii"))
        answer = read_answer(connection)
    # THEN it is refused, and no header allows any origin
    assert_refused(answer)


def test_this_machines_aws_clients_are_answered_as_before(seeded: str) -> None:
    # GIVEN the fixture's moto, and the address its clients are pointed at, by either loopback name
    for endpoint in (seeded, seeded.replace("127.0.0.1", "localhost")):
        # WHEN boto3 reads the secret, as a tool does
        client = boto3.client("secretsmanager", endpoint_url=endpoint, region_name="us-east-1")
        # THEN it gets the value
        assert client.get_secret_value(SecretId=SECRET_NAME)["SecretString"] == SECRET_VALUE


def test_it_listens_on_loopback_only(median_aws: MedianAWS) -> None:
    # GIVEN the fixture's moto, and this machine's other addresses
    port = int(median_aws.endpoint.rsplit(":", 1)[1])
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)}
    except socket.gaierror:
        addresses = set()
    others = sorted(address for address in addresses if not address.startswith("127."))
    # THEN its URL is 127.0.0.1's, and no other address of this machine reaches it
    assert median_aws.endpoint.startswith("http://127.0.0.1:")
    for address in others:
        with pytest.raises(OSError), socket.create_connection((address, port), timeout=5):
            pass


def test_no_answer_of_moto_grants_a_page_cors() -> None:
    # GIVEN an application that grants every origin, as moto's own CORS does, behind the middleware
    def grants_every_origin(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        start_response("200 OK", [("Access-Control-Allow-Origin", "*"), ("Content-Type", "application/json")])
        return [b"{}"]

    received: list[tuple[str, list[tuple[str, str]]]] = []
    # WHEN this machine's client is answered through it
    body = LoopbackOnly(grants_every_origin)(
        {"HTTP_HOST": "127.0.0.1:5000", "REQUEST_METHOD": "POST"},
        lambda status, headers, exc_info=None: received.append((status, headers)),
    )
    # THEN the answer comes back without the grant
    assert list(body) == [b"{}"]
    assert received == [("200 OK", [("Content-Type", "application/json")])]


# --- make serve LOCAL_AWS=moto --------------------------------------------------------------------


LOCAL_SETTINGS = f"""
    [secrets]
    "{SECRET_NAME}" = "{SECRET_VALUE}"

    [parameters]
    "{PARAMETER_NAME}" = "{PARAMETER_VALUE}"
"""


@pytest.fixture
def serving_local_aws(tmp_path: Path) -> Iterator[DevServerProcess]:
    """`make serve LOCAL_AWS=moto` in a project whose local settings seed a secret and a parameter."""
    with serving(tmp_path, LOCAL_SETTINGS) as server:
        yield server


def test_make_serve_s_local_aws_refuses_pages_and_answers_its_tools(serving_local_aws: DevServerProcess) -> None:
    # GIVEN make serve's moto, seeded from tools/settings.local.toml
    endpoint = serving_local_aws.local_aws_environment()["AWS_ENDPOINT_URL"]
    # WHEN each kind of page asks for the seeded secret and to rewrite the seeded parameter
    for page in PAGES:
        headers = page_headers(endpoint, page)
        # THEN each is refused, the secret never in the answer
        assert_refused(read_secret(endpoint, **headers))
        assert_refused(rewrite_parameter(endpoint, **headers))
    # AND the tools' own AWS calls are answered, the parameter as the local file seeded it
    ssm = serving_local_aws.local_aws_client("ssm")
    assert ssm.get_parameter(Name=PARAMETER_NAME)["Parameter"]["Value"] == PARAMETER_VALUE
