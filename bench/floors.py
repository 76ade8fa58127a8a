"""The floors: the least any correct endpoint must do, cold (a script a new process runs) and warm
(a function a loop calls), which the endpoint's and the peer's times are divided by.

A floor checks what no endpoint may skip (the method, the timestamp's age, the HMAC) and answers
what the endpoint answers, and nothing more. The variants weighed as ideas are built from these.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import TYPE_CHECKING, Any

from median_lambda.protocol import (
    SECRETS_EXTENSION_HOST,
    SECRETS_EXTENSION_PATH,
    SECRETS_EXTENSION_PORT_ENV,
    SECRETS_EXTENSION_TOKEN_ENV,
    SECRETS_EXTENSION_TOKEN_HEADER,
    SIGNATURE_TOLERANCE_SECONDS,
)

if TYPE_CHECKING:
    from collections.abc import Callable

# --- cold: the script a new process runs, given the prebuilt manifest's path --------------------

# The floor's cold process: nothing an endpoint could leave out. It reads the manifest file
# because a prebuilt manifest has to come from somewhere; it checks the timestamp's age
# because a signature without it can be replayed forever.
FLOOR_COLD = """
import hashlib, hmac, json, os, sys, time
import boto3

event = json.loads(sys.stdin.read())
with open(sys.argv[1], encoding="utf-8") as file:
    manifest = file.read().strip()
secret = boto3.client("secretsmanager").get_secret_value(SecretId=os.environ["MEDIAN_KEY_SECRET_ID"])
key = secret["SecretString"].encode("utf-8")
t, v1 = (item.split("=", 1)[1] for item in event["headers"]["median-signature"].split(","))
fresh = event["requestContext"]["http"]["method"] == "GET" and abs(time.time() - int(t)) <= 300
ok = fresh and hmac.compare_digest(hmac.new(key, t.encode("ascii") + b".", hashlib.sha256).hexdigest(), v1)
answer = {"statusCode": 200 if ok else 401, "headers": {"Content-Type": "application/json"},
          "body": manifest if ok else '{"error":{"code":"unauthorized"}}', "isBase64Encoded": False}
sys.stdout.write(json.dumps({"response": answer, "modules": sorted(sys.modules)}))
"""

# The same floor with the key from the Parameters and Secrets Lambda extension's localhost API:
# one GET with the standard library's http.client, the session token in the extension's header.
FLOOR_EXTENSION_COLD = FLOOR_COLD.replace("import boto3\n", "import http.client, urllib.parse\n").replace(
    """secret = boto3.client("secretsmanager").get_secret_value(SecretId=os.environ["MEDIAN_KEY_SECRET_ID"])""",
    f"""port = int(os.environ[{SECRETS_EXTENSION_PORT_ENV!r}])
query = "?secretId=" + urllib.parse.quote(os.environ["MEDIAN_KEY_SECRET_ID"])
connection = http.client.HTTPConnection({SECRETS_EXTENSION_HOST!r}, port, timeout=2)
token = os.environ[{SECRETS_EXTENSION_TOKEN_ENV!r}]
connection.request("GET", {SECRETS_EXTENSION_PATH!r} + query, headers={{{SECRETS_EXTENSION_TOKEN_HEADER!r}: token}})
secret = json.loads(connection.getresponse().read())""",
)

# The least a cold POST as deployed must do: the key from the extension (as the extension floor
# reads it) and the HMAC over the body; then what makes a call with a callId run at most once:
# import boto3, make a DynamoDB client, one conditional PutItem (the call's in-progress mark,
# refused if the callId has one), the tool's work (the order lookup, its answer's JSON), and one
# UpdateItem (the answer recorded). The table is template.yaml's shape (key `id`, TTL `expiration`).
FLOOR_TABLE_COLD = f"""
import hashlib, hmac, json, os, sys, time
import http.client, urllib.parse
import boto3

event = json.loads(sys.stdin.read())
port = int(os.environ[{SECRETS_EXTENSION_PORT_ENV!r}])
query = "?secretId=" + urllib.parse.quote(os.environ["MEDIAN_KEY_SECRET_ID"])
connection = http.client.HTTPConnection({SECRETS_EXTENSION_HOST!r}, port, timeout=2)
token = os.environ[{SECRETS_EXTENSION_TOKEN_ENV!r}]
connection.request("GET", {SECRETS_EXTENSION_PATH!r} + query, headers={{{SECRETS_EXTENSION_TOKEN_HEADER!r}: token}})
key = json.loads(connection.getresponse().read())["SecretString"].encode("utf-8")
body = event["body"].encode("utf-8")
t, v1 = (item.split("=", 1)[1] for item in event["headers"]["median-signature"].split(","))
fresh = event["requestContext"]["http"]["method"] == "POST" and abs(time.time() - int(t)) <= 300
ok = fresh and hmac.compare_digest(hmac.new(key, t.encode("ascii") + b"." + body, hashlib.sha256).hexdigest(), v1)
text = '{{"error":{{"code":"unauthorized"}}}}'
if ok:
    call = json.loads(body)
    table, dynamodb = os.environ["IDEMPOTENCY_TABLE"], boto3.client("dynamodb")
    record = {{"id": {{"S": "floor#" + hashlib.sha256(call["callId"].encode("utf-8")).hexdigest()}}}}
    mark = {{"status": {{"S": "INPROGRESS"}}, "expiration": {{"N": str(int(time.time()) + 3600)}}}}
    dynamodb.put_item(TableName=table, Item={{**record, **mark}}, ConditionExpression="attribute_not_exists(id)")
    from tools._sample_store import find_order
    order = find_order(call["input"]["orderNumber"])
    output = {{"orderNumber": order.number, "status": order.status,
              "carrier": order.carrier, "tracking": order.tracking}}
    text = json.dumps({{"version": 1, "ok": True, "output": output}}, separators=(",", ":"))
    dynamodb.update_item(
        TableName=table, Key=record, UpdateExpression="SET #status = :done, #data = :answer",
        ExpressionAttributeNames={{"#status": "status", "#data": "data"}},
        ExpressionAttributeValues={{":done": {{"S": "COMPLETED"}}, ":answer": {{"S": text}}}},
    )
answer = {{"statusCode": 200 if ok else 401, "headers": {{"Content-Type": "application/json"}},
          "body": text, "isBase64Encoded": False}}
sys.stdout.write(json.dumps({{"response": answer, "modules": sorted(sys.modules)}}))
"""

# What the standard library modules a cold GET imports beyond the extension floor cost it, one
# group at a time: the handler's modules import these at the top.
EXTENSION_FLOOR_IMPORTS = ("typing", "dataclasses", "pathlib, uuid")


def with_imports(modules: str) -> str:
    return FLOOR_EXTENSION_COLD.replace(
        "import http.client, urllib.parse\n", f"import http.client, urllib.parse, {modules}\n"
    )


# The boto3 floor with the key read through Powertools Parameters' get_secret instead of a client
# of one's own: what median_lambda/key/source.py's own cache saves a cold GET that reads through boto3.
FLOOR_GET_SECRET_COLD = FLOOR_COLD.replace(
    "import boto3\n", "from aws_lambda_powertools.utilities.parameters import get_secret\n"
).replace(
    """secret = boto3.client("secretsmanager").get_secret_value(SecretId=os.environ["MEDIAN_KEY_SECRET_ID"])""",
    """secret = {"SecretString": get_secret(os.environ["MEDIAN_KEY_SECRET_ID"], max_age=300)}""",
)

# The boto3 floor plus what the standard asks a POST to use: pydantic (one model, validated
# once: its first validation loads pydantic's schema machinery) and Powertools (whose package
# import brings Logger, Metrics and Tracer). What a cold POST costs beyond this is the handler's.
FLOOR_WITH_LIBRARIES_COLD = FLOOR_COLD.replace(
    "import boto3\n",
    """import boto3
import aws_lambda_powertools
from pydantic import BaseModel
class Probe(BaseModel):
    orderNumber: str
Probe.model_validate_json('{"orderNumber": "ORD-1042"}', strict=True)
""",
)


# The table-on floor plus the libraries the standard names for a POST, as FLOOR_WITH_LIBRARIES_COLD adds
# them to the boto3 floor, and Powertools Idempotency: what a cold POST as deployed costs beyond this is
# the handler's own.
FLOOR_TABLE_WITH_LIBRARIES_COLD = FLOOR_TABLE_COLD.replace(
    "import boto3\n",
    """import boto3
import aws_lambda_powertools.utilities.idempotency
from pydantic import BaseModel
class Probe(BaseModel):
    orderNumber: str
Probe.model_validate_json('{"orderNumber": "ORD-1042"}', strict=True)
""",
    1,
)


# --- warm: the function a loop calls, the key already in hand ----------------------------------


def floor_verify(event: dict[str, Any], method: str, key: bytes, body: bytes) -> bool:
    if event["requestContext"]["http"]["method"] != method:
        return False
    t, v1 = (item.split("=", 1)[1] for item in event["headers"]["median-signature"].split(","))
    if abs(time.time() - int(t)) > SIGNATURE_TOLERANCE_SECONDS:
        return False
    return hmac.compare_digest(hmac.new(key, t.encode("ascii") + b"." + body, hashlib.sha256).hexdigest(), v1)


def make_floor_get(key: bytes, manifest: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def floor_get(event: dict[str, Any]) -> dict[str, Any]:
        if not floor_verify(event, "GET", key, b""):
            return {"statusCode": 401, "body": "{}"}
        return {"statusCode": 200, "headers": {"Content-Type": "application/json"}, "body": manifest}

    return floor_get


def order_status(order: Any) -> dict[str, Any]:
    """The example's orderStatus output for an order of its sample store (tools/orders.py), as all three build it."""
    return {"orderNumber": order.number, "status": order.status, "carrier": order.carrier, "tracking": order.tracking}


def make_floor_post(key: bytes) -> Callable[[dict[str, Any]], dict[str, Any]]:
    from tools._sample_store import find_order  # the example project's, from the artifact

    def floor_post(event: dict[str, Any]) -> dict[str, Any]:
        body = event["body"].encode("utf-8")
        if not floor_verify(event, "POST", key, body):
            return {"statusCode": 401, "body": "{}"}
        order = find_order(json.loads(body)["input"]["orderNumber"])
        if order is None:
            return {"statusCode": 200, "body": '{"version":1,"ok":false}'}
        answer = json.dumps({"version": 1, "ok": True, "output": order_status(order)}, separators=(",", ":"))
        return {"statusCode": 200, "headers": {"Content-Type": "application/json"}, "body": answer}

    return floor_post
