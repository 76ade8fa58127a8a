"""The bench's plan, step by step: the stage set (the artifact built), the cold processes timed, the warm
containers timed, every row weighed, and what a run reports beside them."""

from __future__ import annotations

import os
import platform
import sys
import time
from contextlib import ExitStack
from typing import Any

from bench.cases import informational_cases, key_read_through_extension, target_cases
from bench.cold import cold_processes, run_cold
from bench.environment import set_the_stage
from bench.footprint import client_creation_ms, import_time, imports_beyond_floors
from bench.ideas import cold_idea_cases, cold_idea_pairs, warm_idea_cases
from bench.warm import time_warm, time_warm_idempotent


def measure(cold_runs: int, warm_rounds: int, with_ideas: bool, runtime_python: str) -> dict[str, Any]:
    load_before = os.getloadavg()
    started = time.monotonic()
    with ExitStack() as stack:
        print("building the artifact (median build-artifact) …", file=sys.stderr, flush=True)
        stage = set_the_stage(stack, runtime_python)

        cold = cold_processes(stage)
        cold_ideas = cold_idea_pairs(stage, cold) if with_ideas else []
        runners = cold.runners()
        for runner in (each for pair in cold_ideas for each in pair):
            if all(runner is not known for known in runners):
                runners.append(runner)
        print(f"cold: {cold_runs} rounds of {len(runners)} processes …", file=sys.stderr, flush=True)
        run_cold(runners, cold_runs)

        print(f"warm: {warm_rounds} rounds of each loop, in warm containers …", file=sys.stderr, flush=True)
        warm = time_warm(stage, warm_rounds, with_ideas)
        idempotent = time_warm_idempotent(stage, warm_rounds)

        cases = target_cases(cold, warm)
        informational = informational_cases(cold, warm, idempotent)
        idea_cases = cold_idea_cases(cold_ideas) + (warm_idea_cases(warm) if with_ideas else [])

        print("client creation, import time …", file=sys.stderr, flush=True)
        creation = client_creation_ms()
        imports = import_time(runtime_python, stage.deployed, stage.artifact)
    return {
        "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "cpus": os.cpu_count(),
        "load_average_before": [round(value, 2) for value in load_before],
        "load_average_after": [round(value, 2) for value in os.getloadavg()],
        "runtime_python": runtime_python,
        "cold_runs": cold_runs,
        "warm_rounds": warm_rounds,
        "seconds": round(time.monotonic() - started, 1),
        "measured": stage.measured,
        "key_read_through_extension": key_read_through_extension(cold),
        "cases": [case.as_json() for case in cases],
        "informational": [case.as_json() for case in informational],
        "warm_post_breakdown": warm.breakdown,
        "ideas": [case.as_json() for case in idea_cases],
        "client_creation_ms": round(creation, 2),
        **imports_beyond_floors(cold),
        "import_time": imports,
        "package": stage.measured["artifact"],
    }
