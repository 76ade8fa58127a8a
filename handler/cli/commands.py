"""The command-line tools for the Median protocol: `sign`, `call`, `event`, `local-env`, `check`, `manifest`,
`stages` and `tool-modules` (what the build writes beside the manifest), and `new-tool`, which writes a
tool and its tests to start from.

Exit codes: 0 done, 1 the tools break a sync rule or a call was answered with an error
(or not at all), 2 the command was used wrongly. A key is read from the environment or
a file, never from an argument, where it would land in shell history and in `ps`.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from handler.cli.arguments import BadArguments, QuietParser, parse_quietly
from handler.runtime.env import template_version

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from pathlib import Path

    from handler.authoring.registry import Registry
    from handler.authoring.settings import Shown
    from handler.cli.organisation import Endpoint
    from handler.manifest.rules import Problem

KEY_ENV = "MEDIAN_KEY"
EVENTS_DIR = "events"
# What `sam local invoke --env-vars` reads; "Parameters" applies it to every function.
LOCAL_ENV_FILE = f"{EVENTS_DIR}/env.json"
FUNCTION_LOGICAL_ID = "MedianToolsFunction"  # template.yaml's function, as sam local names it
USER_AGENT = "median-tools-cli"
INPUT_EXAMPLE = """'{"orderNumber":"ORD-1042"}'"""
KEY_FILE_HELP = f"a file holding the key (default: ${KEY_ENV}, then make serve's dev key)"
CALL_TIMEOUT_SECONDS = 35.0  # API Gateway gives up after 30 s: wait a little longer than it does


class UsageError(Exception):
    pass


class CallFailed(Exception):
    """The endpoint could not be reached or did not answer in time."""


def dev_key() -> str:
    """$MEDIAN_DEV_KEY, else the clone's dev key file (made if missing): what make serve and sam local verify with."""
    from handler.key.local_key import DevKeyUnavailable
    from handler.key.local_key import dev_key as local_dev_key

    try:
        return local_dev_key()
    except DevKeyUnavailable as error:
        raise UsageError(str(error)) from None


def read_key(key_file: str | None) -> tuple[str, bool]:
    """The key from --key-file, else $MEDIAN_KEY, else the dev key; and whether it is the dev key."""
    import os
    from pathlib import Path

    if key_file:
        try:
            key = Path(key_file).read_text(encoding="utf-8").strip()
        except OSError as error:
            raise UsageError(f"cannot read the key file {key_file}: {error.strerror}") from None
        if not key:
            raise UsageError(f"the key file {key_file} is empty")
        return key, False
    key = os.environ.get(KEY_ENV, "").strip()
    return (key, False) if key else (dev_key(), True)


def command_sign(arguments: argparse.Namespace) -> int:
    """Print a median-signature header value for a body (empty for a GET) signed now."""
    from handler.request.signature import sign

    body = sys.stdin.buffer.read() if arguments.body == "-" else arguments.body.encode("utf-8")
    print(sign(read_key(arguments.key_file)[0], body))
    return 0


def request_of(arguments: argparse.Namespace) -> tuple[str, bytes]:
    """The method and body that --tool/--input/--diagnostics ask for: a GET when none is given."""
    from handler.testing import call_body, diagnostics_body

    if arguments.input is not None and not arguments.tool:
        raise UsageError("--input goes with --tool: name the tool to call")
    if arguments.diagnostics:
        return "POST", diagnostics_body()
    if not arguments.tool:
        return "GET", b""
    try:
        tool_input = json.loads(arguments.input or "{}")
    except ValueError as error:
        raise UsageError(f"--input is not JSON ({error}); give an object, like {INPUT_EXAMPLE}") from None
    if not isinstance(tool_input, dict):
        raise UsageError(f"--input must be a JSON object, like {INPUT_EXAMPLE}")
    members = {"callId": arguments.call_id} if getattr(arguments, "call_id", None) else {}
    return "POST", call_body(arguments.tool, tool_input, **members)


def _write_json(path: Path, document: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def command_event(arguments: argparse.Namespace) -> int:
    """Write a freshly signed API Gateway HTTP API (payload 2.0) event for sam local invoke; print its path.

    Signed with the dev key (never $MEDIAN_KEY), so no real key is ever written to disk.
    """
    from pathlib import Path

    from handler.testing import signed_event

    method, body = request_of(arguments)
    name = "diagnostics" if arguments.diagnostics else arguments.tool or "get"
    path = Path(arguments.output or f"{EVENTS_DIR}/{name}.json")
    _write_json(path, signed_event(method, body, key=dev_key()))
    print(path)
    return 0


def command_local_env(arguments: argparse.Namespace) -> int:
    """Write the --env-vars file for sam local: your configuration, the dev key, no secret, no idempotency table.

    Each MEDIAN_SETTING_<NAME> template.yaml declares gets NAME's value as `make serve` would see it
    (its override in the environment, tools/settings.local.toml, then tools/settings.toml for the
    stage), and MEDIAN_STAGE the local stage. sam local sets only the variables the template
    declares: a local value whose override is not declared cannot reach it, and is named on
    stderr with the fix. A stage that names no table of settings.toml stops it (exit 2).
    """
    from pathlib import Path

    from handler.authoring import settings
    from handler.key.local_key import write_private
    from handler.protocol import DEV_KEY_ENV, IDEMPOTENCY_TABLE_ENV, KEY_SECRET_ENV

    declared = template_variables(arguments.template)
    try:
        refused = settings.this_stage_problem()
        if refused is not None:
            raise UsageError(f"{refused}: sam local would refuse every request as this stage")
        overrides = [name for name in declared if name.startswith(settings.OVERRIDE_PREFIX)]
        configured = {
            name: found
            for name in overrides
            if (found := settings.value(name.removeprefix(settings.OVERRIDE_PREFIX))) is not None
        }
        local = settings.local_values()
    except settings.ConfigurationError as error:
        raise UsageError(str(error)) from None
    # The framework's own, whatever the files say: the dev key, no key secret, no idempotency table.
    fixed = {DEV_KEY_ENV: dev_key(), KEY_SECRET_ENV: "", IDEMPOTENCY_TABLE_ENV: ""}
    fixed[settings.STAGE_ENV] = settings.stage()
    path = Path(arguments.output)
    document = {"Parameters": {**configured, **fixed}}
    try:
        write_private(path, json.dumps(document, indent=2) + "\n")  # it holds the dev key: 0600
    except OSError as error:
        raise UsageError(f"cannot write {path}: {error.strerror}") from None
    print(path)
    unreachable = sorted(name for name in local if settings.override_of(name) not in declared)
    if unreachable:
        print(
            f"note: sam local sets only the variables template.yaml declares, so {', '.join(unreachable)} from "
            f"{settings.LOCAL_SETTINGS_FILE} will not reach the function under `make invoke` or `make start-api` "
            "(make serve sees them). To pass one, declare its override in the function's Environment.Variables "
            f'with an empty value ({settings.override_of(unreachable[0])}: ""): a deployed function then still '
            "reads tools/settings.toml (docs/configuration.md).",
            file=sys.stderr,
        )
    return 0


def template_variables(template_file: str | None = None) -> list[str]:
    """The environment variables the template (template.yaml by default) declares for the function, Globals' too."""
    # The workspace's template, read by this local command only, with the workspace's own reader:
    # scripts/ is never in the artifact, and by name keeps it outside mypy's strict package.
    import importlib
    from pathlib import Path

    check_template = importlib.import_module("scripts.check_template")
    sam_settings = importlib.import_module("scripts.sam_settings")
    path = Path(template_file) if template_file else sam_settings.TEMPLATE
    template = check_template.Template(sam_settings.load_template(path), {})
    environment = check_template.function_properties(template, FUNCTION_LOGICAL_ID).get("Environment", {})
    return [str(name) for name in environment.get("Variables", {})]


def _is_loopback(host: str | None) -> bool:
    return host in ("localhost", "::1") or (host or "").startswith("127.")


def signed_request(
    url: str, method: str, body: bytes, key_file: str | None, timeout: float, *, what: str | None = None
) -> tuple[int, str, bytes]:
    """Send `body` to `url`, signed with the key (read_key), and return the status, reason and body.

    Raises UsageError for a URL that is not http(s), and CallFailed, saying `what` got no answer
    (by default the method and URL), when no answer comes or the answer redirects to another
    origin (handler.cli.same_origin): the signature is sent to the origin the user named, and no other.
    """
    from urllib.error import HTTPError, URLError
    from urllib.parse import urlsplit
    from urllib.request import Request

    from handler.cli.same_origin import RedirectRefused, opener, origin
    from handler.protocol import JSON_CONTENT_TYPE, SIGNATURE_HEADER
    from handler.request.signature import sign

    target = urlsplit(url)
    if target.scheme not in ("http", "https") or not target.hostname:
        # Not repeated: a key pasted where the URL goes would be printed back.
        raise UsageError(
            "the URL is not an http(s) URL: give one like https://abc123.execute-api.us-east-1.amazonaws.com/"
        )
    key, is_dev_key = read_key(key_file)
    if is_dev_key and not _is_loopback(target.hostname):
        print(
            f"note: signing with the local dev key; a deployed endpoint needs ${KEY_ENV} or --key-file", file=sys.stderr
        )
    request = Request(  # noqa: S310 - the scheme is checked above to be http or https
        url,
        data=body if method == "POST" else None,
        method=method,
        headers={SIGNATURE_HEADER: sign(key, body), "content-type": JSON_CONTENT_TYPE, "user-agent": USER_AGENT},
    )
    try:
        with opener().open(request, timeout=timeout) as response:
            return response.status, response.reason, response.read()
    except RedirectRefused as refused:
        raise CallFailed(
            f"{what or f'{method} {url}'} was redirected ({refused.status}) to {refused.target}, another origin than "
            f"{origin(url)}: not followed, so the signature went nowhere else. If you trust that server, name its "
            "URL yourself."
        ) from None
    except HTTPError as error:
        return error.code, error.reason, error.read()
    except (URLError, OSError) as error:
        cause = getattr(error, "reason", None) or error
        raise CallFailed(f"{what or f'{method} {url}'} got no answer: {cause}") from None


def command_call(arguments: argparse.Namespace) -> int:
    """Send a signed GET, tool call (--tool) or diagnostics (--diagnostics) to URL and print the answer."""
    method, body = request_of(arguments)
    status, reason, payload = signed_request(arguments.url, method, body, arguments.key_file, arguments.timeout)
    print(f"{method} {arguments.url} -> {status} {reason}", file=sys.stderr)
    print(_pretty(payload))
    return 0 if 200 <= status < 300 else 1


def _pretty(payload: bytes) -> str:
    text = payload.decode("utf-8", errors="replace")
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text


def _build(*, local: bool = True, stage: str | None = None) -> tuple[dict[str, object], list[Problem | str]]:
    """The manifest and its problems: each rule it breaks, or each `file:line: what` of a module that won't
    import, then the configuration's (_configuration_problems)."""
    from handler.authoring.registry import ToolLoadError, load_tools
    from handler.manifest.build import build_manifest

    # Importing the tools reads no configuration: their Settings are held against every stage
    # below, and against this machine's files only where `local` asks (never a build's).
    try:
        registry = load_tools()
    except ToolLoadError as failed:
        return {}, list(failed.lines)
    manifest, problems = build_manifest(registry)
    return manifest, [*problems, *_configuration_problems(registry, local=local, stage=stage)]


def _configuration_problems(registry: Registry, *, local: bool, stage: str | None) -> list[str]:
    """Every deployable stage (or only `stage`) held against the Settings classes and the secrets' names the
    tools take; the template's variables that no setting reads any more; with `local`, this machine."""
    from handler.authoring.dependencies import names_by_setting
    from handler.authoring.settings import (
        ConfigurationError,
        ConfigurationProblem,
        DeployedStage,
        deployable_stages,
        override_of,
        problems_in_stages,
        settings_taken,
    )
    from handler.cli.deployment import DeploymentUnreadable, deployment

    classes, names = settings_taken(registry.tools), names_by_setting(registry.tools)
    try:
        deployed = deployment()
        stages = [DeployedStage(stage, "what this deploy deploys")] if stage else deployable_stages(deployed.stages)
    except (DeploymentUnreadable, ConfigurationError) as error:
        return [ConfigurationProblem(error)]
    problems: list[str] = list(
        problems_in_stages(classes, stages=stages, local=local, names=names, provided=deployed.provided)
    )
    read = {variable for each in classes for variable in each.variables()} | {named.variable for named in names}
    for variable in sorted(read & set(deployed.variables)):
        problems.append(
            ConfigurationProblem(
                f"template.yaml sets {variable} for the function, which is not read: a setting comes from "
                f"tools/settings.toml, and a deploy overrides it only as {override_of(variable)}. Rename the "
                f"variable {override_of(variable)} to keep its value ({deployed.variables[variable]}), or drop it"
            )
        )
    return problems


def _show_values(registry: Registry, *, local: bool, stage: str | None) -> None:
    """What each setting the tools read is in each stage a deploy serves, and on this machine, with its source."""
    from handler.authoring.dependencies import names_by_setting
    from handler.authoring.settings import (
        ANY_STAGE,
        ConfigurationError,
        changed_here,
        deployable_stages,
        known_stages,
        local_file_problem,
        settings_file_shown,
        settings_taken,
        values_for,
    )
    from handler.authoring.settings import stage as this_stage
    from handler.cli.deployment import DeploymentUnreadable, deployment

    classes, names = settings_taken(registry.tools), names_by_setting(registry.tools)
    if not classes and not names:
        return
    try:
        deployed = deployment()
        known = known_stages()
        stages = [each for each in deployable_stages(deployed.stages) if each.name in known or ANY_STAGE in known]
    except (DeploymentUnreadable, ConfigurationError):
        return  # said as a problem already
    print(f"The settings your tools read, per stage ({settings_file_shown()}; docs/configuration.md):")
    for each in stages:
        if stage is not None and each.name != stage:
            continue
        print(f"  stage {each.name}" + (f" ({each.why})" if each.why else "") + ":")
        _print_values(values_for(classes, names, each.name, deployed.provided))
    if local and local_file_problem() is None and changed_here():
        try:
            print(f"  on this machine (stage {this_stage()}, as make serve and the tests read it):")
            _print_values(values_for(classes, names, None))
        except ConfigurationError:
            pass  # said as a problem already


def _print_values(shown: Sequence[Shown]) -> None:
    width = max(len(f"{each.variable} = {each.value}") for each in shown)
    for each in shown:
        line = f"{each.variable} = {each.value}"
        print(f"    {line.ljust(width)}  {each.source}".rstrip() if each.source else f"    {line}")


def command_check(arguments: argparse.Namespace) -> int:
    """Check the tools against Median's sync rules (with --also, across the organisation) and their settings in
    every stage a deploy serves: one line per problem, then the value each stage gets."""
    from handler.cli.deployment import deployment_problems

    local = not arguments.no_local
    manifest, problems = _build(local=local, stage=arguments.stage)
    problems = [*problems, *deployment_problems()]
    endpoints = _organisation(arguments, manifest) if arguments.also else []
    if endpoints:
        from handler.cli.organisation import check_organisation

        problems = [*problems, *check_organisation(endpoints)]
    for problem in problems:
        print(problem, file=sys.stderr)
    code = _summarise(problems, manifest, endpoints)
    if manifest:
        from handler.authoring.registry import load_tools

        _show_values(load_tools(), local=local, stage=arguments.stage)
    return code


def _summarise(problems: Sequence[Problem | str], manifest: dict[str, object], endpoints: list[Endpoint]) -> int:
    """The last line of `make check` before the values, and its exit code."""
    if problems:
        from handler.authoring.settings import ConfigurationProblem
        from handler.cli.deployment import DeploymentProblem

        configuration = sum(isinstance(problem, ConfigurationProblem) for problem in problems)
        deployment = sum(isinstance(problem, DeploymentProblem) for problem in problems)
        if len(problems) > configuration + deployment:
            print(
                f"{len(problems) - configuration - deployment} problem(s): Median would refuse this manifest.",
                file=sys.stderr,
            )
        if configuration:
            print(
                f"{configuration} configuration problem(s): the tools would fail to start where each applies.",
                file=sys.stderr,
            )
        if deployment:
            print(f"{deployment} deployment problem(s): samconfig.toml names what cannot deploy.", file=sys.stderr)
        return 1
    from handler.manifest.rules import manifest_size
    from handler.protocol import MAX_MANIFEST_BYTES, MAX_TOOLS

    tools = manifest["tools"]
    assert isinstance(tools, list)
    if not tools:
        from handler.runtime.env import tools_package

        folder = tools_package().replace(".", "/")
        print(
            f"OK: no tools yet: the manifest is empty, which Median accepts. Add one in {folder}/ "
            '(README, "Add a tool").'
        )
    else:
        print(
            f"OK: {len(tools)}/{MAX_TOOLS} tools, {manifest_size(manifest):,}/{MAX_MANIFEST_BYTES:,} bytes, "
            f"diagnostics {'on' if manifest['diagnostics'] else 'off'}. Median would accept this manifest."
        )
    if endpoints:
        from handler.cli.organisation import summary

        print(f"OK across the organisation: {summary(endpoints)}.")
    return 0


def stage_problems(stage: str) -> list[str]:
    """What would stop the tools in a function deployed as `stage`, from this checkout: the deploy's preflight.

    The tools' import and Median's rules, the stage itself, and every setting and secret's name the
    tools take in it; never this machine's files, which do not ship.
    """
    return [str(problem) for problem in _build(local=False, stage=stage)[1]]


def command_stages(arguments: argparse.Namespace) -> int:
    """Print the stages a function may run as, one a line: `default` and each table of tools/settings.toml
    (`*`, any name, with no settings.toml)."""
    from handler.authoring.settings import ConfigurationError, known_stages

    try:
        stages = known_stages()
    except ConfigurationError as error:
        print(error, file=sys.stderr)
        return 1
    print("\n".join(stages))
    return 0


def _organisation(arguments: argparse.Namespace, manifest: dict[str, object]) -> list[Endpoint]:
    """This endpoint and each --also SOURCE, read before anything is judged; none if this one did not load."""
    from handler.cli.organisation import THIS_ENDPOINT, endpoint_of

    repeated = sorted({source for source in arguments.also if arguments.also.count(source) > 1})
    if repeated:
        raise UsageError(f"--also names {repeated[0]} twice; give each endpoint once")
    others = [_read_endpoint(source, arguments.key_file) for source in arguments.also]
    if not manifest:  # the tools did not import: that problem is reported, and there are no names to compare
        return []
    return [endpoint_of(THIS_ENDPOINT, manifest), *others]


def _read_endpoint(source: str, key_file: str | None) -> Endpoint:
    """The manifest SOURCE names: a saved manifest file, or an endpoint URL asked with a signed GET."""
    from pathlib import Path

    from handler.cli.organisation import NotAManifest, endpoint_of

    if source.startswith(("http://", "https://")):
        status, reason, payload = signed_request(
            source, "GET", b"", key_file, CALL_TIMEOUT_SECONDS, what=f"--also {source}: the signed GET"
        )
        if status != 200:
            hint = f" (is ${KEY_ENV}, or --key-file, that endpoint's key?)" if status == 401 else ""
            raise CallFailed(f"--also {source}: GET answered {status} {reason}, not a manifest{hint}")
    else:
        try:
            payload = Path(source).read_bytes()
        except OSError as error:
            raise UsageError(f"--also {source}: cannot read it: {error.strerror}") from None
    try:
        return endpoint_of(source, json.loads(payload))
    except NotAManifest as error:
        raise CallFailed(f"--also {source}: {error}") from None
    except (ValueError, RecursionError):
        raise CallFailed(f"--also {source}: is not JSON, so it is no manifest") from None


def command_tool_modules(arguments: argparse.Namespace) -> int:
    """Print which module of tools/ holds each tool, and the diagnostics, as JSON: what a deployed function
    reads to import, at a call, only the module of the tool it runs (the build writes it beside the manifest)."""
    from handler.authoring.registry import ToolLoadError, tool_modules

    try:
        written = tool_modules()
    except ToolLoadError as failed:
        for line in failed.lines:
            print(line, file=sys.stderr)
        return 1
    print(json.dumps(written, sort_keys=True))
    return 0


def command_manifest(arguments: argparse.Namespace) -> int:
    """Print the manifest as GET serves it (compact), or indented with --pretty."""
    # This machine's files play no part: the build runs this, and they never ship.
    manifest, problems = _build(local=False)
    if problems:
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1
    from handler.request.responses import to_json

    # Compact, it is byte for byte what GET answers: `sam build` serves this very output.
    text = json.dumps(manifest, indent=2, ensure_ascii=False) if arguments.pretty else to_json(manifest)
    sys.stdout.buffer.write(text.encode("utf-8") + b"\n")
    return 0


def command_new_tool(arguments: argparse.Namespace) -> int:
    """Write tools/NAME.py, a working tool, and tests/tools/test_NAME.py, its tests; never overwrite a file."""
    from pathlib import Path

    from handler.authoring.registry import load_tools
    from handler.cli.scaffold import Refused, check_free, plan, write

    root = Path.cwd()
    try:
        new = plan(arguments.name, root)
        manifest, problems = _build()
        if not manifest:  # the tools do not even import: which names they hold is unknown
            raise UsageError(
                f"cannot tell whether {new.tool_name!r} is free while the tools fail to load: {problems[0]}"
            )
        check_free(new, {served.name: served.function.__module__ for served in load_tools().tools})
        written = write(new)
    except Refused as refused:
        raise UsageError(str(refused)) from None
    for path in written:
        print(f"wrote {path.relative_to(root)}")
    print(
        f"{new.tool_name} answers as written. Make it yours: its description (the docstring), its input model "
        "and its work; then `make test-tools check` (its tests alone, then Median's rules)."
    )
    return 0


class _NoAbbreviations:
    def __init__(self, subparsers: argparse._SubParsersAction[QuietParser]) -> None:
        self._subparsers = subparsers

    def add_parser(self, name: str, **options: Any) -> argparse.ArgumentParser:
        return self._subparsers.add_parser(name, allow_abbrev=False, **options)


def _request_arguments(command: argparse.ArgumentParser) -> None:
    what = command.add_mutually_exclusive_group()
    what.add_argument("--tool", help="the tool to call (without it: a GET for the manifest)")
    what.add_argument("--diagnostics", action="store_true", help="the diagnostics operation")
    command.add_argument("--input", help="the tool's input, a JSON object (default: {})")


def parser() -> QuietParser:
    # No abbreviations: `--key SECRET` must not pass as `--key-file SECRET` and echo the key back.
    root = QuietParser(prog="python -m handler", description="Tools for the Median tools protocol.", allow_abbrev=False)
    root.add_argument(
        "--version",
        action="version",
        version=f"median-tools {template_version()}",
        help="print the template's version (pyproject.toml; CHANGELOG.md says what each changed) and exit",
    )
    subparsers = root.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands = _NoAbbreviations(subparsers)
    signing = commands.add_parser("sign", help=command_sign.__doc__)
    signing.add_argument("--body", default="", help="the exact body to sign; - reads it from standard input")
    signing.add_argument("--key-file", help=KEY_FILE_HELP)
    signing.set_defaults(run=command_sign)
    calling = commands.add_parser("call", help=command_call.__doc__)
    calling.add_argument("url", help="the endpoint, e.g. http://127.0.0.1:3000/ (make serve) or the deployed URL")
    _request_arguments(calling)
    calling.add_argument("--call-id", help="the callId of a tool call (default: none)")
    calling.add_argument("--key-file", help=KEY_FILE_HELP)
    calling.add_argument("--timeout", type=float, default=CALL_TIMEOUT_SECONDS, help="seconds to wait for the answer")
    calling.set_defaults(run=command_call)
    event = commands.add_parser("event", help=(command_event.__doc__ or "").split("\n", 1)[0])
    _request_arguments(event)
    event.add_argument("--output", help=f"where to write it (default: {EVENTS_DIR}/<tool>.json, or get.json)")
    event.set_defaults(run=command_event)
    local_env = commands.add_parser("local-env", help=command_local_env.__doc__)
    local_env.add_argument("--output", default=LOCAL_ENV_FILE, help=f"where to write it (default: {LOCAL_ENV_FILE})")
    local_env.add_argument("--template", help="the SAM template whose variables to fill (default: template.yaml)")
    local_env.set_defaults(run=command_local_env)
    check = commands.add_parser("check", help=command_check.__doc__)
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
    check.set_defaults(run=command_check)
    stages = commands.add_parser("stages", help=command_stages.__doc__)
    stages.set_defaults(run=command_stages)
    modules = commands.add_parser("tool-modules", help=(command_tool_modules.__doc__ or "").split("\n", 1)[0])
    modules.set_defaults(run=command_tool_modules)
    manifest = commands.add_parser("manifest", help=command_manifest.__doc__)
    manifest.add_argument("--pretty", action="store_true", help="indent the JSON")
    manifest.set_defaults(run=command_manifest)
    new_tool = commands.add_parser("new-tool", help=command_new_tool.__doc__)
    new_tool.add_argument("name", metavar="NAME", help="the module's name in snake_case, like loyalty_points")
    new_tool.set_defaults(run=command_new_tool)
    return root


def _refuse_key_arguments(argv: Sequence[str]) -> None:
    """Stop before argparse, and say where a key goes instead."""
    from handler.cli.arguments import is_key_option

    if any(is_key_option(argument) for argument in argv):
        raise UsageError(
            "a key is never taken as an argument, where shell history and ps would keep it: "
            f"set ${KEY_ENV} or pass --key-file"
        )


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
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
    except CallFailed as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
