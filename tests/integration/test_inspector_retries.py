"""The inspector's "Reuse the last callId": deduplicated as deployed with a table, and said plainly without one.

In process first (the inspector's API over the handler, with and without the idempotency table
on moto), then as `make serve LOCAL_AWS=moto` runs it, where moto holds the table as deployed:
a tool whose every run adds one to a counter in moto's DynamoDB is called twice with one callId,
and the counter says how many times it ran.
"""

from __future__ import annotations

import json
import textwrap
import urllib.request
from typing import TYPE_CHECKING, Any

import pytest

from devserver.inspector import route
from handler.testing import TEST_KEY, dev_key

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from tests.scratch_tools import ScratchTools

PORT = 3000
TOKEN = "the-token-make-serve-printed"
LOCAL = {"host": f"127.0.0.1:{PORT}", "x-inspector-token": TOKEN}
NOT_DEDUPLICATED = (
    "Calls are not deduplicated here: there is no idempotency table (IDEMPOTENCY_TABLE is not set), so a call "
    "sent again with the same callId runs the tool again."
)


@pytest.fixture(autouse=True)
def signing_with_a_dev_key() -> Iterator[None]:
    with dev_key(TEST_KEY):
        yield


def view() -> dict[str, Any]:
    reply = route("GET", "/_inspector/api/manifest", LOCAL, b"", port=PORT, token=TOKEN)
    document: dict[str, Any] = json.loads(reply.body)
    return document


def call(document: dict[str, Any]) -> dict[str, Any]:
    sent = {**LOCAL, "content-type": "application/json"}
    reply = route("POST", "/_inspector/api/call", sent, json.dumps(document).encode(), port=PORT, token=TOKEN)
    answer: dict[str, Any] = json.loads(reply.body)
    return answer


def call_twice_with_one_call_id() -> tuple[dict[str, Any], dict[str, Any]]:
    """A call from the page, then the same with "Reuse the last callId" ticked."""
    request = {"op": "call", "tool": "countRuns", "input": {"note": "credit 5"}}
    first = call(request)
    return first, call({**request, "callId": first["callId"]})


def test_without_a_table_the_page_says_a_reused_call_id_runs_the_tool_again(scratch: ScratchTools) -> None:
    # GIVEN the inspector under make serve, with no idempotency table
    # WHEN the page loads, and a call is sent again with its callId
    retries = view()["retries"]
    first, again = call_twice_with_one_call_id()
    # THEN the page is told plainly that calls are not deduplicated here, and why, and where they are
    assert retries["deduplicated"] is False
    assert retries["message"].startswith(NOT_DEDUPLICATED)
    assert "make serve LOCAL_AWS=moto" in retries["message"]
    # AND so it is: the tool ran twice, and each answer says it was not deduplicated
    assert scratch.runs["countRuns"] == 2
    assert (first["deduplicated"], again["deduplicated"]) == (False, False)


def test_with_a_table_a_reused_call_id_is_answered_from_its_record(
    scratch: ScratchTools, idempotency_table: str
) -> None:
    # GIVEN the inspector with the idempotency table on, as deployed
    # WHEN the page loads, and a call is sent again with its callId
    retries = view()["retries"]
    first, again = call_twice_with_one_call_id()
    # THEN the page says calls are deduplicated, naming the table
    assert retries["deduplicated"] is True
    assert f"answered from the idempotency table ({idempotency_table})" in retries["message"]
    # AND the tool ran once, the second call getting the first answer
    assert scratch.runs["countRuns"] == 1
    assert again["answer"] == first["answer"]
    assert again["deduplicated"] is True


def test_the_page_puts_the_words_beside_the_reuse_box() -> None:
    # GIVEN the inspector's page
    page = route("GET", "/_inspector", LOCAL, b"", port=PORT, token=TOKEN).body.decode("utf-8")
    # THEN the checkbox is described by the note that carries the API's words, in a warning's tone when off
    assert '"aria-describedby": `reuse-note-${id}`' in page
    assert 'className: retries.deduplicated ? "reuse-note" : "reuse-note warn"' in page
    assert "retries = view.retries || retries;" in page


# --- make serve LOCAL_AWS=moto --------------------------------------------------------------------

COUNTER_TOOL = '''
    from __future__ import annotations

    import boto3
    from pydantic import BaseModel, Field

    from handler import tool


    class CreditInput(BaseModel):
        cents: int = Field(gt=0, description="The credit, in cents.")


    @tool(risk="high", name="issueStoreCredit")
    def issue_store_credit(args: CreditInput) -> dict[str, object]:
        """Credit the customer's store account."""
        counted = boto3.client("dynamodb").update_item(
            TableName="credits",
            Key={"account": {"S": "ada"}},
            UpdateExpression="ADD issued :one",
            ExpressionAttributeValues={":one": {"N": "1"}},
            ReturnValues="UPDATED_NEW",
        )
        return {"credited": args.cents, "issued": int(counted["Attributes"]["issued"]["N"])}
'''
SEED = """
    import boto3


    def seed() -> None:
        boto3.client("dynamodb").create_table(
            TableName="credits",
            KeySchema=[{"AttributeName": "account", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "account", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
"""


def write(path: Path, source: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")


def inspector_api(server: Any, name: str, document: dict[str, Any] | None = None) -> dict[str, Any]:
    data = None if document is None else json.dumps(document).encode()
    request = urllib.request.Request(  # noqa: S310 - a loopback URL of our own
        server.inspector_api(name),
        data=data,
        method="GET" if data is None else "POST",
        headers={**server.token_header, "content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - loopback
        answer: dict[str, Any] = json.loads(response.read())
        return answer


def test_under_local_aws_moto_the_inspector_deduplicates_as_deployed(tmp_path: Path) -> None:
    from tests.devserver_process import running_devserver

    # GIVEN make serve LOCAL_AWS=moto, serving a store-credit tool that counts its runs in moto's DynamoDB
    root = tmp_path / "project"
    write(root / "tools" / "__init__.py", "")
    write(root / "tools" / "credits.py", COUNTER_TOOL)
    write(root / "tests" / "tools" / "local_aws_seed.py", SEED)
    with running_devserver(tmp_path, cwd=root, tools_package=None, env={"LOCAL_AWS": "moto"}) as server:
        # WHEN the page loads, a credit is issued, and issued again reusing its callId
        retries = inspector_api(server, "manifest")["retries"]
        request = {"op": "call", "tool": "issueStoreCredit", "input": {"cents": 500}}
        first = inspector_api(server, "call", request)
        again = inspector_api(server, "call", {**request, "callId": first["callId"]})
        startup = server.output()
        dynamodb = server.local_aws_client("dynamodb")
        issued = dynamodb.get_item(TableName="credits", Key={"account": {"S": "ada"}})["Item"]["issued"]
    # THEN the terminal and the page say retries are answered from the table, as deployed
    assert "idempotency table median-tools-idempotency, as deployed" in startup
    assert retries["deduplicated"] is True
    # AND the credit was issued once: the second call got the first answer
    assert first["answer"]["output"] == {"credited": 500, "issued": 1}
    assert again["answer"] == first["answer"]
    assert issued == {"N": "1"}
