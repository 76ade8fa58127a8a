"""What a run reports beside the ratios: the modules a cold start imports beyond its floor, what
creating a client costs, `python -X importtime` for median_lambda.app, and the `sam build` artifact's size."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from median_lambda.protocol import PREBUILT_MANIFEST_FILE, TOOLS_PACKAGE_ENV

from bench.environment import ROOT

if TYPE_CHECKING:
    from bench.cold import ColdProcesses

SAM_CLI = ROOT / ".venv" / "sam-cli" / "bin" / "sam"  # the Makefile's SAM_VENV
SAM_BUILD_TIMEOUT_SECONDS = 240


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


def package_size(build_root: Path) -> dict[str, Any]:
    """Size of the `sam build` artifact, unpacked and zipped, when the SAM CLI is in .venv/sam-cli."""
    sam = SAM_CLI
    if not sam.exists():
        return {"skipped": "the SAM CLI is not in .venv/sam-cli (make build puts it there)"}
    build_dir = build_root / "sam-build"
    started = time.monotonic()
    try:
        built = subprocess.run(  # noqa: S603 - the project's SAM CLI, on this project's template
            [str(sam), "build", "--template-file", str(ROOT / "template.yaml"), "--build-dir", str(build_dir)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=SAM_BUILD_TIMEOUT_SECONDS,
            check=False,
            # The user's tools, as `make build` packages them: not the bench's.
            env={name: value for name, value in os.environ.items() if name != TOOLS_PACKAGE_ENV},
        )
    except subprocess.TimeoutExpired:
        return {"skipped": f"sam build took over {SAM_BUILD_TIMEOUT_SECONDS} s"}
    if built.returncode != 0:
        last = [line.strip() for line in (built.stdout + built.stderr).splitlines() if line.strip()][-1:]
        return {"skipped": f"sam build failed: {last[0] if last else 'no output'}"}
    apps = sorted(build_dir.glob("*/handler/app.py"))
    if not apps:
        return {"skipped": "sam build left no median_lambda/app.py in its artifact"}
    artifact = apps[0].parent.parent
    files = [path for path in artifact.rglob("*") if path.is_file()]
    archive = shutil.make_archive(str(build_root / "artifact"), "zip", artifact)
    return {
        "function": artifact.name,
        "files": len(files),
        "unzipped_bytes": sum(path.stat().st_size for path in files),
        "zipped_bytes": Path(archive).stat().st_size,
        "prebuilt_manifest": (artifact / "median_lambda" / PREBUILT_MANIFEST_FILE).exists(),
        "build_seconds": round(time.monotonic() - started, 1),
    }


def import_time(python: str, env: dict[str, str], repeats: int = 3) -> dict[str, Any]:
    """`python -X importtime -c 'import handler.app'`: of `repeats` runs, the median one's top 10 by cumulative time."""
    runs: list[tuple[int, list[dict[str, Any]]]] = []
    for _ in range(repeats):
        finished = subprocess.run(  # noqa: S603 - this venv's Python running this bench's own scripts
            [python, "-X", "importtime", "-c", "import handler.app"],
            env=env,
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
