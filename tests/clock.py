"""A clock a test steps by hand: the key source takes one, so a test crosses its floors without sleeping."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class SteppedClock:
    now: float = 1_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
