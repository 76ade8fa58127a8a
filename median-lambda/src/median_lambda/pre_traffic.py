"""The PreTraffic hook: a new version is heard answering Median before it takes any call.

template.yaml's PreTrafficHook runs this module (`median_lambda.pre_traffic.lambda_handler`), from the
very artifact the function runs. At each deployment, before CodeDeploy moves any of `live` to the
new version, it invokes the hook with `{"DeploymentId": ..., "LifecycleEventHookExecutionId": ...}`
and waits for the hook's report. The hook sends the new version (MEDIAN_NEW_VERSION, its ARN, which
the template sets to `!Ref MedianToolsFunction.Version`) two requests, as API Gateway hands Median's
to it, signed with the stage's Median key:

- a GET, which must answer 200 with the manifest this build wrote (median_lambda/manifest.json, the
  same file in the same artifact): the version starts, reads its key (through the Parameters and
  Secrets extension, or, restored from a SnapStart snapshot, through boto3: whichever that version
  does), knows its stage, and serves what was built;
- a diagnostics call, which must answer 200 `ok: true` (404 `no_diagnostics` where the manifest
  declares none): POST's machinery loads, and the author's own checks of their systems pass with
  this stage's settings (a backend's URL, a secret this stage lacks: what a tool's every call would
  otherwise decline or fail on).

Anything else (another answer, an error Lambda reports, or a failure of the hook's own) is reported
`Failed`, and CodeDeploy stops the deployment before any call shifts; the hook's log says what it
heard. It always reports, whatever happens: CodeDeploy would otherwise wait an hour for it.

Once the version has answered, the hook keeps the function's published versions bounded: it deletes
all but the newest MEDIAN_KEPT_VERSIONS (3), never the new one, and never the one `live` points at
now, which a rollback returns to (Lambda refuses to delete a version an alias points at, too). A
pruning that fails is logged and fails nothing: the versions wait for the next deployment.

A tool's dry call is no part of it: a tool acts on the company's systems, and nothing tells a dry
call from a real one but the tool's own code.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from typing import TYPE_CHECKING, Any

from median_lambda.key.source import KeyUnavailable, MedianKeySource
from median_lambda.protocol import (
    LIVE_ALIAS,
    OP_DIAGNOSTICS,
    PREBUILT_MANIFEST_FILE,
    PROTOCOL_VERSION,
    SIGNATURE_HEADER,
    ErrorCode,
)
from median_lambda.request.signature import sign
from median_lambda.runtime import observability
from median_lambda.runtime.aws_clients import CallBounds, bounded_client

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

NEW_VERSION_ENV = "MEDIAN_NEW_VERSION"
KEPT_VERSIONS_ENV = "MEDIAN_KEPT_VERSIONS"
KEPT_VERSIONS = 3  # the new version, the one it replaces (the rollback's), and one more to go back to by hand
PREBUILT_MANIFEST = os.path.join(os.path.dirname(__file__), PREBUILT_MANIFEST_FILE)  # noqa: PTH118, PTH120
SUCCEEDED, FAILED = "Succeeded", "Failed"
# An invocation waits for the version's answer: its Timeout (29 s) and a cold start or restore.
INVOKE = CallBounds(connect_seconds=3.0, read_seconds=40.0, attempts=1)
# CodeDeploy's report and Lambda's version listing and deletion answer in well under a second.
CONTROL = CallBounds(connect_seconds=3.0, read_seconds=5.0, attempts=3)
# What a just-published version may answer for a moment, each documented as passing: still Pending
# (a SnapStart snapshot being made), its snapshot not ready, throttled, or the hook's role policy for
# this version not yet seen by every IAM endpoint (IAM is eventually consistent). Retried this long.
PASSING_CODES = frozenset(
    {"ResourceConflictException", "SnapStartNotReadyException", "TooManyRequestsException", "AccessDeniedException"}
)
PASSING_SECONDS = 30.0
PASSING_PAUSE_SECONDS = 3.0
# Pruning starts only with this much of the hook's Timeout left, so that the report always has time:
# a listing and a deletion or two, each at most longest_call_seconds(CONTROL), and the report's own.
PRUNING_NEEDS_SECONDS = 120.0


class NotHeard(Exception):
    """The new version did not answer as this build should; the message says what was heard."""


def lambda_handler(event: dict[str, Any], context: LambdaContext | None) -> None:
    """Hear the new version, prune the old ones, and report to CodeDeploy: always, whatever failed."""
    observability.invocation_started(context)
    version_arn = os.environ.get(NEW_VERSION_ENV, "")
    which = {"new_version": version_arn.rpartition(":")[2]}
    status = FAILED
    try:
        if not version_arn:
            raise NotHeard(f"{NEW_VERSION_ENV} names no version to hear (template.yaml's PreTrafficHook)")
        heard = hear(version_arn, MedianKeySource().get(context), bounded_client("lambda", INVOKE))
        observability.logger.info(f"The new version answered as this build should: {heard}", extra=which)
        status = SUCCEEDED
        if _seconds_left(context) > PRUNING_NEEDS_SECONDS:
            prune(version_arn, bounded_client("lambda", CONTROL))
    except NotHeard as failed:
        observability.logger.error(f"The new version takes no traffic: {failed}", extra=which)
    except KeyUnavailable as error:
        observability.logger.error(f"The new version takes no traffic: the hook could not read the Median key: {error}")
    except Exception as error:  # whatever it is, CodeDeploy hears Failed rather than waiting an hour
        observability.logger.error(
            "The new version takes no traffic: the hook failed", extra={**which, "error_type": type(error).__name__}
        )
    finally:
        report(event, status)


def _seconds_left(context: LambdaContext | None) -> float:
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    return remaining() / 1000 if remaining is not None else float("inf")


def hear(version_arn: str, key: str, lambda_client: Any) -> str:
    """Send the version a signed GET and a signed diagnostics call; what it answered, or NotHeard."""
    built = _built_manifest()
    status, answer = _answer(invoke(lambda_client, version_arn, _signed_event("GET", b"", key)))
    if status != 200:
        raise NotHeard(f"GET answered {status} {_error(answer)}")
    if answer != built:
        raise NotHeard(f"GET answered another manifest than this build's: {_difference(built, answer)}")
    body = json.dumps({"version": PROTOCOL_VERSION, "op": OP_DIAGNOSTICS}).encode("utf-8")
    status, answer = _answer(invoke(lambda_client, version_arn, _signed_event("POST", body, key)))
    if built.get("diagnostics"):
        if status != 200 or not isinstance(answer, dict) or answer.get("ok") is not True:
            raise NotHeard(f"diagnostics answered {status} {_error(answer)}")
        return f"GET 200, its {len(built['tools'])} tools as built; diagnostics 200 ok"
    if status != 404 or _code(answer) != ErrorCode.NO_DIAGNOSTICS:
        raise NotHeard(f"diagnostics, which the manifest declares none of, answered {status} {_error(answer)}")
    return f"GET 200, its {len(built['tools'])} tools as built; diagnostics 404 no_diagnostics, as declared"


def _built_manifest() -> dict[str, Any]:
    try:
        with open(PREBUILT_MANIFEST, encoding="utf-8") as file:  # noqa: PTH123 - see PREBUILT_MANIFEST
            manifest: dict[str, Any] = json.load(file)
    except (OSError, ValueError) as error:
        raise NotHeard(
            f"this artifact holds no manifest to compare with ({type(error).__name__}): was it built?"
        ) from None
    return manifest


def _signed_event(method: str, body: bytes, key: str) -> dict[str, Any]:
    """A request as API Gateway's HTTP API hands Median's to the function (payload 2.0), signed."""
    request_id = uuid.uuid4().hex
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": f"{method} /",
        "rawPath": "/",
        "rawQueryString": "",
        "headers": {"content-type": "application/json", SIGNATURE_HEADER: sign(key, body)},
        "requestContext": {
            "http": {"method": method, "path": "/", "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1"},
            "requestId": request_id,
            "routeKey": f"{method} /",
            "stage": "$default",
            "timeEpoch": int(time.time() * 1000),
        },
        "isBase64Encoded": False,
    }
    if body:
        event["body"] = body.decode("utf-8")
    return event


def invoke(lambda_client: Any, version_arn: str, event: dict[str, Any]) -> dict[str, Any]:
    """The version's answer to `event`, waiting out what a just-published version may answer for a moment."""
    from botocore.exceptions import ClientError

    gives_up_at = time.monotonic() + PASSING_SECONDS
    while True:
        try:
            invoked = lambda_client.invoke(FunctionName=version_arn, Payload=json.dumps(event).encode("utf-8"))
        except ClientError as error:
            code = _aws_error_code(error) or ""
            if code not in PASSING_CODES or time.monotonic() + PASSING_PAUSE_SECONDS > gives_up_at:
                raise NotHeard(f"Lambda refused to invoke it: {code or type(error).__name__}") from None
            time.sleep(PASSING_PAUSE_SECONDS)
            continue
        payload = invoked["Payload"].read()
        if invoked.get("FunctionError"):
            raised = _json_or_none(payload)
            kind = raised.get("errorType", "an error") if isinstance(raised, dict) else "an error"
            raise NotHeard(f"it failed to answer ({invoked['FunctionError']}: {kind}); its log says why")
        response = _json_or_none(payload)
        if not isinstance(response, dict) or not isinstance(response.get("statusCode"), int):
            raise NotHeard("it answered something that is not an API Gateway response")
        return response


def _json_or_none(text: bytes | str | None) -> Any:
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def _answer(response: dict[str, Any]) -> tuple[int, Any]:
    return response["statusCode"], _json_or_none(response.get("body"))


def _code(answer: Any) -> str:
    error = answer.get("error") if isinstance(answer, dict) else None
    return str(error.get("code", "")) if isinstance(error, dict) else ""


def _error(answer: Any) -> str:
    """An error answer's code and message (the endpoint's own words, a reference to its log among them)."""
    error = answer.get("error") if isinstance(answer, dict) else None
    if not isinstance(error, dict):
        return "(no JSON error)" if not isinstance(answer, dict) else "ok: " + json.dumps(answer.get("ok"))
    return f"{error.get('code', '')}: {error.get('message', '')}"


def _difference(built: dict[str, Any], answered: Any) -> str:
    if not isinstance(answered, dict) or not isinstance(answered.get("tools"), list):
        return "it is no manifest"
    names = {tool.get("name") for tool in built.get("tools", [])}
    served = {tool.get("name") for tool in answered["tools"] if isinstance(tool, dict)}
    if names != served:
        return f"built {sorted(names)}, served {sorted(str(name) for name in served)}"
    return "the same tools, declared otherwise (an older or another build)"


def prune(version_arn: str, lambda_client: Any) -> None:
    """Delete the function's published versions but the newest few, the new one, and those `live` points at."""
    # By its name, which Lambda takes as it takes the ARN (and moto's listing of versions takes only the name).
    function, new_version = version_arn.split(":")[-2:]
    try:
        kept_count = max(2, int(os.environ.get(KEPT_VERSIONS_ENV, KEPT_VERSIONS)))
        alias = lambda_client.get_alias(FunctionName=function, Name=LIVE_ALIAS)
        routed = alias.get("RoutingConfig", {}).get("AdditionalVersionWeights", {})
        kept = {new_version, alias["FunctionVersion"], *routed}
        published = sorted(
            int(version["Version"])
            for page in lambda_client.get_paginator("list_versions_by_function").paginate(FunctionName=function)
            for version in page["Versions"]
            if version["Version"].isdigit()
        )
        kept.update(str(number) for number in published[-kept_count:])
        deleted = []
        for number in published:
            if str(number) not in kept and number < int(new_version):
                lambda_client.delete_function(FunctionName=function, Qualifier=str(number))
                deleted.append(str(number))
    except Exception as error:
        observability.logger.warning(
            "The old versions were not pruned; the next deployment tries again",
            extra={"error_type": type(error).__name__, "aws_error_code": _aws_error_code(error)},
        )
        return
    if deleted:
        observability.logger.info(
            f"Deleted {len(deleted)} old version(s); kept {', '.join(sorted(kept, key=int))}",
            extra={"deleted_versions": deleted},
        )


def _aws_error_code(error: BaseException) -> str | None:
    response = getattr(error, "response", None)  # botocore's ClientError
    aws_error = response.get("Error") if isinstance(response, dict) else None
    code = aws_error.get("Code") if isinstance(aws_error, dict) else None
    return code if isinstance(code, str) else None


def report(event: dict[str, Any], status: str) -> None:
    """Tell CodeDeploy the lifecycle event's outcome: `Succeeded` lets it shift traffic, `Failed` stops it."""
    try:
        bounded_client("codedeploy", CONTROL).put_lifecycle_event_hook_execution_status(
            deploymentId=event["DeploymentId"],
            lifecycleEventHookExecutionId=event["LifecycleEventHookExecutionId"],
            status=status,
        )
    except Exception as error:
        # Raised on, so that Lambda retries the invocation (CodeDeploy invokes the hook asynchronously:
        # twice more): without a report, CodeDeploy fails the deployment only when its hour runs out.
        observability.logger.error(
            f"The hook could not report {status} to CodeDeploy",
            extra={"error_type": type(error).__name__, "aws_error_code": _aws_error_code(error)},
        )
        raise
    observability.logger.info(f"Reported {status} to CodeDeploy", extra={"deployment_id": event["DeploymentId"]})
