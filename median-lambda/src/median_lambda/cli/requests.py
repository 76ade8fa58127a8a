"""The commands that speak the Median protocol to an endpoint: `sign`, `call`, `event` and `local-env`.

`call` sends a signed GET, tool call or diagnostics to a URL (make serve's, start-api's or a
deployed one); `event` writes a signed API Gateway event for `sam local invoke`, and `local-env`
the --env-vars file beside it. A key is read from the environment or a file, never from an
argument, where it would land in shell history and in `ps`.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from median_lambda.cli.errors import Failed, UsageError

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

KEY_ENV = "MEDIAN_KEY"
EVENTS_DIR = "events"
# What `sam local invoke --env-vars` reads; "Parameters" applies it to every function.
LOCAL_ENV_FILE = f"{EVENTS_DIR}/env.json"
USER_AGENT = "median-tools-cli"
INPUT_EXAMPLE = """'{"orderNumber":"ORD-1042"}'"""
KEY_FILE_HELP = f"a file holding the key (default: ${KEY_ENV}, then make serve's dev key)"
CALL_TIMEOUT_SECONDS = 35.0  # API Gateway gives up after 30 s: wait a little longer than it does


class CallFailed(Failed):
    """The endpoint could not be reached or did not answer in time."""


def dev_key() -> str:
    """$MEDIAN_DEV_KEY, else the clone's dev key file (made if missing): what make serve and sam local verify with."""
    from median_lambda.key.local_key import DevKeyUnavailable
    from median_lambda.key.local_key import dev_key as local_dev_key

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
    from median_lambda.request.signature import sign

    body = sys.stdin.buffer.read() if arguments.body == "-" else arguments.body.encode("utf-8")
    print(sign(read_key(arguments.key_file)[0], body))
    return 0


def request_of(arguments: argparse.Namespace) -> tuple[str, bytes]:
    """The method and body that --tool/--input/--diagnostics ask for: a GET when none is given."""
    from median_lambda.testing import call_body, diagnostics_body

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
    print(write_event(arguments))
    return 0


def write_event(arguments: argparse.Namespace) -> Path:
    """The event command_event writes, for the request --tool/--input/--diagnostics ask for; its path."""
    from pathlib import Path

    from median_lambda.testing import signed_event

    method, body = request_of(arguments)
    name = "diagnostics" if arguments.diagnostics else arguments.tool or "get"
    path = Path(getattr(arguments, "output", None) or f"{EVENTS_DIR}/{name}.json")
    _write_json(path, signed_event(method, body, key=dev_key()))
    return path


def command_local_env(arguments: argparse.Namespace) -> int:
    """Write the --env-vars file for sam local: your configuration, the dev key, no secret, no idempotency table.

    Each MEDIAN_SETTING_<NAME> template.yaml declares gets NAME's value as `make serve` would see it
    (its override in the environment, tools/settings.local.toml, then tools/settings.toml for the
    stage), and MEDIAN_STAGE the local stage. sam local sets only the variables the template
    declares: a local value whose override is not declared cannot reach it, and is named on
    stderr with the fix. A stage that names no table of settings.toml stops it (exit 2).
    """
    print(write_local_env(arguments.output, arguments.template))
    return 0


def write_local_env(output: str = LOCAL_ENV_FILE, template_file: str | None = None) -> Path:
    """The file command_local_env writes, for the template's variables; its path."""
    from pathlib import Path

    from median_lambda.authoring import settings
    from median_lambda.key.local_key import write_private
    from median_lambda.protocol import DEV_KEY_ENV, IDEMPOTENCY_TABLE_ENV, KEY_SECRET_ENV

    declared = template_variables(template_file)
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
    path = Path(output)
    document = {"Parameters": {**configured, **fixed}}
    try:
        write_private(path, json.dumps(document, indent=2) + "\n")  # it holds the dev key: 0600
    except OSError as error:
        raise UsageError(f"cannot write {path}: {error.strerror}") from None
    unreachable = sorted(name for name in local if settings.override_of(name) not in declared)
    if unreachable:
        print(
            f"note: sam local sets only the variables template.yaml declares, so {', '.join(unreachable)} from "
            f"{settings.LOCAL_SETTINGS_FILE} will not reach the function under `make invoke` or `make start-api` "
            "(make serve sees them). To pass one, declare its override in the function's Environment.Variables "
            f'with an empty value ({settings.override_of(unreachable[0])}: ""): a deployed function then still '
            "reads tools/settings.toml (README.md's configuration guide).",
            file=sys.stderr,
        )
    return path


def template_variables(template_file: str | None = None) -> list[str]:
    """The environment variables the template (template.yaml by default) declares for the function, Globals' too."""
    from pathlib import Path

    from median_lambda.cli.deployment import FUNCTION_LOGICAL_ID
    from median_lambda.cli.template_check import Template, function_properties
    from median_lambda.project.sam_config import TEMPLATE, load_template

    path = Path(template_file) if template_file else TEMPLATE
    environment = function_properties(Template(load_template(path), {}), FUNCTION_LOGICAL_ID).get("Environment", {})
    return [str(name) for name in environment.get("Variables", {})]


def _is_loopback(host: str | None) -> bool:
    return host in ("localhost", "::1") or (host or "").startswith("127.")


def signed_request(
    url: str, method: str, body: bytes, key_file: str | None, timeout: float, *, what: str | None = None
) -> tuple[int, str, bytes]:
    """Send `body` to `url`, signed with the key (read_key), and return the status, reason and body.

    Raises UsageError for a URL that is not http(s), and CallFailed, saying `what` got no answer
    (by default the method and URL), when no answer comes or the answer redirects to another
    origin (median_lambda.cli.same_origin): the signature is sent to the origin the user named, and no other.
    """
    from urllib.error import HTTPError, URLError
    from urllib.parse import urlsplit
    from urllib.request import Request

    from median_lambda.cli.same_origin import RedirectRefused, opener, origin
    from median_lambda.protocol import JSON_CONTENT_TYPE, SIGNATURE_HEADER
    from median_lambda.request.signature import sign

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
