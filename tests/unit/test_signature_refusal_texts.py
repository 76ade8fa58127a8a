"""What a 401 says, word for word where a person acts on it, and the timestamp's edges on both sides.

tests/unit/test_signature.py pins each refusal's reason; here the message is pinned too: the
cause it names (which part of the header is wrong) and the action it advises (sign again, check
the clock, check the key), since those words are what the person reading the 401 goes by.
"""

from __future__ import annotations

import pytest
from median_lambda.protocol import MAX_TIMESTAMP_DIGITS, SIGNATURE_TOLERANCE_SECONDS
from median_lambda.request.signature import SignatureError, matches, parse_header, sign

KEY = "mk_test_0123456789abcdef"
T = 1764500000
V1 = "05d36d6e0f6dcbd23bec95a48599bef276bf0a25e3490b71fd0d42b17432804f"


def _refusal(header: str | None, now: float = T) -> SignatureError:
    with pytest.raises(SignatureError) as refused:
        parse_header(header, now=now)
    return refused.value


@pytest.mark.parametrize(
    ("header", "message"),
    [
        pytest.param(f"t={T},t={T},v1={V1}", "malformed: the median-signature header has more than one t.", id="two t"),
        pytest.param(
            f"t={T},v1={V1[:-1]}",
            "malformed: the median-signature header has a v1 that is not 64 lowercase hex digits.",
            id="short v1",
        ),
        pytest.param(f"v1={V1}", "malformed: the median-signature header has no t=<unix seconds>.", id="no t"),
        pytest.param(
            f"t=17645OOOOO,v1={V1}",
            "malformed: the median-signature header has a t that is not whole seconds in digits.",
            id="t not digits",
        ),
        pytest.param(f"t={T},v0={V1}", "malformed: the median-signature header has no v1 signature.", id="no v1"),
        pytest.param(
            f"t={T}=5, v1={V1}",
            "malformed: the median-signature header has a t that is not whole seconds in digits.",
            id="t holding an equals sign: an item splits at its first =",
        ),
    ],
)
def test_each_malformed_header_names_the_part_that_is_wrong(header: str, message: str) -> None:
    # GIVEN a header wrong in exactly one of the five ways a header can be malformed
    # WHEN it is parsed
    refusal = _refusal(header)
    # THEN the message a 401 carries names that part, so the signer knows what to fix
    assert refusal.reason == "malformed"
    assert refusal.message == message
    assert str(refusal) == message


def test_a_missing_header_says_there_is_none() -> None:
    # GIVEN no header at all
    # WHEN it is parsed
    refusal = _refusal(None)
    # THEN the 401 says which header is missing
    assert (refusal.reason, refusal.message) == ("missing", "missing: the request has no median-signature header.")


def test_a_stale_timestamp_names_the_window_and_advises_re_signing_and_checking_the_clock() -> None:
    # GIVEN a header signed an hour ago
    # WHEN it is parsed now
    refusal = _refusal(f"t={T},v1={V1}", now=T + 3600)
    # THEN the message gives the cause (the 300 s window) and the two actions a person can take
    assert refusal.reason == "stale"
    assert refusal.message == (
        f"stale: the signature's timestamp is more than {SIGNATURE_TOLERANCE_SECONDS} seconds from this server's "
        "clock; sign the request again, and check the signer's clock."
    )


def test_a_mismatch_advises_checking_that_both_sides_use_the_same_key() -> None:
    # GIVEN the refusal the handler raises when no v1 matches
    refusal = SignatureError.mismatch()
    # WHEN its message is read
    # THEN it names the cause and the one thing to check
    assert refusal.reason == "mismatch"
    assert refusal.message == (
        "mismatch: no v1 signature matches this endpoint's Median key; "
        "check that the endpoint and Median use the same key."
    )


@pytest.mark.parametrize("spelling", ["t={t},v1={v1}", "t={t}, v1={v1}"], ids=["as Median sends it", "with a space"])
def test_the_longest_timestamp_is_read_and_one_digit_more_is_stale(spelling: str) -> None:
    # GIVEN a clock that far in the future, and timestamps of MAX_TIMESTAMP_DIGITS and one digit more
    longest = "9" * MAX_TIMESTAMP_DIGITS
    longer = "9" * (MAX_TIMESTAMP_DIGITS + 1)
    # WHEN each is parsed at its own instant (so only its length can refuse it)
    accepted = parse_header(spelling.format(t=longest, v1=V1), now=float(longest))
    refusal = _refusal(spelling.format(t=longer, v1=V1), now=float(longer))
    # THEN the longest is read as sent, and the longer one is stale
    assert accepted.timestamp == longest
    assert refusal.reason == "stale"


@pytest.mark.parametrize("spelling", ["t={t},v1={v1}", "t={t}, v1={v1}"], ids=["as Median sends it", "with a space"])
@pytest.mark.parametrize("direction", [1, -1], ids=["signed before now", "signed after now"])
def test_the_tolerance_holds_at_300_seconds_and_ends_one_second_after(spelling: str, direction: int) -> None:
    # GIVEN a header, and a clock exactly 300 s and then 301 s from its timestamp
    header = spelling.format(t=T, v1=V1)
    # WHEN it is parsed at each
    at_edge = parse_header(header, now=T + direction * SIGNATURE_TOLERANCE_SECONDS)
    refusal = _refusal(header, now=T + direction * (SIGNATURE_TOLERANCE_SECONDS + 1))
    # THEN 300 s is fresh and still verifies, and 301 s is stale
    assert matches(at_edge, KEY, b"")
    assert refusal.reason == "stale"


def test_a_header_signed_now_is_fresh_by_the_real_clock() -> None:
    # GIVEN a header sign() made with the current time
    header = sign(KEY, b"{}")
    # WHEN it is parsed without a clock of the test's own
    # THEN it is fresh and verifies
    assert matches(parse_header(header), KEY, b"{}")
