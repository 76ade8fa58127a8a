"""What a run reports beside the ratios: the modules a cold start imports beyond its floor, what
creating a client costs, and `python -X importtime` for handler.app (the artifact's size is
bench/environment.py's, which builds it)."""

from __future__ import annotations

import statistics
import subprocess
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from bench.cold import ColdProcesses


def imports_beyond_floors(cold: ColdProcesses) -> dict[str, Any]:
    """What each cold start imported that its floor did not, as the last run of each left it."""
    return {
        "cold_get_imports_beyond_floor": sorted(set(cold.get_extension.modules) - set(cold.floor_extension.modules)),
        "cold_get_boto3_imports_beyond_floor": sorted(set(cold.get_boto3.modules) - set(cold.floor_boto3.modules)),
        "cold_post_imports_beyond_floor": _top_level(set(cold.post_deployed.modules) - set(cold.floor_table.modules)),
    }


def _top_level(modules: set[str]) -> dict[str, int]:
    """How many modules of each top-level package."""
    counts: dict[str, int] = {}
    for module in modules:
        top = module.split(".")[0]
        counts[top] = counts.get(top, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: -item[1]))


def client_creation_ms(repeats: int = 5) -> float:
    """What creating a Secrets Manager client costs once its modules are loaded: the median of `repeats`."""
    import boto3

    boto3.client("secretsmanager")
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        boto3.client("secretsmanager")
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def import_time(python: str, env: dict[str, str], where: Path, repeats: int = 3) -> dict[str, Any]:
    """`python -X importtime -c 'import handler.app'` in the artifact: of `repeats` runs, the median one's top 10 by
    cumulative time."""
    runs: list[tuple[int, list[dict[str, Any]]]] = []
    for _ in range(repeats):
        finished = subprocess.run(  # noqa: S603 - this venv's Python running this bench's own scripts
            [python, "-X", "importtime", "-c", "import handler.app"],
            env={**env, "PYTHONPATH": str(where)},
            cwd=where,
            capture_output=True,
            text=True,
            check=True,
        )
        rows: list[dict[str, Any]] = []
        for line in finished.stderr.splitlines():
            if line.startswith("import time:") and "self [us]" not in line:
                self_us, cumulative_us, name = line.removeprefix("import time:").split("|")
                rows.append({"module": name.rstrip(), "self_us": int(self_us), "cumulative_us": int(cumulative_us)})
        total = next(row["cumulative_us"] for row in rows if row["module"].strip() == "median_lambda.app")
        runs.append((total, rows))
    runs.sort(key=lambda run: run[0])
    total, rows = runs[len(runs) // 2]
    top = sorted(rows, key=lambda row: row["cumulative_us"], reverse=True)[:10]
    return {"handler_app_us": total, "modules": len(rows), "top": top}
