"""The report: the table a run prints, bench/results.json it writes, and the Markdown table
`--markdown` prints from that file (the README's "Latest results")."""

from __future__ import annotations

import json
from typing import Any

from bench.environment import ROOT

RESULTS = ROOT / "bench" / "results.json"

_TITLES = {
    "informational": "for information (no target):",
    "ideas": "ideas: what median_lambda does its own way, and the alternatives, each against the floor named:",
}


def read_results() -> dict[str, Any]:
    results: dict[str, Any] = json.loads(RESULTS.read_text(encoding="utf-8"))
    return results


def write_results(results: dict[str, Any]) -> None:
    """Whole or not at all: a run stopped midway leaves the last results as they were."""
    partial = RESULTS.with_suffix(".json.tmp")
    partial.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    partial.replace(RESULTS)


def _amount(value: float, unit: str) -> str:
    if unit == "ms" and value < 1:
        value, unit = value * 1000, "µs"
    if unit == "µs":
        return f"{value:.1f} µs"
    return f"{value:.0f} ms" if value >= 10 else f"{value:.1f} ms"


def _verdict(case: dict[str, Any]) -> str:
    if case["target"] is None:
        return ""
    return f"≤ {case['target']:g}x {'met' if case['met'] else 'MISSED'}"


def _spread(case: dict[str, Any]) -> str:
    low, high = case.get("spread", (case["ratio"], case["ratio"]))
    return f"{low:.2f}-{high:.2f}"


def table(results: dict[str, Any]) -> str:
    header = f"{'case':78} {'against':>34} {'base':>9} {'this':>9} {'ratio':>7} {'IQR':>11}  target"
    lines = [header, "-" * len(header)]
    for section in ("cases", "informational", "ideas"):
        if section in _TITLES:
            lines += ["", _TITLES[section]]
        for case in results.get(section, []):
            name = case["name"] + (f" ({case['note']})" if case["note"] else "")
            lines.append(
                f"{name:78} {case.get('against', 'the floor'):>34} {_amount(case['floor'], case['unit']):>9} "
                f"{_amount(case['endpoint'], case['unit']):>9} {case['ratio']:>6.2f}x {_spread(case):>11}  "
                f"{_verdict(case)}"
            )
    breakdown = results.get("warm_post_breakdown")
    if breakdown:
        lines.append(f"\nwhere a warm POST's {breakdown['warm_post_us']:.1f} µs go (each step alone, same rounds):")
        for row in breakdown["steps"]:
            lines.append(f"  {row['us']:6.1f} µs  {row['share']:6.1%}  {row['step']}")
    lines.append(f"a new Secrets Manager client, its modules loaded: {results['client_creation_ms']:.0f} ms")
    lines.append(
        f"\ncold GET imports beyond the extension floor: {', '.join(results['cold_get_imports_beyond_floor'])}"
    )
    lines.append(
        f"cold GET (boto3) imports beyond the boto3 floor: {', '.join(results['cold_get_boto3_imports_beyond_floor'])}"
    )
    beyond = ", ".join(f"{name} {count}" for name, count in results["cold_post_imports_beyond_floor"].items())
    lines.append(f"cold POST as deployed imports beyond the table-on floor (modules per package): {beyond}")
    package = results["package"]
    lines.append(
        f"\nthe artifact: {package['built_by']}, for {package['architecture']}: {package['files']} files "
        f"({package['bytecode_files']} of them bytecode), {package['unzipped_bytes'] / 1e6:.1f} MB unzipped, "
        f"{package['zipped_bytes'] / 1e6:.1f} MB zipped"
    )
    measured = results["measured"]
    lines.append(f"the tools: {measured['tools']['package']}: {measured['tools']['served']}")
    environment = measured["environment"]
    lines.append(
        f"the environment: the {environment['stage']}: {', '.join(environment['from_template'])} from "
        "template.yaml, and Lambda's own; here instead:"
    )
    lines += [f"  {names}: {why}" for names, why in environment["differences"].items()]
    imports = results["import_time"]
    lines.append(
        f"\nimport handler.app: {imports['handler_app_us'] / 1000:.1f} ms, {imports['modules']} modules; "
        "top 10 by cumulative time:"
    )
    for row in imports["top"]:
        lines.append(
            f"  {row['cumulative_us'] / 1000:7.1f} ms  (self {row['self_us'] / 1000:5.1f} ms)  {row['module']}"
        )
    lines.append(
        f"\nPython {results['python']} on {results['platform']}, {results['cpus']} CPUs, load "
        f"{results['load_average_before']} before, {results.get('load_average_after')} after; "
        f"{results['cold_runs']} cold rounds, {results['warm_rounds']} warm rounds; {results['seconds']} s"
    )
    return "\n".join(lines)


def markdown(results: dict[str, Any], *, with_ideas: bool = False) -> str:
    rows = [
        "| case | against | base | this | ratio | per-round IQR | target |",
        "| --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    sections = [("cases", ""), ("informational", "(informational)")]
    for section, label in sections + ([("ideas", "(an idea)")] if with_ideas else []):
        for case in results.get(section, []):
            name = case["name"] + (f" ({case['note']})" if case["note"] else "")
            rows.append(
                f"| {name} | {case.get('against', 'the floor')} | {_amount(case['floor'], case['unit'])} "
                f"| {_amount(case['endpoint'], case['unit'])} | {case['ratio']:.2f}x | {_spread(case)} "
                f"| {_verdict(case) or label} |"
            )
    return "\n".join(rows)


def markdown_breakdown(results: dict[str, Any]) -> str:
    """The warm POST's steps as a Markdown table: where its microseconds go."""
    breakdown = results["warm_post_breakdown"]
    rows = [
        f"| step of a warm POST ({breakdown['warm_post_us']:.1f} µs in all) | µs | share |",
        "| --- | ---: | ---: |",
    ]
    rows += [f"| {row['step']} | {row['us']:.1f} | {row['share']:.0%} |" for row in breakdown["steps"]]
    return "\n".join(rows)
