"""`make mutate`: mutation testing (mutmut) on the modules that guard signatures, money and sync.

Each module is mutated alone and tried against only the tests that guard it, in a copy of this
checkout of its own (.mutmut/<module>/): mutmut reads one [tool.mutmut] table from the
pyproject.toml in the directory it runs in, and a copy per module lets each have its own
selection without touching the checkout's pyproject.toml.

A mutant that survives counts as equivalent only when maintainers/equivalent_mutants.toml names it,
with the line mutmut wrote and the reason it cannot change behaviour. An entry whose line no
longer matches (the code changed under it) no longer counts: the mutant is a survivor again,
and the table says the entry is stale.

    python -m maintainers.mutate [MODULE ...]   # e.g. signature whole_numbers; all when none given
    python -m maintainers.mutate --no-run [MODULE ...]   # the last runs' table again, equivalents re-read

Prints a table per module and writes it to .mutmut/table.md; exits 1 when a module is below
the bar (REQUIRED_SCORE), so the weekly workflow fails where the suite has lost its teeth.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import TextIO

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".mutmut"
EQUIVALENTS = ROOT / "maintainers" / "equivalent_mutants.toml"
# The library's package, which the copy holds at its top: mutmut puts only a copy's ./, src/ and source/
# first on the tests' import path (ahead of the venv's editable install of median-lambda), and names
# each mutant by its file's path from there, as the equivalents above list them.
LIBRARY_PACKAGE = "median-lambda/src/median_lambda/"
REQUIRED_SCORE = 0.90

# Each module, and the narrowest tests that guard it: mutmut first runs them all to learn which
# test reaches which function, then runs for each mutant only the tests that reach it.
GUARDS: dict[str, list[str]] = {
    "signature": [
        "tests/unit/test_signature.py",
        "tests/unit/test_signature_refusal_texts.py",
        "tests/unit/test_request_headers.py",
        "tests/integration/test_signature_401.py",
        # Each 401 family on GET and POST, and the published vectors, as any project's endpoint answers them.
        "median_lambda/contract/test_signature.py",
    ],
    "whole_numbers": [
        "tests/unit/test_whole_numbers.py",
        # A whole float keeps its literal through copy, deepcopy and pickle, as Powertools copies it.
        "tests/unit/test_call_identity.py",
    ],
    "rules": [
        "tests/unit/test_rules.py",
        "tests/unit/test_sync_rule_lines.py",
    ],
    "key": [
        "tests/integration/test_key.py",
        "tests/integration/test_key_cache.py",
        "tests/integration/test_key_outages.py",
        "tests/integration/test_key_rotation.py",
        "tests/integration/test_key_extension.py",
        "tests/integration/test_key_expiry_instants.py",
        "tests/integration/test_dev_key_reads_no_secret.py",
        "tests/integration/test_key_unavailable_causes.py",
        "tests/unit/test_key_source_snapshot_state.py",
        "tests/unit/test_key_secret_answers.py",
        "tests/integration/test_key_rotation_log.py",
        "tests/integration/test_key_kept_and_refused_log.py",
        # KeptReads as the tools' own secrets meet it: the cache, a read cut short, a value too old.
        "tests/integration/test_tools_own_systems.py",
        # The same, on a KeptReads built in the test: the tools' own is built at import, before any
        # test, so mutmut (which tries a mutant on the tests that called its function) tries none
        # on a mutated __init__ through it.
        "tests/unit/test_kept_reads.py",
        # 500 no_key when the key's secret is missing, before the signature is compared.
        "median_lambda/contract/test_signature.py",
    ],
    "deadline": [
        "tests/unit/test_time_limits.py",
        "tests/unit/test_time_limit_on_any_thread.py",
        # The whole-call limit on a tool's waits on the network (interrupt_after): cut short, and only there.
        "tests/integration/test_whole_call_limits.py",
        "tests/integration/test_limits_interrupt_only_waiting.py",
        "tests/unit/test_tool_time_bounds.py",
        # Issue 34: the stop repeated until it is back, work left running in threads, where a tool was.
        "tests/integration/test_work_left_running.py",
        "tests/unit/test_crashes_explained_locally.py",
    ],
    "dispatch": [
        "tests/integration/test_post.py",
        # The refusals every project's endpoint makes: 400, 404, 413, and 422 naming the field.
        "median_lambda/contract/test_post.py",
        "tests/unit/test_post_refusal_texts.py",
        "tests/unit/test_answer_limits.py",
        "tests/unit/test_async_tools.py",
        "tests/unit/test_time_limits.py",
        # The paths through the idempotency table (the time kept for it), and tools that fail to import.
        "tests/integration/test_idempotency.py",
        "tests/unit/test_tool_loading.py",
        # What a body may hold before any tool runs: duplicates, constants, surrogates, depth, whole floats.
        "tests/unit/test_hostile_input.py",
        "tests/unit/test_nesting_depth.py",
        "tests/unit/test_whole_numbers.py",
        "tests/unit/test_time_limit_on_any_thread.py",
        # A tool's secrets, parameters and settings, handed in by the signature; and a crash's log and metric.
        "tests/unit/test_authoring.py",
        "tests/unit/test_settings.py",
        "tests/integration/test_tools_own_systems.py",
        "tests/unit/test_observability.py",
        "tests/unit/test_logs_hold_no_secrets.py",
        "tests/integration/test_post_without_the_table.py",
        "tests/integration/test_post_failures_said_and_logged.py",
        # The exception behind a ToolError: whether it counts, its log line, its words.
        "tests/integration/test_tool_error_causes.py",
        # Issues 30 and 31's paths, not yet measured as guards (docs/maintaining.md): a tool's own setup
        # crashing, one broken module among others, the one module a cold POST imports, calls cut short.
        "tests/integration/test_one_broken_tool.py",
        "tests/unit/test_tool_modules.py",
        "tests/integration/test_whole_call_limits.py",
        "tests/integration/test_limits_interrupt_only_waiting.py",
        # Issue 34's, likewise: work left running keeps the record, any exit is a crash, async work ends.
        "tests/integration/test_work_left_running.py",
        "tests/unit/test_any_exit_is_a_crash.py",
        "tests/unit/test_async_work_ends_with_its_call.py",
        "tests/unit/test_crashes_explained_locally.py",
    ],
    "idempotency": [
        "tests/integration/test_idempotency.py",
        # A retried callId answered from its record; a reused one refused.
        "median_lambda/contract/test_idempotency.py",
        "tests/integration/test_idempotency_faults.py",
        "tests/integration/test_retry_answer_sizes.py",
        "tests/integration/test_idempotency_answer_texts.py",
        "tests/integration/test_failed_save_with_no_deadline.py",
        "tests/integration/test_failed_save_with_no_time_left.py",
        "tests/unit/test_idempotency_off_is_said.py",
        # Which calls are one call: the identity a retry must match.
        "tests/unit/test_call_identity.py",
        "tests/integration/test_idempotency_record_lifetime.py",
    ],
}

# Where each module lives in median_lambda's rooms (docs/layout.md); its name above is what
# `make mutate MODULES=...` takes and what .mutmut/<module>/ is called.
SOURCES: dict[str, str] = {
    "signature": "median_lambda/request/signature.py",
    "whole_numbers": "median_lambda/calls/whole_numbers.py",
    "rules": "median_lambda/manifest/rules.py",
    "key": "median_lambda/key/source.py",
    "deadline": "median_lambda/calls/deadline.py",
    "dispatch": "median_lambda/calls/dispatch.py",
    "idempotency": "median_lambda/calls/idempotency.py",
}

# Tests that run the handler from a copy of it in a process of their own (a cold start's imports):
# mutmut's trampolines in that copy look for mutmut's settings where the copy is, and fail. What
# they hold (which modules a cold start imports) is no behaviour of the modules measured here.
# And tests whose Lambda has tenths of a second to spare beside the table's bounded requests: at
# the lowest priority on a shared machine, under mutmut's trampolines, a table request outlasts
# its bound and the unmutated code fails them. `make test` runs them all.
_FAULTS = "tests/integration/test_idempotency_faults.py::"
NOT_UNDER_MUTMUT = [
    "tests/integration/test_key_extension.py::test_a_cold_get_through_the_extension_imports_neither_boto3_nor_botocore",
    "tests/integration/test_idempotency.py::test_a_timeout_is_not_recorded_so_a_retry_runs_again",
    f"{_FAULTS}test_a_landed_in_progress_write_lapses_with_its_invocation_and_the_tool_then_runs_once",
    f"{_FAULTS}test_a_stalled_table_before_the_tool_is_answered_500_before_the_deadline",
    f"{_FAULTS}test_a_table_stalling_after_the_tool_is_answered_with_its_output_before_the_deadline",
    f"{_FAULTS}test_a_tool_overrunning_with_the_table_stalled_is_answered_504_before_the_deadline",
    f"{_FAULTS}test_a_function_with_too_little_time_for_the_table_answers_504_and_touches_nothing",
    f"{_FAULTS}test_a_table_that_never_accepts_the_connection_is_a_500_before_the_deadline",
]

# Outcomes as mutmut names them: a timeout or a type checker's refusal is a mutant noticed.
_KILLED = {"killed", "timeout", "caught by type check", "segfault"}
_RESULT_LINE = re.compile(r"^\s*(?P<name>\S+): (?P<status>.+)$")


@dataclass
class Equivalent:
    mutant: str
    change: str
    reason: str


@dataclass
class Tally:
    module: str
    measured: str = ""  # when, and on which code
    failed: bool = False
    mutants: int = 0
    killed: int = 0
    survived: list[str] = field(default_factory=list)
    equivalent: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    unused: list[str] = field(default_factory=list)  # entries whose mutant no longer survives, or no longer exists
    unchecked: int = 0  # a run stopped before its end leaves mutants mutmut has not tried

    @property
    def score(self) -> float:
        judged = self.mutants - self.unchecked - len(self.equivalent)
        return self.killed / judged if judged else 1.0


def load_equivalents() -> dict[str, Equivalent]:
    document = tomllib.loads(EQUIVALENTS.read_text(encoding="utf-8"))
    entries = [Equivalent(**entry) for entry in document.get("equivalent", [])]
    return {entry.mutant: entry for entry in entries}


def prepare(module: str) -> Path:
    """A fresh copy of the checkout's tracked files (as they are on disk), configured for this module."""
    workdir = WORK / module
    shutil.rmtree(workdir, ignore_errors=True)
    tracked = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],  # noqa: S607
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    tops: set[str] = set()
    for name in filter(None, tracked.split("\0")):
        source = ROOT / name
        if not source.is_file() or name.startswith(".mutmut/"):
            continue
        if name.startswith(LIBRARY_PACKAGE):
            name = name.removeprefix("median-lambda/src/")
        target = workdir / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
        tops.add(name.split("/", 1)[0])
    (workdir / ".venv").symlink_to(ROOT / ".venv")
    missing = [path for path in GUARDS[module] if not (workdir / path).is_file()]
    if missing:
        raise SystemExit(f"The tests named to guard {module} are missing: {', '.join(missing)}")
    also_copy = sorted(tops - {"median_lambda", "tests", "pyproject.toml"})
    pytest_arguments = ["-p", "no:cacheprovider", "-q", "-x", *(f"--deselect={test}" for test in NOT_UNDER_MUTMUT)]
    # A JSON array of strings is a TOML array as it stands.
    settings = "\n".join(
        [
            "",
            "[tool.mutmut]",
            'source_paths = ["median_lambda"]',
            f"only_mutate = {json.dumps([SOURCES[module]])}",
            f"also_copy = {json.dumps(also_copy)}",
            f"pytest_add_cli_args_test_selection = {json.dumps(GUARDS[module])}",
            f"pytest_add_cli_args = {json.dumps(pytest_arguments)}",
            # Git's view of what changed would be this copy's, which has no history.
            "use_git_change_detection = false",
            "",
        ]
    )
    with (workdir / "pyproject.toml").open("a", encoding="utf-8") as pyproject:
        pyproject.write(settings)
    now = datetime.datetime.now(tz=datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    (workdir / "measured.txt").write_text(f"{now}, on {measured_code()}\n", encoding="utf-8")
    return workdir


def mutmut(workdir: Path, *arguments: str, output: TextIO | None = None) -> str:
    """mutmut, from this interpreter's environment, run in the module's copy."""
    finished = subprocess.run(  # noqa: S603 - mutmut beside this interpreter, with our own arguments
        [str(Path(sys.executable).parent / "mutmut"), *arguments],
        cwd=workdir,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        stdout=output or subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    if finished.returncode != 0:
        if output is not None:
            output.flush()
            sys.stderr.write(Path(output.name).read_text(encoding="utf-8", errors="replace")[-4000:])
        else:
            sys.stderr.write(finished.stdout[-4000:])
        raise SystemExit(f"mutmut {arguments[0]} failed in {workdir} (exit {finished.returncode})")
    return finished.stdout or ""


def added_lines(diff: str) -> str:
    return "\n".join(
        line[1:].strip() for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")
    )


def measure(module: str, equivalents: dict[str, Equivalent], *, run: bool = True) -> Tally:
    """Run mutmut on the module (unless `run` is false: then read its last run) and count the outcomes."""
    workdir = prepare(module) if run else WORK / module
    if run:
        print(f"--- {module}: mutmut run against {' '.join(GUARDS[module])}", flush=True)
        # One worker: the machine this runs on is shared, and mutants of one module are few.
        with (workdir / "mutmut-run.log").open("w", encoding="utf-8") as log:
            try:
                mutmut(workdir, "run", "--max-children", "1", output=log)
            except SystemExit as failure:
                print(failure, file=sys.stderr)
                return Tally(module, _measured(workdir), failed=True)
    tally = Tally(module, _measured(workdir))
    for line in mutmut(workdir, "results", "--all", "true").splitlines():
        matched = _RESULT_LINE.match(line)
        if not matched:
            continue
        name, status = matched["name"], matched["status"].strip()
        tally.mutants += 1
        if status == "not checked":
            tally.unchecked += 1
            continue
        if status in _KILLED:
            tally.killed += 1
            continue
        entry = equivalents.get(name)
        if entry is not None and status == "survived":
            if entry.change.strip() in added_lines(mutmut(workdir, "show", name)):
                tally.equivalent.append(name)
                continue
            tally.stale.append(name)
        tally.survived.append(f"{name} ({status})")
    if not tally.unchecked:  # an untried mutant's entry is not yet known to be unused
        namespace = SOURCES[module].removesuffix(".py").replace("/", ".") + "."
        judged = {*tally.equivalent, *tally.stale}
        tally.unused = [name for name in equivalents if name.startswith(namespace) and name not in judged]
    return tally


def _measured(workdir: Path) -> str:
    stamp = workdir / "measured.txt"
    return stamp.read_text(encoding="utf-8").strip() if stamp.is_file() else "unknown"


def measured_code() -> str:
    """The commit measured, and whether the checkout held changes beyond it."""

    def git(*arguments: str) -> str:
        return subprocess.run(["git", *arguments], cwd=ROOT, capture_output=True, text=True, check=False).stdout  # noqa: S603, S607

    commit = git("rev-parse", "--short", "HEAD").strip() or "unknown"
    return f"{commit} with uncommitted changes" if git("status", "--porcelain").strip() else commit


def table(tallies: list[Tally]) -> str:
    lines = [
        f"mutmut {version('mutmut')}, at least {REQUIRED_SCORE:.0%} killed of the mutants not judged equivalent",
        "",
        "| module | mutants | killed | survived | judged equivalent | killed of the rest | measured |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for tally in tallies:
        if tally.failed:
            lines.append(f"| {SOURCES[tally.module]} | mutmut failed: .mutmut/{tally.module}/mutmut-run.log |||||")
            continue
        partial = f" (run stopped with {tally.unchecked} not tried)" if tally.unchecked else ""
        lines.append(
            f"| {SOURCES[tally.module]} | {tally.mutants} | {tally.killed} | {len(tally.survived)} "
            f"| {len(tally.equivalent)} | {tally.score:.1%} | {tally.measured}{partial} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", choices=[*GUARDS, []], metavar="MODULE", help=", ".join(GUARDS))
    parser.add_argument(
        "--no-run", action="store_true", help="tally the modules' last runs in .mutmut/ again (after judging one)"
    )
    arguments = parser.parse_args()
    modules = arguments.modules or list(GUARDS)
    equivalents = load_equivalents()
    tallies = [measure(module, equivalents, run=not arguments.no_run) for module in modules]
    report = table(tallies)
    for tally in tallies:
        if tally.survived:
            report += f"\nSurvived in {SOURCES[tally.module]} (see: cd .mutmut/{tally.module} && mutmut show NAME):\n"
            report += "".join(f"  {name}\n" for name in tally.survived)
        if tally.stale:
            report += f"\nStale entries in {EQUIVALENTS.name} (the line changed; judge them again):\n"
            report += "".join(f"  {name}\n" for name in tally.stale)
        if tally.unused:
            report += f"\nUnused entries in {EQUIVALENTS.name} (killed now, or gone from the code; remove them):\n"
            report += "".join(f"  {name}\n" for name in tally.unused)
    WORK.mkdir(exist_ok=True)
    (WORK / "table.md").write_text(report, encoding="utf-8")
    print(report)
    below = [tally.module for tally in tallies if tally.failed or tally.unchecked or tally.score < REQUIRED_SCORE]
    if below:
        print(f"Below {REQUIRED_SCORE:.0%} killed: {', '.join(below)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
