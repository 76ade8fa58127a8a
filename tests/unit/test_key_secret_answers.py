"""The key read from a GetSecretValue answer, as boto3 or the extension gives it, and the cause when there is none."""

from __future__ import annotations

from typing import Any

import pytest
from median_lambda.key.source import KeyUnavailable, key_from_secret_answer


@pytest.mark.parametrize(
    ("answer", "key"),
    [
        pytest.param({"SecretString": " mk_live_1 \n"}, "mk_live_1", id="plain"),
        pytest.param({"SecretString": '{"key": "mk_live_2"}', "SecretBinary": None}, "mk_live_2", id="JSON"),
    ],
)
def test_a_secret_string_gives_the_key(answer: dict[str, Any], key: str) -> None:
    # GIVEN an answer carrying a SecretString
    # WHEN the key is read from it
    # THEN it is the string's key, trimmed
    assert key_from_secret_answer(answer) == key


@pytest.mark.parametrize(
    ("answer", "cause"),
    [
        pytest.param(
            {"SecretBinary": "bWtfbGl2ZQ=="},
            "the secret holds binary data (SecretBinary), not a SecretString",
            id="binary, as the extension sends it",
        ),
        pytest.param(
            {"SecretString": None, "SecretBinary": b"mk"},
            "the secret holds binary data (SecretBinary), not a SecretString",
            id="binary beside a null string",
        ),
        pytest.param(
            {"Name": "median/key"},
            "the secret's answer holds neither a SecretString nor a SecretBinary",
            id="neither",
        ),
    ],
)
def test_an_answer_without_a_secret_string_names_what_it_holds(answer: dict[str, Any], cause: str) -> None:
    # GIVEN an answer with no SecretString
    # WHEN the key is read from it
    # THEN there is none, and the cause says what the answer held instead
    with pytest.raises(KeyUnavailable) as unavailable:
        key_from_secret_answer(answer)
    assert str(unavailable.value) == cause


KEY = "mk_live_strict_0123456789"


@pytest.mark.parametrize(
    ("stored", "cause"),
    [
        pytest.param(
            f'{{"key": "mk_forged_first", "key": "{KEY}"}}',
            "the secret is JSON this endpoint does not accept: an object repeats a key",
            id="a repeated key",
        ),
        pytest.param(
            f'{{"key": "{KEY}", "rotatedAt": NaN}}',
            "the secret is JSON this endpoint does not accept: NaN is not JSON",
            id="NaN beside it",
        ),
        pytest.param(
            f'{{"key": "{KEY}", "version": 1e999}}',
            "the secret is JSON this endpoint does not accept: a number too large for a double",
            id="a number too large for a double",
        ),
        pytest.param(
            '{"key": 12345678901234567890}',
            'the secret is a JSON object without a string "key" member',
            id="a number for the key",
        ),
    ],
)
def test_a_json_key_secret_is_read_as_strictly_as_a_request_body(stored: str, cause: str) -> None:
    # GIVEN a key secret in JSON that a request body with the same would be refused for
    # WHEN the key is read from it
    # THEN there is none, and the cause names the rule it breaks, never the key
    with pytest.raises(KeyUnavailable) as unavailable:
        key_from_secret_answer({"SecretString": stored})
    assert str(unavailable.value) == cause
    assert KEY not in str(unavailable.value)
