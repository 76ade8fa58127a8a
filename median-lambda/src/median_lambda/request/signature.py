"""The `median-signature` header: parse it, check it, and make one.

    median-signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">[,v1=…]

Each way a header can be wrong raises SignatureError with its own reason, so that the
401 answer and the metrics can tell a stale clock from a forged request.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
import time
from typing import NamedTuple

from median_lambda.protocol import (
    MAX_TIMESTAMP_DIGITS,
    SIGNATURE_HEX_LENGTH,
    SIGNATURE_SCHEME,
    SIGNATURE_TOLERANCE_SECONDS,
)

_V1_PATTERN = re.compile(f"[0-9a-f]{{{SIGNATURE_HEX_LENGTH}}}")
# The header as Median sends it outside a key rotation, `t=<digits>,v1=<hex>`, read by one match
# instead of the loop below, which reads every other form and gives this one the same reading.
# The loop costs a warm GET ~1.3 us more, and holds up its 2x (bench/README.md, "warm GET").
_USUAL_HEADER = re.compile(
    f"t=([0-9]{{1,{MAX_TIMESTAMP_DIGITS}}}),{SIGNATURE_SCHEME}=([0-9a-f]{{{SIGNATURE_HEX_LENGTH}}})"
)


class SignatureError(Exception):
    """The request is not signed by a Median key this endpoint accepts."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason  # one of: missing, malformed, stale, mismatch
        self.message = message

    @classmethod
    def missing(cls) -> SignatureError:
        return cls("missing", "missing: the request has no median-signature header.")

    @classmethod
    def malformed(cls, why: str) -> SignatureError:
        return cls("malformed", f"malformed: the median-signature header {why}.")

    @classmethod
    def stale(cls) -> SignatureError:
        return cls(
            "stale",
            f"stale: the signature's timestamp is more than {SIGNATURE_TOLERANCE_SECONDS} seconds "
            "from this server's clock; sign the request again, and check the signer's clock.",
        )

    @classmethod
    def mismatch(cls) -> SignatureError:
        return cls(
            "mismatch",
            "mismatch: no v1 signature matches this endpoint's Median key; "
            "check that the endpoint and Median use the same key.",
        )


class SignatureHeader(NamedTuple):
    # A NamedTuple, not a frozen dataclass: as immutable, and half the cost to build on every request.
    timestamp: str  # as sent: the signed bytes start with this very text
    signatures: tuple[str, ...]


def parse_header(header: str | None, *, now: float | None = None) -> SignatureHeader:
    """Read the header and check its freshness. Needs no key, so it runs before the key is fetched."""
    usual = _USUAL_HEADER.fullmatch(header) if header else None
    if usual is not None:
        return _fresh(usual[1], (usual[2],), now)
    if not header or header.isspace():
        raise SignatureError.missing()
    timestamp_text: str | None = None
    signatures: list[str] = []
    for item in header.split(","):
        scheme, separator, value = item.strip().partition("=")
        if not separator:
            continue
        if scheme == "t":
            if timestamp_text is not None:
                raise SignatureError.malformed("has more than one t")
            timestamp_text = value
        elif scheme == SIGNATURE_SCHEME:
            if not _V1_PATTERN.fullmatch(value):
                raise SignatureError.malformed(f"has a v1 that is not {SIGNATURE_HEX_LENGTH} lowercase hex digits")
            signatures.append(value)
        # Other schemes (v0, and any Median adds later) are not ours to judge.
    if timestamp_text is None:
        raise SignatureError.malformed("has no t=<unix seconds>")
    if not timestamp_text.isascii() or not timestamp_text.isdigit():
        raise SignatureError.malformed("has a t that is not whole seconds in digits")
    if not signatures:
        raise SignatureError.malformed("has no v1 signature")
    if len(timestamp_text) > MAX_TIMESTAMP_DIGITS:
        raise SignatureError.stale()
    return _fresh(timestamp_text, tuple(signatures), now)


def _fresh(timestamp_text: str, signatures: tuple[str, ...], now: float | None) -> SignatureHeader:
    """The header read, if its timestamp (ASCII digits, at most MAX_TIMESTAMP_DIGITS) is fresh."""
    current = time.time() if now is None else now
    if abs(current - int(timestamp_text)) > SIGNATURE_TOLERANCE_SECONDS:
        raise SignatureError.stale()
    return SignatureHeader(timestamp_text, signatures)


@functools.lru_cache(maxsize=4)  # the key in use, and the next one while it is rotated
def _keyed(key: str) -> hmac.HMAC:
    """HMAC-SHA256 with the key set and nothing hashed yet.

    Each signature copies it (HMAC.copy, which the hmac docs give for messages that share a
    prefix; here, the key's padding): 3.8 us instead of 5.2 for hmac.new on this machine, and a
    warm GET's 2x holds on it (bench/README.md, "warm GET"). It holds nothing the key source
    does not, and is made at a request's first verification, never before a snapshot.
    """
    return hmac.new(key.encode("utf-8"), digestmod=hashlib.sha256)


def compute_signature(key: str, timestamp: str | int, body: bytes) -> str:
    mac = _keyed(key).copy()
    mac.update(f"{timestamp}.".encode("ascii") + body)
    return mac.hexdigest()


def matches(header: SignatureHeader, key: str, body: bytes) -> bool:
    """True when any v1 in the header is the body's signature under this key."""
    expected = compute_signature(key, header.timestamp, body)
    # Every entry is compared, in constant time, so the answer's timing tells nothing.
    found = False
    for candidate in header.signatures:
        found |= hmac.compare_digest(expected, candidate)
    return found


def sign(key: str, body: bytes, *, timestamp: int | None = None) -> str:
    """A header value, as Median sends it, for this body under this key."""
    t = int(time.time()) if timestamp is None else timestamp
    return f"t={t},{SIGNATURE_SCHEME}={compute_signature(key, t, body)}"
