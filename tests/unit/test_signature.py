from __future__ import annotations

import pytest

from handler.signature import compute_signature, matches, parse_header

KEY = "mk_test_0123456789abcdef"
T = 1764500000
CALL_BODY = b'{"version":1,"op":"call","tool":"orderStatus","input":{"orderNumber":"ORD-1042"},"callId":"call_1"}'


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"", "05d36d6e0f6dcbd23bec95a48599bef276bf0a25e3490b71fd0d42b17432804f"),
        (CALL_BODY, "eed670c9150e5cf0af2c4621f1f5b5c4be292f51cb2366132c8d5105fb7d4140"),
    ],
)
def test_protocol_vectors(body: bytes, expected: str) -> None:
    # GIVEN the protocol's published key, timestamp and bodies
    # WHEN the body is signed
    # THEN the signature is the published one, and a header carrying it verifies
    assert compute_signature(KEY, T, body) == expected
    assert matches(parse_header(f"t={T},v1={expected}", now=T), KEY, body)
