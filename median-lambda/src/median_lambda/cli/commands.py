"""`median`, the project's commands: the command line and which module runs each command, nothing more.

The work lives in the modules each command names: checks (check, manifest, stages), requests
(sign, call, event, local-env), scaffold (new-tool), tool_tests, artifact (build, build-artifact,
check-artifact), validate (validate, lint-workflows), local (sam local), deploy (deploy, delete)
and smoke_check here; the dev server, and median_lambda.project's locks, audit, tool venvs,
upgrade and examples. Each is imported only when its command runs, so `median --help` and a quick
`median sign` load none of the rest. The Makefile's targets are these commands.

Exit codes: 0 done, 1 the command ran and what it checks or asks for failed (a sync rule broken, a
call answered with an error or not at all, a check that failed), 2 the command was used wrongly.
A key is read from the environment or a file, never from an argument, where it would land in
shell history and in `ps`: an argument that looks like one is refused before anything runs.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from median_lambda.cli.arguments import BadArguments, QuietParser, parse_quietly
from median_lambda.cli.errors import Failed, UsageError
from median_lambda.cli.requests import CALL_TIMEOUT_SECONDS, KEY_ENV, KEY_FILE_HELP
from median_lambda.project.lock import LockError
from median_lambda.project.tool_venv import TOOLS, ToolVenvError
from median_lambda.runtime.env import library_version

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

PROG = "median"
# `median --help`: each group, and its commands in the order a newcomer meets them.
GROUPS = (
    ("Write and try your tools", ("serve", "new-tool", "test-tools", "check", "manifest", "stages", "tool-modules")),
    ("Call an endpoint", ("call", "sign", "event", "local-env")),
    ("Build and deploy", ("build", "validate", "deploy", "delete", "check-artifact", "smoke-check")),
    (
        "The function in Lambda's container, with sam local (needs Docker)",
        ("local invoke", "local start-api", "local check"),
    ),
    ("The project", ("lock", "audit", "upgrade", "lint-workflows", "remove-examples", "tool-venv")),
    ("Run by sam build", ("build-artifact",)),
)


# --- Each command's runner: the module that does the work, imported when the command runs. -----
def _serve(arguments: argparse.Namespace) -> int:
    from median_lambda.devserver.__main__ import main

    # The dev server reads them as make passes them; an option given here wins.
    for variable, value in (("PORT", arguments.port), ("LOCAL_AWS", arguments.local_aws)):
        if value is not None:
            os.environ[variable] = value
    return main()


def _new_tool(arguments: argparse.Namespace) -> int:
    from median_lambda.cli.scaffold import command_new_tool

    return command_new_tool(arguments)


def _test_tools(arguments: argparse.Namespace) -> int:
    from median_lambda.cli.tool_tests import command_test_tools

    return command_test_tools(arguments)


def _check(arguments: argparse.Namespace) -> int:
    from median_lambda.cli.checks import command_check

    return command_check(arguments)


def _manifest(arguments: argparse.Namespace) -> int:
    from median_lambda.cli.checks import command_manifest

    return command_manifest(arguments)


def _stages(arguments: argparse.Namespace) -> int:
    from median_lambda.cli.checks import command_stages

    return command_stages(arguments)


def _tool_modules(arguments: argparse.Namespace) -> int:
    from median_lambda.cli.checks import command_tool_modules

    return command_tool_modules(arguments)


def _call(arguments: argparse.Namespace) -> int:
    from median_lambda.cli.requests import command_call

    return command_call(arguments)


def _sign(arguments: argparse.Namespace) -> int:
    from median_lambda.cli.requests import command_sign

    return command_sign(arguments)


def _event(arguments: argparse.Namespace) -> int:
    from median_lambda.cli.requests import command_event

    return command_event(arguments)


def _local_env(arguments: argparse.Namespace) -> int:
    from median_lambda.cli.requests import command_local_env

    return command_local_env(arguments)


def _build(arguments: argparse.Namespace) -> int:
    from median_lambda.cli.artifact import command_build

    return command_build(arguments)


def _build_artifact(arguments: argparse.Namespace) -> int:
    from median_lambda.cli.artifact import command_build_artifact

    return command_build_artifact(arguments)


def _check_artifact(arguments: argparse.Namespace) -> int:
    from median_lambda.cli.artifact import command_check_artifact

    return command_check_artifact(arguments)


def _validate(arguments: argparse.Namespace) -> int:
    from median_lambda.cli.validate import command_validate

    return command_validate(arguments)


def _lint_workflows(arguments: argparse.Namespace) -> int:
    from median_lambda.cli.validate import command_lint_workflows

    return command_lint_workflows(arguments)


def _deploy(arguments: argparse.Namespace) -> int:
    from median_lambda.cli.deploy import command_deploy

    return command_deploy(arguments)


def _delete(arguments: argparse.Namespace) -> int:
    from median_lambda.cli.deploy import command_delete

    return command_delete(arguments)


def _smoke_check(arguments: argparse.Namespace) -> int:
    from median_lambda.cli.smoke_check import command_smoke_check

    return command_smoke_check(arguments)


def _local_invoke(arguments: argparse.Namespace) -> int:
    from median_lambda.cli.local import command_invoke

    return command_invoke(arguments)


def _local_start_api(arguments: argparse.Namespace) -> int:
    from median_lambda.cli.local import command_start_api

    return command_start_api(arguments)


def _local_check(arguments: argparse.Namespace) -> int:
    from median_lambda.cli.local import command_check

    return command_check(arguments)


def _lock(arguments: argparse.Namespace) -> int:
    from median_lambda.project.lock import library_disagreement, lock, stale_lock_problem

    if arguments.check:
        problems = [problem for problem in (stale_lock_problem(), library_disagreement()) if problem]
        if problems:
            raise Failed("\n".join(problems))
        return 0
    lock(arguments.upgrade)
    return 0


def _audit(arguments: argparse.Namespace) -> int:
    from median_lambda.project.audit import audit

    return audit(arguments.service_url)


def _upgrade(arguments: argparse.Namespace) -> int:
    from median_lambda.project.tool_venv import COPIER, installed
    from median_lambda.project.upgrade import main

    installed(COPIER)
    source = ["--source", arguments.source] if arguments.source else []
    return main([*([arguments.version] if arguments.version else []), *source])


def _remove_examples(arguments: argparse.Namespace) -> int:
    from median_lambda.project.examples import ChangedExamples, main

    try:
        return main(files=True)
    except ChangedExamples as error:
        raise Failed(str(error)) from None


def _tool_venv(arguments: argparse.Namespace) -> int:
    from median_lambda.project.tool_venv import installed

    print(installed(arguments.name))
    return 0


# --- The command line ---------------------------------------------------------------------
class _Commands:
    """Adds each command with abbreviations refused and its one-line summary kept for `median --help`."""

    def __init__(self, subparsers: argparse._SubParsersAction[QuietParser]) -> None:
        self._subparsers = subparsers
        self.summaries: dict[str, str] = {}

    def add(self, name: str, run: Callable[[argparse.Namespace], int], summary: str, **options: Any) -> QuietParser:
        self.summaries[name] = summary
        command = self._subparsers.add_parser(name, allow_abbrev=False, help=summary, description=summary, **options)
        command.set_defaults(run=run)
        return command


def _request_arguments(command: argparse.ArgumentParser) -> None:
    what = command.add_mutually_exclusive_group()
    what.add_argument("--tool", help="the tool to call (without it: a GET for the manifest)")
    what.add_argument("--diagnostics", action="store_true", help="the diagnostics operation")
    command.add_argument("--input", help="the tool's input, a JSON object (default: {})")


def _overview(summaries: dict[str, str]) -> str:
    width = max(len(name) for name in summaries) + 2
    lines = []
    for title, names in GROUPS:
        lines += [f"{title}:", *(f"  {name.ljust(width)}{summaries[name]}" for name in names), ""]
    return "\n".join([*lines, f"`{PROG} COMMAND --help` says what a command takes. The Makefile runs each one."])


def parser() -> QuietParser:
    # No abbreviations: `--key SECRET` must not pass as `--key-file SECRET` and echo the key back.
    root = QuietParser(
        prog=PROG,
        usage=f"{PROG} [-h] [--version] COMMAND ...",
        description="Serve your own tools to Median from one AWS Lambda function: this project's commands.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    root.add_argument(
        "--version",
        action="version",
        version=f"median-lambda {library_version()}",
        help="print median-lambda's version (its CHANGELOG.md says what each changed) and exit",
    )
    subparsers = root.add_subparsers(
        dest="command", required=True, metavar="COMMAND", help=argparse.SUPPRESS, prog=PROG
    )
    commands = _Commands(subparsers)

    serve = commands.add("serve", _serve, "Serve the endpoint and the inspector on http://127.0.0.1:3000, dev key")
    serve.add_argument("--port", help="the port (default: $PORT, else 3000)")
    serve.add_argument("--local-aws", metavar="moto", help="moto's server stands in for AWS (default: $LOCAL_AWS)")
    new_tool = commands.add("new-tool", _new_tool, "Write tools/NAME.py, a working tool, and its tests")
    new_tool.add_argument("name", metavar="NAME", help="the module's name in snake_case, like loyalty_points")
    commands.add("test-tools", _test_tools, "Run only your tools' tests, tests/tools/ (make test runs everything)")
    check = commands.add("check", _check, "Check the tools against Median's sync rules and every stage's settings")
    check.add_argument(
        "--also",
        nargs="+",
        default=[],
        metavar="SOURCE",
        help="the organisation's other endpoints: saved manifest files, or endpoint URLs (a signed GET)",
    )
    check.add_argument("--key-file", help=f"for --also URLs: {KEY_FILE_HELP}")
    check.add_argument(
        "--no-local",
        action="store_true",
        help="leave this machine's tools/settings.local.toml, MEDIAN_STAGE and overrides out (the build does)",
    )
    check.add_argument("--stage", help="check only this stage, as a deploy of it would run (the deploy's preflight)")
    manifest = commands.add("manifest", _manifest, "Print the manifest as GET serves it")
    manifest.add_argument("--pretty", action="store_true", help="indent the JSON")
    commands.add("stages", _stages, "Print the stages a function may run as: default and settings.toml's tables")
    commands.add("tool-modules", _tool_modules, "Print which module of tools/ holds each tool, as the build writes it")

    calling = commands.add("call", _call, "Send a signed GET, tool call or diagnostics to URL; print the answer")
    calling.add_argument("url", help="the endpoint, e.g. http://127.0.0.1:3000/ (make serve) or the deployed URL")
    _request_arguments(calling)
    calling.add_argument("--call-id", help="the callId of a tool call (default: none)")
    calling.add_argument("--key-file", help=KEY_FILE_HELP)
    calling.add_argument("--timeout", type=float, default=CALL_TIMEOUT_SECONDS, help="seconds to wait for the answer")
    signing = commands.add("sign", _sign, "Print a median-signature header value for a body signed now")
    signing.add_argument("--body", default="", help="the exact body to sign (empty for a GET); - reads stdin")
    signing.add_argument("--key-file", help=KEY_FILE_HELP)
    event = commands.add("event", _event, "Write a signed API Gateway event for sam local invoke; print its path")
    _request_arguments(event)
    event.add_argument("--output", help="where to write it (default: events/<tool>.json, or get.json)")
    local_env = commands.add("local-env", _local_env, "Write sam local's --env-vars file: your settings, the dev key")
    local_env.add_argument("--output", default="events/env.json", help="where to write it (default: events/env.json)")
    local_env.add_argument("--template", help="the SAM template whose variables to fill (default: template.yaml)")

    commands.add("build", _build, "sam build: the artifact in .aws-sam/build (no Docker, no AWS account)")
    commands.add("validate", _validate, "sam validate --lint, serverless rules, Checkov, and the template's limits")
    deploy = commands.add(
        "deploy", _deploy, "The preflight (asks once what samconfig.toml lacks), sam build, then sam deploy"
    )
    deploy.add_argument("--preflight", action="store_true", help="only the preflight; print sam deploy's flags")
    deploy.add_argument("--config-file", help="samconfig.toml to read (default: samconfig.toml)")
    deploy.add_argument("--config-env", default="default", help="its environment, as sam's --config-env")
    delete = commands.add("delete", _delete, "sam delete: the deployed stack (the key's secret stays)")
    delete.add_argument("--config-file", help="samconfig.toml to read (default: samconfig.toml)")
    delete.add_argument("--config-env", default="default", help="its environment, as sam's --config-env")
    check_artifact = commands.add("check-artifact", _check_artifact, "Check what sam build made before it deploys")
    check_artifact.add_argument("directory", nargs="?", metavar="DIR", help=".aws-sam/build/MedianToolsFunction")
    smoke = commands.add("smoke-check", _smoke_check, "Is the deployed endpoint live, and reading its key?")
    source = smoke.add_mutually_exclusive_group(required=True)
    source.add_argument("url", nargs="?", help="the endpoint's URL")
    source.add_argument("--stack-outputs", type=Path, help="a file of `sam list stack-outputs --output json`")

    _local_commands(commands)

    lock = commands.add("lock", _lock, "Lock pyproject.toml's dependencies in uv.lock, or --check it matches")
    lock.add_argument(
        "--check", action="store_true", help="only say whether uv.lock matches pyproject.toml and the template version"
    )
    lock.add_argument(
        "--upgrade",
        action="append",
        default=[],
        metavar="PACKAGE",
        help="move this package to its newest allowed version (again for more; `all`: every package)",
    )
    audit = commands.add("audit", _audit, "Audit every locked version against known vulnerabilities (OSV)")
    audit.add_argument("--service-url", help="an OSV-compatible server (default https://api.osv.dev)")
    upgrade = commands.add("upgrade", _upgrade, "Take a later version of the template and library, then check")
    upgrade.add_argument("version", nargs="?", metavar="VERSION", help="a tag such as v3.1.0 (default: the newest)")
    upgrade.add_argument("--source", help="the template's place: a fork's URL or a local checkout's path")
    commands.add("lint-workflows", _lint_workflows, "Check .github/: GitHub's schemas and zizmor's audits, offline")
    commands.add(
        "remove-examples",
        _remove_examples,
        "Delete the example tools, their tests and their blocks; keep them out of later upgrades",
    )
    tool_venv = commands.add("tool-venv", _tool_venv, "Install a developer tool's venv as median-lambda pins it")
    tool_venv.add_argument("name", metavar="NAME", choices=tuple(TOOLS), help=", ".join(TOOLS))

    build_artifact = commands.add(
        "build-artifact", _build_artifact, "Build the function's artifact into DIR (sam build runs it)"
    )
    build_artifact.add_argument("directory", metavar="DIR", help="sam build's $ARTIFACTS_DIR")
    root.epilog = _overview(commands.summaries)
    return root


def _local_commands(commands: _Commands) -> None:
    from median_lambda.cli.local import START_API_PORT, add_local_options, start_api_port

    local = commands.add("local", _local_check, "sam local: invoke, start-api, or check both")
    del commands.summaries["local"]  # its three commands are listed instead
    group = local.add_subparsers(dest="local_command", required=True, metavar="COMMAND", prog=f"{PROG} local")
    local_commands = _Commands(group)
    invoke = local_commands.add("invoke", _local_invoke, "sam local invoke with a freshly signed event, or a GET")
    _request_arguments(invoke)
    add_local_options(invoke)
    start_api = local_commands.add("start-api", _local_start_api, "sam local start-api on :3001, with the dev key")
    add_local_options(start_api)
    start_api.add_argument(
        "--port", type=int, default=start_api_port(), help=f"the port (default: $PORT, else {START_API_PORT})"
    )
    local_commands.add("check", _local_check, "make invoke, then make start-api and make call: the contract's answers")
    commands.summaries.update({f"local {name}": summary for name, summary in local_commands.summaries.items()})


def _refuse_key_arguments(argv: Sequence[str]) -> None:
    """Stop before argparse, and say where a key goes instead."""
    from median_lambda.cli.arguments import is_key_option

    if any(is_key_option(argument) for argument in argv):
        raise UsageError(
            "a key is never taken as an argument, where shell history, ps and a CI log would keep it: "
            f"set ${KEY_ENV}, or pass --key-file where a command takes one"
        )


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # The project's folder on the import path, as `python -m median_lambda` has it: every command runs
    # in the project's root, and its tools/ package is imported from there (.venv/bin/median has not).
    here = str(Path.cwd())
    if "" not in sys.path and here not in sys.path:
        sys.path.insert(0, here)
    try:
        _refuse_key_arguments(argv)
        try:
            arguments = parse_quietly(parser(), argv)
        except BadArguments as bad:
            print(bad, file=sys.stderr)
            return 2
        return int(arguments.run(arguments))
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (Failed, LockError, ToolVenvError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
