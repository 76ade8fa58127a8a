"""What every row of the bench is: a ratio of two sets of samples timed in the same rounds.

Both sides are timed round by round, interleaved, so the ratio of each round holds where the
milliseconds do not; a row reports the median of those ratios and their quartiles.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

# The targets (issues 11, 31 and 34), by case. Each is met when the median of its per-round ratios is at most this.
TARGETS = {
    "cold GET, key through the extension": 1.3,
    "cold GET, key through boto3": 1.15,
    "cold GET against the peer's": 0.6,
    "cold POST as deployed": 1.25,
    "cold POST as deployed against the peer's": 0.8,
    "warm GET": 2.0,
    "warm POST": 6.0,
    "warm POST against the peer's": 1.0,
}


@dataclass
class Samples:
    name: str
    samples: list[float] = field(default_factory=list)


@dataclass
class Case:
    name: str
    unit: str  # "ms" or "µs"
    base_name: str  # what the ratio divides by: a floor, or the peer
    base: float  # medians
    value: float
    ratio: float  # the median of each interleaved round's own ratio
    spread: tuple[float, float]  # the per-round ratios' quartiles: how stable the median is
    target: float | None
    note: str = ""
    base_samples: list[float] = field(default_factory=list)
    samples: list[float] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        met = None if self.target is None else self.ratio <= self.target
        return {
            "name": self.name,
            "unit": self.unit,
            "against": self.base_name,
            "floor": round(self.base, 4),
            "endpoint": round(self.value, 4),
            "ratio": round(self.ratio, 3),
            "spread": [round(value, 3) for value in self.spread],
            "target": self.target,
            "met": met,
            "note": self.note,
            "floor_samples": [round(sample, 4) for sample in self.base_samples],
            "endpoint_samples": [round(sample, 4) for sample in self.samples],
        }


def paired_case(name: str, unit: str, base: Samples, measured: Samples, note: str = "", *, target: bool = True) -> Case:
    """`measured` against `base`, round by round: both were timed in the same rounds."""
    ratios = sorted(value / against for value, against in zip(measured.samples, base.samples, strict=True))
    quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
    return Case(
        name,
        unit,
        base.name,
        statistics.median(base.samples),
        statistics.median(measured.samples),
        statistics.median(ratios),
        (quartiles[0], quartiles[2]),
        TARGETS.get(name) if target else None,
        note,
        base.samples,
        measured.samples,
    )
