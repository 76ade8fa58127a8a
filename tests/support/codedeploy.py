"""CodeDeploy's lifecycle-hook API, stood in on loopback: what the PreTraffic hook reports to.

moto serves CodeDeploy's applications, groups and deployments, but not
`PutLifecycleEventHookExecutionStatus` (moto 5.2: no such route). This speaks that one action as
CodeDeploy's API reference documents it, in the AWS JSON 1.1 protocol every CodeDeploy action uses:
`POST /` with `X-Amz-Target: CodeDeploy_20141006.PutLifecycleEventHookExecutionStatus` and a body of
`deploymentId`, `lifecycleEventHookExecutionId` and `status` (Pending, InProgress, Succeeded, Failed,
Skipped or Unknown), signed with SigV4 for the service `codedeploy`; it answers
`{"lifecycleEventHookExecutionId": ...}`. A status not among those, or a request for a deployment this
stand-in was not told of, is refused as CodeDeploy refuses it (400, its `__type`); so is any other
action, and an unsigned request.

Point boto3 at it with `AWS_ENDPOINT_URL_CODEDEPLOY=<stand_in.endpoint>`; `reports` lists what each
accepted request reported, as (deployment, execution id, status).
"""

from __future__ import annotations

import json

from tests.support.loopback import LoopbackServer, QuietHandler

TARGET = "CodeDeploy_20141006.PutLifecycleEventHookExecutionStatus"
STATUSES = ("Pending", "InProgress", "Succeeded", "Failed", "Skipped", "Unknown")


class CodeDeployStandIn(LoopbackServer):
    """`PutLifecycleEventHookExecutionStatus` on loopback, for the deployments it is told of."""

    def __init__(self, *deployments: str) -> None:
        self.deployments = set(deployments)
        self.reports: list[tuple[str, str, str]] = []
        stand_in = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                status, answer = stand_in.answer(
                    self.headers.get("X-Amz-Target", ""), self.headers.get("Authorization", ""), body
                )
                payload = json.dumps(answer).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/x-amz-json-1.1")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        super().__init__(Handler)

    def answer(self, target: str, authorization: str, body: bytes) -> tuple[int, dict[str, str]]:
        if "Credential=" not in authorization or "/codedeploy/aws4_request" not in authorization:
            return 400, {"__type": "MissingAuthenticationTokenException", "message": "Request is not signed."}
        if target != TARGET:
            return 400, {"__type": "UnknownOperationException", "message": f"{target} is not stood in here."}
        request = json.loads(body)
        deployment, execution, status = (
            request.get("deploymentId"),
            request.get("lifecycleEventHookExecutionId"),
            request.get("status"),
        )
        if deployment not in self.deployments:
            return 400, {"__type": "DeploymentDoesNotExistException", "message": f"{deployment} does not exist."}
        if status not in STATUSES:
            return 400, {"__type": "InvalidLifecycleEventHookExecutionStatusException", "message": str(status)}
        self.reports.append((str(deployment), str(execution), str(status)))
        return 200, {"lifecycleEventHookExecutionId": str(execution)}
