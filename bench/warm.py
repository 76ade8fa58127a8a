"""Running warm: loops in this process, as a warm container answers request after request.

The handler's `lambda_handler`, the peer's and the floors' functions each answer the same events
in one loop per round, µs per call, the order rotated every round. Before any loop, each is
checked to answer what its floor answers.
"""

from __future__ import annotations

import gc
import json
import os
import time
from collections.abc import Callable
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from median_lambda.testing import FakeLambdaContext

from bench.environment import BENCH_KEY, IDEMPOTENCY_TABLE, get_event, post_event
from bench.floors import make_floor_get, make_floor_post
from bench.ratios import Samples

if TYPE_CHECKING:
    from contextlib import ExitStack

    from bench.environment import Stage

WARM_GET_CALLS = 2000
WARM_POST_CALLS = 500
WARM_IDEMPOTENT_CALLS = 40  # each makes two DynamoDB writes to moto's server

# A handler as a loop calls it: an event in, an answer out.
Answer = Callable[[dict[str, Any]], Any]


def time_loop(function: Answer, events: list[dict[str, Any]]) -> float:
    """µs per call over one call per event, the garbage collector held off as timeit holds it."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        started = time.perf_counter_ns()
        for event in events:
            function(event)
        elapsed = time.perf_counter_ns() - started
    finally:
        if collecting:
            gc.enable()
    return elapsed / len(events) / 1000


@dataclass
class WarmLoop(Samples):
    function: Answer | None = None


def run_warm(
    loops: list[WarmLoop], make_events: Callable[[], list[dict[str, Any]]], rounds: int, unit: str = "µs"
) -> None:
    """Interleaved rounds, the order rotated every round, after a warm-up of each; all run the same events."""
    warm_up = make_events()
    for loop in loops:
        assert loop.function is not None
        time_loop(loop.function, warm_up[: len(warm_up) // 10 or 1])
    for round_number in range(rounds):
        events = make_events()
        shift = round_number % len(loops)
        for loop in loops[shift:] + loops[:shift]:
            assert loop.function is not None
            loop.samples.append(time_loop(loop.function, events) / (1000 if unit == "ms" else 1))


def posts(count: int) -> Callable[[], list[dict[str, Any]]]:
    """`count` orderStatus calls, each with a callId of its own, signed anew for every round."""
    return lambda: [post_event() for _ in range(count)]


@dataclass(frozen=True)
class WarmContenders:
    """What the warm loops call, in this process: the handler, the peer, and the floors."""

    ours: Answer
    theirs: Answer
    floor_get: Answer
    floor_post: Answer
    get_event: dict[str, Any]  # one signed GET, which every GET loop of the run answers

    def gets(self) -> list[dict[str, Any]]:
        return [self.get_event] * WARM_GET_CALLS


def warm_contenders(stack: ExitStack, stage: Stage) -> WarmContenders:
    """The handler and the peer imported here, without the table as `make serve` runs them but from the
    files the build writes, as a deployed container reads them; each checked against the floor."""
    os.environ.update(stage.serve)
    os.environ.pop("MEDIAN_DEV_KEY", None)
    # Metrics print a line per call, as on Lambda, where stdout goes to CloudWatch Logs.
    sink = stack.enter_context(Path(os.devnull).open("w", encoding="utf-8"))  # noqa: SIM115 - closed with the run's stack
    stack.enter_context(redirect_stdout(sink))
    import median_lambda.app

    from bench.peer import lambda_handler as peer_handler

    serve_as_built(stack, stage.artifact)
    context = FakeLambdaContext(timeout_seconds=3600)

    def ours(event: dict[str, Any]) -> dict[str, Any]:
        return median_lambda.app.lambda_handler(event, context)  # type: ignore[arg-type]

    def theirs(event: dict[str, Any]) -> dict[str, Any]:
        return peer_handler(event, context)  # type: ignore[arg-type]

    key = BENCH_KEY.encode("utf-8")
    floor_get, floor_post = make_floor_get(key, stage.manifest), make_floor_post(key)
    for function in (ours, theirs):
        if json.loads(function(get_event())["body"]) != stage.served_manifest:
            raise SystemExit(f"warm GET: {function.__name__} answers another manifest than the floor")
        check = post_event()
        answers = [json.loads(answer(check)["body"]) for answer in (function, floor_post)]
        if answers[0] != answers[1]:
            raise SystemExit(f"warm POST: {function.__name__} and the floor answer differently: {answers}")
    return WarmContenders(ours, theirs, floor_get, floor_post, get_event())


def serve_as_built(stack: ExitStack, artifact: Path) -> None:
    """The handler imported here reads what the build wrote into `artifact` (the manifest, the stages, the
    tools' modules), as a deployed container reads them beside median_lambda/app.py; put back with the run's stack.

    A source checkout has none of them, and reads tools/settings.toml for its stage at every request
    (`make serve` must see it saved): a cost no deployed container pays, which a warm loop must not
    measure either.
    """
    import median_lambda.app
    from median_lambda.authoring import registry
    from median_lambda.protocol import PREBUILT_MANIFEST_FILE, PREBUILT_STAGES_FILE, PREBUILT_TOOL_MODULES_FILE

    built = artifact / "median_lambda"
    for module, name, file in (
        (median_lambda.app, "PREBUILT_MANIFEST", PREBUILT_MANIFEST_FILE),
        (median_lambda.app, "PREBUILT_STAGES", PREBUILT_STAGES_FILE),
        (registry, "PREBUILT_TOOL_MODULES", PREBUILT_TOOL_MODULES_FILE),
    ):
        stack.callback(setattr, module, name, getattr(module, name))
        setattr(module, name, str(built / file))
    median_lambda.app.forget_manifest()
    registry._prebuilt = None  # read anew from the artifact's file, as a new container would


@dataclass(frozen=True)
class WarmLoops:
    """The loops behind the cases and the rows for information, by the name each row gives them."""

    get: dict[str, WarmLoop]
    post: dict[str, WarmLoop]


def time_warm(contenders: WarmContenders, rounds: int) -> WarmLoops:
    """The warm GET loops' rounds, then the warm POST loops'."""
    get_loops = {
        name: WarmLoop(name, [], function)
        for name, function in (
            ("the floor", contenders.floor_get),
            ("warm GET", contenders.ours),
            ("the peer's warm GET", contenders.theirs),
        )
    }
    run_warm(list(get_loops.values()), contenders.gets, rounds)
    post_loops = {
        name: WarmLoop(name, [], function)
        for name, function in (
            ("the floor", contenders.floor_post),
            ("warm POST", contenders.ours),
            ("the peer's warm POST", contenders.theirs),
        )
    }
    run_warm(list(post_loops.values()), posts(WARM_POST_CALLS), rounds)
    return WarmLoops(get_loops, post_loops)


def peer_with_the_table(stage: Stage) -> Answer:
    """bench/peer.py imported anew, as a deployed stack's environment makes it: at most once per callId,
    through Powertools Idempotency on the idempotency table."""
    import importlib.util

    os.environ["IDEMPOTENCY_TABLE"] = IDEMPOTENCY_TABLE
    try:
        spec = importlib.util.spec_from_file_location("bench.peer_with_the_table", stage.artifact / "bench" / "peer.py")
        assert spec is not None and spec.loader is not None
        peer = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(peer)
    finally:
        del os.environ["IDEMPOTENCY_TABLE"]
    context = FakeLambdaContext(timeout_seconds=3600)

    def theirs(event: dict[str, Any]) -> Any:
        return peer.lambda_handler(event, context)

    return theirs


def time_warm_idempotent(contenders: WarmContenders, stage: Stage, rounds: int) -> list[WarmLoop]:
    """A warm POST with the idempotency table named, and the peer's with it: two writes to moto's DynamoDB a call."""
    theirs = peer_with_the_table(stage)
    os.environ["IDEMPOTENCY_TABLE"] = IDEMPOTENCY_TABLE
    from median_lambda.runtime.env import forget_settings

    forget_settings()  # read once per container: this loop's container names the table
    loops = [
        WarmLoop("the peer's warm POST with the table", [], theirs),
        WarmLoop("warm POST as deployed", [], contenders.ours),
    ]
    run_warm(loops, posts(WARM_IDEMPOTENT_CALLS), max(3, rounds // 3), unit="ms")
    del os.environ["IDEMPOTENCY_TABLE"]
    forget_settings()
    return loops
