"""What the key source says it holds, which SnapStart's hooks trust before a snapshot is taken.

A snapshot must carry neither a key nor a client (its connections and credentials would be
shared by every container restored from it): holds_nothing() must be false while either is held.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from median_lambda.key.source import MedianKeySource

if TYPE_CHECKING:
    import pytest


def test_a_client_alone_is_something_held_until_forgotten(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a key source that has made its Secrets Manager client, and read no secret yet
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    source = MedianKeySource()
    assert source.holds_nothing()
    assert source.client is source.client  # made once
    # WHEN it is asked what it holds, and again after forget()
    holding_a_client = source.holds_nothing()
    source.forget()
    # THEN the client counts as held; once forgotten, nothing is
    assert holding_a_client is False
    assert source.holds_nothing() is True
