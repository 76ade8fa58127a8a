"""Every answer the function gives, of any status, fits in Lambda's response as its Python runtime writes it.

Lambda returns at most MAX_RESPONSE_BYTES: past it API Gateway answers its own 502, and Median
gets no JSON. What counts is the whole dict the handler returns, written by the runtime with
json.dumps: with ASCII escapes before Python 3.12 (a character outside ASCII is six bytes, one
beyond the BMP twelve, and the body's own escapes are escaped again, the body being a string in
the dict), as UTF-8 from 3.12 on. Each answer here is measured both ways, as returned by
`lambda_handler`, never as the test client decodes it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from median_lambda import app, tool
from median_lambda.protocol import MAX_BODY_BYTES, MAX_QUOTED_FIELD_CHARS, MAX_RESPONSE_BYTES, PROTOCOL_VERSION
from median_lambda.request.responses import error_answer, fits_in_a_response, json_answer, method_not_allowed
from median_lambda.testing import TEST_KEY, FakeLambdaContext, dev_key, signed_event

from tests.scratch_tools import NoteInput  # noqa: TC001 - @tool reads the annotation when it runs

if TYPE_CHECKING:
    from median_lambda.authoring.registry import Registry

    from tests.conftest import LogCapture
    from tests.scratch_tools import ScratchTools


def runtime_bytes(response: dict[str, Any]) -> int:
    """The response's size as Lambda's Python runtime writes it, the larger of its two ways (ASCII escapes, UTF-8)."""
    return max(len(json.dumps(response).encode()), len(json.dumps(response, ensure_ascii=False).encode()))


def handled(body: bytes) -> dict[str, Any]:
    """The dict lambda_handler returns for this signed POST body, as the runtime gets it."""
    with dev_key(TEST_KEY):
        response: dict[str, Any] = app.lambda_handler(signed_event("POST", body), FakeLambdaContext())  # type: ignore[arg-type]
    return response


def call_with_unknown_fields(character: str, length: int, count: int) -> bytes:
    """A call whose input is `count` unknown fields, each named with `length` of `character`, padded apart."""
    names = [f"{n:03d}" + character * length for n in range(count)]
    body = json.dumps(
        {"version": PROTOCOL_VERSION, "op": "call", "tool": "countRuns", "input": dict.fromkeys(names, 0)},
        ensure_ascii=False,
    ).encode()
    assert len(body) <= MAX_BODY_BYTES, len(body)
    return body


# Each kind of character a field's name can hold, and how many fit a 1 MiB body in 100 names: the
# ones that grow most once written by the runtime, six or twelve bytes of ASCII escapes each.
NAME_CHARACTERS = [
    pytest.param("x", 10_000, id="ASCII"),
    pytest.param("\u00e9", 5_000, id="two-byte characters"),
    pytest.param("\u4e2d", 3_400, id="three-byte characters"),
    pytest.param("\U0001f600", 2_500, id="characters beyond the BMP"),
    pytest.param('"', 5_000, id="quotes, escaped twice"),
    pytest.param("\u0001", 1_600, id="control characters, escaped"),
]


@pytest.mark.parametrize(("character", "length"), NAME_CHARACTERS)
def test_a_422_listing_long_unknown_fields_fits_and_quotes_each_name_in_part(
    scratch: ScratchTools, character: str, length: int
) -> None:
    # GIVEN a signed call with a hundred unknown fields of long names, as much as the 1 MiB cap admits
    body = call_with_unknown_fields(character, length, 100)
    # WHEN it arrives
    response = handled(body)
    # THEN its 422, as the runtime writes it, fits in Lambda's response
    assert response["statusCode"] == 422
    assert runtime_bytes(response) <= MAX_RESPONSE_BYTES
    # AND each name is quoted to its first characters, enough to know it by, and marked as cut
    error = json.loads(response["body"])["error"]
    assert error["code"] == "invalid_input"
    assert len(error["details"]) == 100
    for detail in error["details"]:
        assert len(detail["field"]) == MAX_QUOTED_FIELD_CHARS + 1
        assert detail["field"].endswith("…")
    assert scratch.runs["countRuns"] == 0


def test_a_field_of_the_tools_own_is_quoted_whole(scratch: ScratchTools) -> None:
    # GIVEN a call whose one problem is a field of the tool's own, of the longest name the name rule allows
    @tool(risk="low", name="longFieldTool")
    def long_field_tool(args: NoteInput) -> dict[str, object]:
        """Take a note."""
        return {}

    # WHEN an unknown field as long as the rule allows is sent
    name = "f" * MAX_QUOTED_FIELD_CHARS
    body = json.dumps({"version": PROTOCOL_VERSION, "op": "call", "tool": "longFieldTool", "input": {name: 1}})
    response = handled(body.encode())
    # THEN it is quoted as it is
    assert [detail["field"] for detail in json.loads(response["body"])["error"]["details"]] == [name]


def test_an_unknown_tool_of_a_long_name_is_a_404_that_fits_and_quotes_nothing(scratch: ScratchTools) -> None:
    # GIVEN a call naming a tool of a near-mebibyte name of two-byte characters
    name = "\u00e9" * (MAX_BODY_BYTES // 2 - 100)
    body = json.dumps({"version": PROTOCOL_VERSION, "op": "call", "tool": name}, ensure_ascii=False).encode()
    # WHEN it arrives
    response = handled(body)
    # THEN the 404 fits, and says what to do without repeating the name
    assert response["statusCode"] == 404
    assert runtime_bytes(response) <= MAX_RESPONSE_BYTES
    assert name[:10] not in response["body"]


def test_a_manifest_whose_problems_quote_without_end_is_a_500_that_fits(
    scratch_registry: Registry, logs: LogCapture
) -> None:
    # GIVEN tools whose names break the name rule, each quoted by its problem, several mebibytes in all
    for n in range(30):

        @tool(risk="low", name=f"{n}" + "\u00e9" * 200_000)
        def badly_named(args: NoteInput) -> dict[str, object]:
            """Take a note."""
            return {}

    # WHEN Median's GET arrives
    with dev_key(TEST_KEY):
        response = app.lambda_handler(signed_event("GET"), FakeLambdaContext())  # type: ignore[arg-type]
    # THEN the 500 invalid_manifest fits, quoting the first problems and saying the rest are in the log
    assert response["statusCode"] == 500
    assert runtime_bytes(response) <= MAX_RESPONSE_BYTES
    error = json.loads(response["body"])["error"]
    assert error["code"] == "invalid_manifest"
    assert "more characters, in the function's log" in error["message"]
    [logged] = [record for record in logs.records() if "break Median's sync rules" in record["message"]]
    assert len([problem for problem in logged["problems"] if "breaks the name rule" in problem]) == 30


def test_whatever_answer_is_over_the_limit_is_replaced_by_a_500_that_fits(
    scratch_registry: Registry, monkeypatch: pytest.MonkeyPatch, logs: LogCapture
) -> None:
    # GIVEN an answer no part of the handler bounded: here, a manifest served as it was built, over the limit
    monkeypatch.setattr(app, "_manifest_answer", (200, json.dumps({"blob": "\u00e9" * (MAX_RESPONSE_BYTES // 6)})))
    context = FakeLambdaContext()
    # WHEN it would be returned
    with dev_key(TEST_KEY):
        response = app.lambda_handler(signed_event("GET"), context)  # type: ignore[arg-type]
    # THEN Lambda gets a 500 in JSON that fits and names a reference, and the log says what was too large
    assert response["statusCode"] == 500
    assert runtime_bytes(response) <= MAX_RESPONSE_BYTES
    error = json.loads(response["body"])["error"]
    assert error["code"] == "internal_error"
    assert f"over the {MAX_RESPONSE_BYTES:,} bytes Lambda can return" in error["message"]
    assert context.aws_request_id in error["message"]
    [logged] = [record for record in logs.records() if "over Lambda's response limit" in record["message"]]
    assert logged["status"] == 200


# --- The measure itself -----------------------------------------------------------------------------------------------


def _padded_to(size: int, character: str, response: dict[str, Any]) -> dict[str, Any]:
    """`response` with a body of `character`s making it exactly `size` bytes as the runtime writes it (ASCII)."""
    envelope = len(json.dumps({**response, "body": ""}))
    width = len(json.dumps(character)) - 2
    count, rest = divmod(size - envelope, width)
    padded = {**response, "body": character * count + "x" * rest}
    assert len(json.dumps(padded)) == size
    return padded


ANSWERS = [
    pytest.param(json_answer(200, {}), id="200"),
    pytest.param(method_not_allowed(), id="405, with its Allow header"),
    pytest.param(error_answer(401, "unauthorized", "", post=False), id="401"),
]


@pytest.mark.parametrize("response", ANSWERS)
@pytest.mark.parametrize("character", ["x", '"', "\u00e9", "\U0001f600"], ids=["ASCII", "quote", "é", "emoji"])
def test_the_measure_is_the_whole_dict_as_written_to_the_byte(response: dict[str, Any], character: str) -> None:
    # GIVEN an answer whose dict, written with ASCII escapes, is exactly the limit, and one a byte over
    at_the_limit = _padded_to(MAX_RESPONSE_BYTES, character, response)
    one_over = _padded_to(MAX_RESPONSE_BYTES + 1, character, response)
    # WHEN each is measured
    # THEN the first fits and the second does not: headers, status and escapes all counted
    assert fits_in_a_response(at_the_limit)
    assert not fits_in_a_response(one_over)
    assert runtime_bytes(at_the_limit) == MAX_RESPONSE_BYTES
