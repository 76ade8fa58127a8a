"""The project's configuration, held to what AWS and GitHub will do with it: `median validate` and
`median lint-workflows`, each with the linters median-lambda pins (median_lambda.project.tool_venv), offline.

`validate` checks template.yaml (and pipeline/oidc-role.yaml, the GitHub pipeline's role):

- the template check (median_lambda.cli.template_check): what CloudFormation would accept but deploy
  wrong, or refuse only mid-deploy (a version left stale, Lambda's 256-character and 4 KB limits);
- `sam validate --lint`: SAM's transform, then cfn-lint, whose warnings fail as errors do;
- AWS Labs' serverless rules for cfn-lint (cfn-lint-serverless, in the SAM CLI's venv): an error
  (E, ES) fails, a warning (W, WS) is printed. The template silences the rules that do not
  apply to it, each with its reason, in Metadata;
- Checkov's bundled checks, offline (no platform, no mapping download, no update check), on the
  templates and .github/: any failed check fails. It reads SAM resources as written, before the
  transform, so the roles are written out in template.yaml, where it sees them; a check that does
  not apply is skipped beside its resource, in Metadata, with the reason. A file Checkov cannot
  parse only counts as a "parsing error" with exit 0, so that fails here too (a broken workflow
  it skips without a word: lint-workflows fails on it).

`lint-workflows` checks .github/ as GitHub would read it (its workflow and Dependabot schemas,
check-jsonschema) and as zizmor audits it (pinning, permissions, injection, Dependabot's cooldown).

Every check runs, even after one fails, so one run names everything to fix; the last line says
which failed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from median_lambda.project.tool_venv import CHECKOV, SAM_CLI, WORKFLOW_LINT

if TYPE_CHECKING:
    import argparse

TEMPLATE = Path("template.yaml")
PIPELINE_ROLE = Path("pipeline") / "oidc-role.yaml"
GITHUB = Path(".github")
# Offline: no platform, no download of its mapping, no check for a newer Checkov.
CHECKOV_ENVIRONMENT = {"CKV_SKIP_PACKAGE_UPDATE_CHECK": "true", "BC_SKIP_MAPPING": "TRUE"}
CHECKOV_FLAGS = ("--skip-download", "--quiet", "--compact")
# What Checkov prints, exit 0 all the same, for a file it could not read.
PARSING_ERRORS = "Parsing errors"

# A check: what it is called in the output, and what runs it, to its exit code.
Step = tuple[str, Callable[[], int]]


def _tool(name: str, program: str, *arguments: str) -> Callable[[], int]:
    def step() -> int:
        from median_lambda.project.tool_venv import run

        return run(name, program, *arguments)

    return step


def _checkov(*arguments: str) -> Callable[[], int]:
    def step() -> int:
        from median_lambda.project.tool_venv import executable

        scan = subprocess.run(  # noqa: S603 - the pinned Checkov, with arguments of our own
            [executable(CHECKOV, CHECKOV), *arguments, *CHECKOV_FLAGS],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            check=False,
            env={**os.environ, **CHECKOV_ENVIRONMENT},
        )
        print(scan.stdout, end="", flush=True)
        if PARSING_ERRORS in scan.stdout:
            print("Checkov could not read a file above, so it checked nothing in it: fix the file's YAML.")
            return scan.returncode or 1
        return scan.returncode

    return step


def _template_check() -> int:
    from median_lambda.cli.template_check import main

    return main([])


def run_steps(command: str, steps: list[Step]) -> int:
    """Run every step, saying each; 0 if all passed, else 1 after a line naming each that failed."""
    failed = []
    for label, step in steps:
        print(f"{command}: {label}", flush=True)
        if step() != 0:
            failed.append(label)
    if failed:
        print(f"{command}: {len(failed)} of {len(steps)} checks failed: {'; '.join(failed)}", file=sys.stderr)
        return 1
    print(f"{command}: OK, {len(steps)} checks passed")
    return 0


def validate_steps() -> list[Step]:
    templates = [path for path in (TEMPLATE, PIPELINE_ROLE) if path.is_file()]
    steps: list[Step] = [("the template check (versions, Lambda's limits, samconfig.toml)", _template_check)]
    for template in templates:
        label = "sam validate --lint" + ("" if template == TEMPLATE else f" --template {template}")
        steps.append((label, _tool(SAM_CLI, "sam", "validate", "--lint", "--template", str(template))))
    rules = ("--append-rules", "cfn_lint_serverless.rules", "--non-zero-exit-code", "error")
    steps.append((f"cfn-lint {TEMPLATE} (serverless rules)", _tool(SAM_CLI, "cfn-lint", str(TEMPLATE), *rules)))
    files = [flag for template in templates for flag in ("-f", str(template))]
    steps.append(("checkov on the templates", _checkov("--framework", "cloudformation", "secrets", *files)))
    if GITHUB.is_dir():
        steps.append(("checkov on .github/", _checkov("--framework", "github_actions", "secrets", "-d", str(GITHUB))))
    return steps


def command_validate(arguments: argparse.Namespace) -> int:
    """sam validate --lint, serverless rules, Checkov; a version left stale, Lambda's 256-char and 4 KB limits."""
    return run_steps("validate", validate_steps())


def command_lint_workflows(arguments: argparse.Namespace) -> int:
    """Check .github/: GitHub's schemas (check-jsonschema) and zizmor's audits, offline."""
    workflows = sorted(str(path) for path in (GITHUB / "workflows").glob("*.y*ml"))
    if not GITHUB.is_dir():
        print("lint-workflows: there is no .github/ here, so nothing to check")
        return 0
    steps: list[Step] = []
    if workflows:
        schema = ("--builtin-schema", "vendor.github-workflows", *workflows)
        steps.append(("GitHub's workflow schema", _tool(WORKFLOW_LINT, "check-jsonschema", *schema)))
    dependabot = GITHUB / "dependabot.yml"
    if dependabot.is_file():
        schema = ("--builtin-schema", "vendor.dependabot", str(dependabot))
        steps.append(("Dependabot's schema", _tool(WORKFLOW_LINT, "check-jsonschema", *schema)))
    steps.append(("zizmor's audits", _tool(WORKFLOW_LINT, "zizmor", "--offline", str(GITHUB))))
    return run_steps("lint-workflows", steps)
