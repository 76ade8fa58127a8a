"""A warm container: `python -m bench.container SPEC`, run in the artifact's directory with the artifact
first on its path and the function's environment, as a Lambda container serves request after request.

It imports `handler.app` (template.yaml's Handler), the floors and the peer, checks that each
answers what its floor answers, then times the loops SPEC names in interleaved rounds (the order
rotated every round, the garbage collector held off as timeit holds it), µs per call; with SPEC's
`breakdown`, each step of a warm POST (bench/breakdown.py), and with its `ideas`, the warm ideas
(bench/warm_ideas.py). It writes what it measured to SPEC's `results` file. Only the artifact's
modules and bench's own run here: neither median_lambda's developer rooms nor moto.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    Answer = Callable[[dict[str, Any]], Any]


class Context:
    """A Lambda context as the runtime hands it: its deadline an hour away, so that the tool's time limits are armed."""

    function_name = os.environ.get("AWS_LAMBDA_FUNCTION_NAME", "median-tools")
    memory_limit_in_mb = int(os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "512"))
    invoked_function_arn = f"arn:aws:lambda:us-east-1:123456789012:function:{function_name}:live"
    aws_request_id = "warm-request"

    def __init__(self) -> None:
        self._deadline = time.monotonic() + 3600

    def get_remaining_time_in_millis(self) -> int:
        return int((self._deadline - time.monotonic()) * 1000)


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


def run_rounds(loops: dict[str, Answer], rounds: list[list[dict[str, Any]]]) -> dict[str, list[float]]:
    """Each loop on each round's events, the order rotated every round, after a warm-up of each."""
    warm_up = rounds[0][: len(rounds[0]) // 10 or 1]
    for function in loops.values():
        time_loop(function, warm_up)
    samples: dict[str, list[float]] = {name: [] for name in loops}
    names = list(loops)
    for number, events in enumerate(rounds):
        shift = number % len(names)
        for name in names[shift:] + names[:shift]:
            samples[name].append(time_loop(loops[name], events))
    return samples


def import_peer(with_table: bool) -> Answer:
    """bench/peer.py, imported as the function's environment makes it: through Powertools Idempotency on the
    table where `with_table`; otherwise as written for a read, with no table (it reads the variable at import)."""
    import importlib.util

    kept = os.environ.get("IDEMPOTENCY_TABLE")
    if not with_table:
        os.environ.pop("IDEMPOTENCY_TABLE", None)
    try:
        spec = importlib.util.find_spec("bench.peer")
        assert spec is not None and spec.loader is not None
        peer = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(peer)
    finally:
        if kept is not None:
            os.environ["IDEMPOTENCY_TABLE"] = kept
    context = Context()
    return lambda event: peer.lambda_handler(event, context)


def contenders(spec: dict[str, Any]) -> dict[str, Answer]:
    """The handler, the peer and the floors, each checked to answer what its floor answers."""
    from bench.floors import make_floor_get, make_floor_post
    from handler.app import lambda_handler

    context: Any = Context()

    def ours(event: dict[str, Any]) -> Any:
        return lambda_handler(event, context)

    theirs = import_peer(spec["peer_table"])
    key = spec["key"].encode("utf-8")
    manifest = Path(os.environ["BENCH_MANIFEST"]).read_text(encoding="utf-8").strip()
    floor_get, floor_post = make_floor_get(key, manifest), make_floor_post(key)
    for name, function in (("ours", ours), ("the peer's", theirs)):
        if json.loads(function(spec["get"])["body"]) != json.loads(manifest):
            raise SystemExit(f"warm GET: {name} answers another manifest than the floor")
        check = spec["check"]
        answers = [json.loads(answer(check)["body"]) for answer in (function, floor_post)]
        if answers[0] != answers[1]:
            raise SystemExit(f"warm POST: {name} and the floor answer differently: {answers}")
    return {"ours": ours, "theirs": theirs, "floor_get": floor_get, "floor_post": floor_post}


def served_from_the_artifact() -> None:
    """The handler, the tools and the libraries come from the artifact (the working directory, as /var/task
    is), and boto3 from the runtime's venv beside it, as the Lambda runtime provides it."""
    import importlib

    artifact = Path.cwd().resolve()
    for name in ("median_lambda", "tools", "pydantic", "aws_lambda_powertools", "boto3"):
        where = Path(importlib.import_module(name).__file__ or "").resolve()
        if where.is_relative_to(artifact) != (name != "boto3"):
            raise SystemExit(
                f"{name} was imported from {where}, not from {'the runtime' if name == 'boto3' else artifact}"
            )


def main(spec_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    served_from_the_artifact()
    # The handler's metrics print a line a call, as on Lambda, where stdout goes to CloudWatch Logs.
    sys.stdout = Path(os.devnull).open("w", encoding="utf-8")  # noqa: SIM115 - the process's own, to its end
    functions = contenders(spec)
    results: dict[str, Any] = {}
    for group in spec["groups"]:
        loops = {name: functions[role] for name, role in group["loops"].items()}
        # A GET loop answers one signed GET again and again: sent once, repeated here.
        rounds = [events * group.get("repeat", 1) for events in group["rounds"]]
        results[group["name"]] = run_rounds(loops, rounds)
    if spec.get("breakdown"):
        from bench.breakdown import time_breakdown

        results["breakdown"] = time_breakdown(functions["ours"], spec["breakdown"]["rounds"])
    if spec.get("ideas"):
        from bench.warm_ideas import time_warm_ideas

        results["ideas"] = time_warm_ideas(functions, spec["ideas"])
    Path(spec["results"]).write_text(json.dumps(results), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
