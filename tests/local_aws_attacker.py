"""Another account of the machine, attacking a local moto server: `python -m tests.local_aws_attacker`.

Run as a process of its own, with none of the developer's environment: what another Unix user of
the machine has. It knows what it can find or guess: the port (loopback's are anyone's to scan),
moto's documented credentials (`testing`), the run's access key id (not a secret), and, as the
worst case, requests the developer signed (their Authorization headers), which it replays on
other requests or after their time. It reads one JSON document on stdin:

    {"endpoint": "http://127.0.0.1:PORT", "access_key_id": "...", "secret": "...", "table": "...",
     "parameter": "...", "captured": {"<service>": {headers of a signed request}},
     "stale": {"<operation>": {"headers": {...}, "body": "..."}}}

and prints one JSON line per attempt: what it tried, the status, the error code, and whether the
secret's value came back. It never imports the project's code: it is not the developer's.
"""

from __future__ import annotations

import http.client
import json
import sys
from typing import Any
from urllib.parse import urlsplit

# Each operation as the AWS JSON protocol sends it: (service, X-Amz-Target, Content-Type, body).
JSON_1_0 = "application/x-amz-json-1.0"
JSON_1_1 = "application/x-amz-json-1.1"
PLANTED = "planted-by-another-account"


def operations(secret: str, parameter: str, table: str) -> dict[str, tuple[str, str, str, dict[str, Any]]]:
    return {
        "GetSecretValue": ("secretsmanager", "secretsmanager.GetSecretValue", JSON_1_1, {"SecretId": secret}),
        "GetParameter": ("ssm", "AmazonSSM.GetParameter", JSON_1_1, {"Name": parameter}),
        "Scan": ("dynamodb", "DynamoDB_20120810.Scan", JSON_1_0, {"TableName": table}),
        "PutSecretValue": (
            "secretsmanager",
            "secretsmanager.PutSecretValue",
            JSON_1_1,
            {"SecretId": secret, "SecretString": PLANTED},
        ),
        "PutParameter": (
            "ssm",
            "AmazonSSM.PutParameter",
            JSON_1_1,
            {"Name": parameter, "Value": PLANTED, "Type": "String", "Overwrite": True},
        ),
        "PutItem": (
            "dynamodb",
            "DynamoDB_20120810.PutItem",
            JSON_1_0,
            {"TableName": table, "Item": {"id": {"S": PLANTED}}},
        ),
    }


def send(endpoint: str, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, str, bytes]:
    """One request on real HTTP: (status, the AWS error code it names, the body)."""
    parts = urlsplit(endpoint)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        answer = response.read()
        code = response.getheader("x-amzn-ErrorType", "")
    finally:
        connection.close()
    return response.status, code, answer


def with_boto3(endpoint: str, operation: str, service: str, document: dict[str, Any], key: str, secret: str) -> Any:
    """The operation through boto3, signed with a credential the attacker has or guessed."""
    import boto3
    from botocore.config import Config
    from botocore.exceptions import ClientError

    client = boto3.Session(aws_access_key_id=key, aws_secret_access_key=secret, region_name="us-east-1").client(
        service, endpoint_url=endpoint, config=Config(retries={"total_max_attempts": 1})
    )
    try:
        answer = getattr(client, _snake(operation))(**document)
    except ClientError as error:
        status = error.response["ResponseMetadata"].get("HTTPStatusCode", 0)
        return status, error.response["Error"].get("Code", ""), str(error).encode()
    return 200, "", json.dumps(answer, default=str).encode()


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")


def attack(plan: dict[str, Any]) -> list[dict[str, Any]]:
    endpoint = plan["endpoint"]
    host = urlsplit(endpoint).netloc
    results = []

    def record(attempt: str, operation: str, status: int, code: str, body: bytes) -> None:
        results.append(
            {
                "attempt": attempt,
                "operation": operation,
                "status": status,
                "code": code,
                "leaked": plan["secret_value"].encode() in body,
            }
        )

    for operation, (service, target, content_type, document) in operations(
        plan["secret"], plan["parameter"], plan["table"]
    ).items():
        body = json.dumps(document).encode()
        plain = {"Host": host, "Content-Type": content_type, "X-Amz-Target": target}
        record("unsigned", operation, *send(endpoint, "POST", "/", plain, body))
        record(
            "moto's documented key", operation, *with_boto3(endpoint, operation, service, document, *("testing",) * 2)
        )
        record(
            "the run's key id, a guessed secret",
            operation,
            *with_boto3(endpoint, operation, service, document, plan["access_key_id"], "testing"),
        )
        # A signature the developer's client made for another request of the service, on this one.
        captured = {**plan["captured"][service], "X-Amz-Target": target, "Content-Type": content_type}
        record("a signature taken from another request", operation, *send(endpoint, "POST", "/", captured, body))
        # The developer's own request for this very operation, signed 20 minutes ago, sent again whole.
        stale = plan["stale"][operation]
        record(
            "the same request, signed 20 minutes ago",
            operation,
            *send(endpoint, "POST", "/", stale["headers"], stale["body"].encode()),
        )
    # moto's own API: its data dump (every secret) and its reset.
    record("unsigned", "moto-api data.json", *send(endpoint, "GET", "/moto-api/data.json", {"Host": host}, b""))
    record("unsigned", "moto-api reset", *send(endpoint, "POST", "/moto-api/reset", {"Host": host}, b""))
    return results


def main() -> int:
    for result in attack(json.load(sys.stdin)):
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
