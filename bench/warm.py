"""Running warm: a warm container per artifact (bench/container.py), as a Lambda container answers request
after request, on the events this process signs for it.

The container imports the handler from the artifact with the production stage's environment, and
the peer and the floors beside it; the handler, the peer's and the floors' functions each answer
the same events in one loop per round, µs per call, the order rotated every round.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bench.environment import BENCH_KEY, get_event, post_event
from bench.ratios import Samples

if TYPE_CHECKING:
    from pathlib import Path

    from bench.environment import Stage

WARM_GET_CALLS = 2000
WARM_POST_CALLS = 500
WARM_IDEMPOTENT_CALLS = 40  # each makes two DynamoDB writes to moto's server


@dataclass
class WarmLoop(Samples):
    pass


@dataclass(frozen=True)
class WarmLoops:
    """The loops behind the cases and the rows for information, by the name each row gives them."""

    get: dict[str, WarmLoop]
    post: dict[str, WarmLoop]
    breakdown: dict[str, Any] = field(default_factory=dict)
    ideas: list[tuple[WarmLoop, list[WarmLoop]]] = field(default_factory=list)  # a floor, and what adds to it


def posts(count: int, rounds: int) -> list[list[dict[str, Any]]]:
    """`rounds` rounds of `count` orderStatus calls, each with a callId of its own, signed now."""
    return [[post_event() for _ in range(count)] for _ in range(rounds)]


def run_container(stage: Stage, artifact: Path, environment: dict[str, str], spec: dict[str, Any]) -> dict[str, Any]:
    """bench/container.py in a new process in `artifact`, on `spec`; what it measured."""
    spec_path, results = stage.work / "warm-spec.json", stage.work / "warm-results.json"
    spec = {**spec, "key": BENCH_KEY, "get": get_event(), "check": post_event(), "results": str(results)}
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    finished = subprocess.run(  # noqa: S603 - the runtime venv's Python running the bench's own module
        [stage.runtime_python, "-m", "bench.container", str(spec_path)],
        cwd=artifact,
        env={**environment, **stage.peer_environment(), "PYTHONPATH": stage.python_path(artifact)},
        capture_output=True,
        check=False,
    )
    if finished.returncode != 0:
        raise SystemExit(f"a warm container failed:\n{finished.stderr.decode('utf-8', errors='replace')[-3000:]}")
    measured: dict[str, Any] = json.loads(results.read_text(encoding="utf-8"))
    return measured


def _loops(samples: dict[str, list[float]], unit_factor: float = 1.0) -> dict[str, WarmLoop]:
    return {name: WarmLoop(name, [sample / unit_factor for sample in times]) for name, times in samples.items()}


def time_warm(stage: Stage, rounds: int, with_ideas: bool) -> WarmLoops:
    """The artifact as built (orderStatus a read: no table for its calls, as its floor makes no write), in the
    production stage's environment: the GET loops' rounds, the POST loops', each step of a warm POST, and the
    warm ideas."""
    get_rounds = [[get_event()] for _ in range(rounds)]
    post_rounds = posts(WARM_POST_CALLS, rounds)
    spec: dict[str, Any] = {
        "peer_table": False,
        "groups": [
            {
                "name": "get",
                "loops": {"the floor": "floor_get", "warm GET": "ours", "the peer's warm GET": "theirs"},
                "rounds": get_rounds,
                "repeat": WARM_GET_CALLS,
            },
            {
                "name": "post",
                "loops": {"the floor": "floor_post", "warm POST": "ours", "the peer's warm POST": "theirs"},
                "rounds": post_rounds,
            },
        ],
        "breakdown": {"rounds": posts(WARM_POST_CALLS, rounds)},
    }
    if with_ideas:
        spec["ideas"] = {"get_rounds": get_rounds, "get_repeat": WARM_GET_CALLS, "post_rounds": post_rounds}
    measured = run_container(stage, stage.artifact, stage.deployed, spec)
    ideas = []
    for group in measured.get("ideas", {}).values():
        loops = _loops(group)
        floor = loops.pop("the floor")
        ideas.append((floor, list(loops.values())))
    return WarmLoops(_loops(measured["get"]), _loops(measured["post"]), measured["breakdown"], ideas)


def time_warm_idempotent(stage: Stage, rounds: int) -> list[WarmLoop]:
    """A warm POST through the record (orderStatus declared back into it), and the peer's with its table: two
    writes to moto's DynamoDB a call each. ms per call."""
    spec = {
        "peer_table": True,
        "groups": [
            {
                "name": "post",
                "loops": {"the peer's warm POST with the table": "theirs", "warm POST as deployed": "ours"},
                "rounds": posts(WARM_IDEMPOTENT_CALLS, max(3, rounds // 3)),
            }
        ],
    }
    measured = run_container(stage, stage.recorded_artifact, stage.deployed, spec)
    return list(_loops(measured["post"], 1000).values())
