"""The median-signature header read: each way it can be wrong, its edges, and what matches (docs/protocol.md §2)."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from median_lambda.protocol import SIGNATURE_TOLERANCE_SECONDS
from median_lambda.request.signature import SignatureError, compute_signature, matches, parse_header

# The GET vector of the protocol's published ones (median_lambda/contract/test_signature.py holds them all).
KEY = "mk_test_0123456789abcdef"
T = 1764500000
GET_V1 = "05d36d6e0f6dcbd23bec95a48599bef276bf0a25e3490b71fd0d42b17432804f"
OTHER_V1 = "0" * 64
# T in FULLWIDTH DIGITs (U+FF10…): str.isdigit() says yes, the protocol says no.
FULLWIDTH_T = "".join(chr(0xFF10 + int(digit)) for digit in str(T))


def _refusal(header: str | None, now: float = T) -> SignatureError:
    with pytest.raises(SignatureError) as refused:
        parse_header(header, now=now)
    return refused.value


@pytest.mark.parametrize("header", [None, "", "   ", "\t"], ids=["absent", "empty", "blank", "tab"])
def test_a_missing_header_is_refused_as_missing(header: str | None) -> None:
    # GIVEN no signature, or an empty one
    # WHEN the header is parsed
    refusal = _refusal(header)
    # THEN the reason is "missing", and the message a 401 carries says so first
    assert refusal.reason == "missing"
    assert refusal.message.startswith("missing: ")


@pytest.mark.parametrize(
    "header",
    [
        pytest.param(f"v1={GET_V1}", id="no t"),
        pytest.param(f"t=,v1={GET_V1}", id="empty t"),
        pytest.param(f"t=17645OOOOO,v1={GET_V1}", id="t with letters"),
        pytest.param(f"t=-1764500000,v1={GET_V1}", id="negative t"),
        pytest.param(f"t=+1764500000,v1={GET_V1}", id="t with a sign"),
        pytest.param(f"t=1764500000.5,v1={GET_V1}", id="fractional t"),
        pytest.param(f"t={T}s,v1={GET_V1}", id="t with a unit"),
        pytest.param(f"t=١٢٣,v1={GET_V1}", id="arabic-indic digits"),
        pytest.param(f"t={FULLWIDTH_T},v1={GET_V1}", id="fullwidth digits"),
        pytest.param(f"t=²,v1={GET_V1}", id="superscript digit"),
        pytest.param(f"t={T}", id="no v1"),
        pytest.param(f"t={T},v0={GET_V1}", id="only v0"),
        pytest.param(f"t={T},v1=", id="empty v1"),
        pytest.param(f"t={T},v1={GET_V1.upper()}", id="uppercase hex"),
        pytest.param(f"t={T},v1={GET_V1[:-1]}", id="63 hex digits"),
        pytest.param(f"t={T},v1={GET_V1}0", id="65 hex digits"),
        pytest.param(f"t={T},v1={GET_V1[:-1]}g", id="not hex"),
        pytest.param(f"t={T},v1={'é' * 64}", id="unicode v1"),
        pytest.param(f"t={T},v1={GET_V1},v1=zz", id="one bad v1 among good"),
        pytest.param(f"t={T},t={T},v1={GET_V1}", id="two t"),
        pytest.param(f"t={T},v1={GET_V1},t={T + 1}", id="two different t"),
        pytest.param("garbage", id="no items"),
        pytest.param(",,,,", id="only commas"),
    ],
)
def test_a_malformed_header_is_refused_as_malformed(header: str) -> None:
    # GIVEN a header that is not t=<digits>,v1=<64 lowercase hex>
    # WHEN it is parsed
    refusal = _refusal(header)
    # THEN the reason is "malformed"
    assert refusal.reason == "malformed"
    assert refusal.message.startswith("malformed: ")


@pytest.mark.parametrize(
    "offset",
    [SIGNATURE_TOLERANCE_SECONDS + 1, -(SIGNATURE_TOLERANCE_SECONDS + 1), 10**6, -(10**6)],
    ids=["301s old", "301s ahead", "days old", "days ahead"],
)
def test_a_timestamp_beyond_the_tolerance_is_stale_in_both_directions(offset: int) -> None:
    # GIVEN a well-formed header whose t is more than 300 s from the server's clock
    # WHEN it is parsed at now = t + offset
    refusal = _refusal(f"t={T},v1={GET_V1}", now=T + offset)
    # THEN the reason is "stale"
    assert refusal.reason == "stale"
    assert refusal.message.startswith("stale: ")


@pytest.mark.parametrize("offset", [SIGNATURE_TOLERANCE_SECONDS, -SIGNATURE_TOLERANCE_SECONDS, 0])
def test_a_timestamp_within_the_tolerance_is_fresh(offset: int) -> None:
    # GIVEN a header exactly at the edge of the window (or right on time)
    # WHEN it is parsed
    header = parse_header(f"t={T},v1={GET_V1}", now=T + offset)
    # THEN it is accepted, and still verifies
    assert matches(header, KEY, b"")


@pytest.mark.parametrize("digits", [16, 300, 5000], ids=["16 digits", "hundreds of digits", "5000 digits"])
def test_a_timestamp_with_very_many_digits_is_stale_not_a_crash(digits: int) -> None:
    # GIVEN a t far longer than any real Unix time (5000 digits is past Python's int-parsing limit)
    # WHEN it is parsed
    refusal = _refusal(f"t={'9' * digits},v1={GET_V1}")
    # THEN it is refused as stale, without an exception of another kind
    assert refusal.reason == "stale"


@pytest.mark.parametrize(
    ("header", "key", "body"),
    [
        pytest.param(f"t={T},v1={GET_V1}", "mk_other_key", b"", id="another key"),
        pytest.param(f"t={T},v1={GET_V1}", KEY, b"{}", id="another body"),
        pytest.param(f"t={T + 1},v1={GET_V1}", KEY, b"", id="another t"),
        pytest.param(f"t={T},v1={OTHER_V1}", KEY, b"", id="well-formed but wrong"),
    ],
)
def test_a_signature_that_does_not_match_is_a_mismatch(header: str, key: str, body: bytes) -> None:
    # GIVEN a fresh, well-formed header that was not made from this key, body and t
    parsed = parse_header(header, now=T)
    # WHEN it is checked
    # THEN it does not match (the handler answers 401 mismatch: tests/integration/test_signature_401.py)
    assert not matches(parsed, key, body)


@pytest.mark.parametrize("position", [0, 1, 2], ids=["first", "middle", "last"])
def test_one_matching_v1_among_several_is_enough(position: int) -> None:
    # GIVEN a header with three v1 entries (Median signs with every active key while rotating)
    entries = [OTHER_V1, "1" * 64, "2" * 64]
    entries[position] = GET_V1
    header = f"t={T}," + ",".join(f"v1={entry}" for entry in entries)
    # WHEN it is checked against the key that made one of them
    # THEN it matches, wherever that entry sits
    assert matches(parse_header(header, now=T), KEY, b"")


def test_thousands_of_v1_entries_are_read_and_one_match_is_found() -> None:
    # GIVEN 5000 wrong v1 entries and the right one last
    wrong = ",".join(f"v1={index:064x}" for index in range(5000))
    # WHEN the header is checked
    # THEN the right one matches, and without it nothing does
    assert matches(parse_header(f"t={T},{wrong},v1={GET_V1}", now=T), KEY, b"")
    assert not matches(parse_header(f"t={T},{wrong}", now=T), KEY, b"")


@pytest.mark.parametrize(
    "header",
    [
        pytest.param(f"t={T},v0=not-even-hex,v1={GET_V1}", id="v0 before"),
        pytest.param(f"t={T},v1={GET_V1},v2={'Z' * 10}", id="v2 after"),
        pytest.param(f"v9=abc,t={T},scheme=x=y,v1={GET_V1}", id="unknown schemes"),
        pytest.param(f"t={T},flag,v1={GET_V1}", id="item without ="),
    ],
)
def test_entries_of_other_schemes_are_ignored(header: str) -> None:
    # GIVEN a header that carries entries of schemes other than t and v1
    # WHEN it is checked
    # THEN they neither break parsing nor count: the v1 alone decides
    assert matches(parse_header(header, now=T), KEY, b"")


def test_a_correct_signature_under_another_scheme_does_not_count() -> None:
    # GIVEN the right HMAC, but under v0 beside a wrong v1
    header = parse_header(f"t={T},v0={GET_V1},v1={OTHER_V1}", now=T)
    # WHEN it is checked
    # THEN it does not match: only v1 entries are compared
    assert not matches(header, KEY, b"")


@pytest.mark.parametrize(
    "header",
    [
        f" t={T} , v1={GET_V1} ",
        f"t={T},   v1={GET_V1}",
        f"\tt={T},\tv1={GET_V1}\t",
        f"t={T} ,v1={OTHER_V1} , v1={GET_V1}",
    ],
    ids=["spaces", "several spaces", "tabs", "between v1s"],
)
def test_spaces_around_items_are_ignored(header: str) -> None:
    # GIVEN a header with whitespace around its items
    # WHEN it is checked
    # THEN it verifies as if written without
    assert matches(parse_header(header, now=T), KEY, b"")


def test_the_signed_timestamp_is_the_text_as_sent() -> None:
    # GIVEN a t written with a leading zero, signed over exactly that text
    t_text = f"0{T}"
    header = f"t={t_text},v1={compute_signature(KEY, t_text, b'')}"
    # WHEN it is checked
    # THEN it matches: the signed bytes start with the header's own t
    assert matches(parse_header(header, now=T), KEY, b"")


def _reading(header: str, now: float) -> object:
    try:
        return parse_header(header, now=now)
    except SignatureError as refused:
        return refused.reason


@given(
    t=st.text("0123456789", min_size=1, max_size=20),
    v1=st.text("0123456789abcdefA", min_size=63, max_size=65),
    offset=st.integers(-2 * SIGNATURE_TOLERANCE_SECONDS, 2 * SIGNATURE_TOLERANCE_SECONDS),
)
@example(t=str(T), v1=GET_V1, offset=0)
@example(t=f"0{T}", v1=GET_V1, offset=SIGNATURE_TOLERANCE_SECONDS)
def test_the_usual_header_reads_as_any_other_spelling_of_it(t: str, v1: str, offset: int) -> None:
    # GIVEN a header in the form Median sends, and the same items with a space, which take the general reading
    now = float(int(t) + offset) if len(t) < 16 else float(T)
    # WHEN both are parsed
    # THEN they give the same header, or are refused for the same reason
    assert _reading(f"t={t},v1={v1}", now) == _reading(f"t={t}, v1={v1}", now)
