"""KeptReads, as the tools' own secrets and parameters use it: the causes it gives in its own words.

The store of the tools' values (median_lambda/authoring/dependencies.py) is built when its module is
imported, with KeptReads' default words; these tests build one the same way, on a clock they step,
and cut a read short as a call's deadline does (the read raises something other than the store's
failure, and records nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from median_lambda.key.source import KeptReads

from tests.clock import SteppedClock

if TYPE_CHECKING:
    from collections.abc import Callable

CACHE_SECONDS = 300.0
FLOOR_SECONDS = 30.0
STALE_SECONDS = 3600.0


class ValueUnavailable(Exception):
    pass


class CutShort(BaseException):
    """What a call's deadline raises into a read it interrupts: not the store's failure."""


def _get(kept: KeptReads, read: Callable[[], str]) -> str:
    return kept.get(
        "secret:median-tools/carrier-token",
        read,
        cache_seconds=CACHE_SECONDS,
        min_refresh_seconds=FLOOR_SECONDS,
        stale_if_error_seconds=STALE_SECONDS,
    )


def _cut_short() -> str:
    raise CutShort


def test_a_read_cut_short_leaves_a_cause_that_says_when_it_is_read_again() -> None:
    # GIVEN a store whose first read of a value was cut short
    kept = KeptReads(SteppedClock(), ValueUnavailable)
    with pytest.raises(CutShort):
        _get(kept, _cut_short)
    # WHEN the value is asked for again within the refresh floor
    # THEN the cause says the last read did not finish, and after how long it is read again
    with pytest.raises(ValueUnavailable) as raised:
        _get(kept, lambda: "never read")
    assert str(raised.value) == "its last read did not finish; it is read again 30 s after"


def test_a_value_past_its_stale_bound_with_no_read_finished_since_is_too_old_in_the_default_words() -> None:
    # GIVEN a value read, then, past its lifetime and stale bound, a read cut short
    clock = SteppedClock()
    kept = KeptReads(clock, ValueUnavailable)
    assert _get(kept, lambda: "token") == "token"
    clock.advance(CACHE_SECONDS + STALE_SECONDS)
    with pytest.raises(CutShort):
        _get(kept, _cut_short)
    # WHEN the value is asked for again within the refresh floor
    # THEN it is refused as too old, in the words the tools' secrets use
    with pytest.raises(ValueUnavailable) as raised:
        _get(kept, lambda: "never read")
    assert str(raised.value) == "the value read before is too old, and it could not be read again since"
