"""`make serve LOCAL_AWS=moto`: moto's server stands in for AWS, so tools that use it run with no account.

moto's server (the dev group's, never the artifact's) listens on a free loopback port, and
this process's environment points boto3 at it: AWS_ENDPOINT_URL, which boto3 reads for every
service, and fake credentials, so nothing can reach a real account by mistake. The handler's
clients and a tool's own `boto3.client(...)`, `Secret(...)` and `Parameter(...)` all go there.
It is seeded at start, from two places a user owns:

- the `[secrets]` and `[parameters]` tables of tools/settings.local.toml: each entry one
  secret (a table becomes a JSON SecretString) or one SSM parameter;
- the seed hook, tests/tools/local_aws_seed.py (or $LOCAL_AWS_SEED): its `seed()` runs with
  boto3 already pointed at moto, to create tables and items. The tests of tools/ can call the
  same function, so the data a tool is tried on and tested on is one.

moto keeps everything in memory: each start begins empty and seeds again. A saved tool
reloads without a restart; the data stays as the tools left it.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import sys
import tomllib
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from handler.authoring.settings import LOCAL_SETTINGS_FILE
from handler.runtime.env import package_directory, shown_path

if TYPE_CHECKING:
    from collections.abc import Callable

    from moto.server import ThreadedMotoServer

LOCAL_AWS_ENV = "LOCAL_AWS"
MOTO = "moto"
SEED_ENV = "LOCAL_AWS_SEED"
DEFAULT_SEED = Path("tests") / "tools" / "local_aws_seed.py"
# A region for the fake account when none is set: moto serves any, and a region is all boto3 asks.
DEFAULT_REGION = "us-east-1"
# Fake credentials, as moto's own documentation uses: anything signs, and nothing real is sent.
FAKE_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
# What would send a call elsewhere than moto, or sign it as someone real: unset while it serves.
# A service's own AWS_ENDPOINT_URL_<SERVICE> wins over AWS_ENDPOINT_URL, and the last one
# makes boto3 ignore both.
_REAL_ACCOUNT_VARIABLES = (
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_PROFILE",
    "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
)
_SERVICE_ENDPOINT_PREFIX = "AWS_ENDPOINT_URL_"


class LocalAwsError(Exception):
    """LOCAL_AWS asks for something this server cannot do; the message says what to do instead."""


@dataclass
class LocalAws:
    """moto's running server, and what was seeded into it."""

    server: ThreadedMotoServer
    endpoint: str
    seeded: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def stop(self) -> None:
        self.server.stop()

    def summary(self) -> str:
        lines = [f"Local AWS: moto's server on {self.endpoint} (AWS_ENDPOINT_URL); no AWS account is used."]
        lines += [f"  seeded {each}" for each in self.seeded]
        lines += [f"  seed failed: {problem}" for problem in self.problems]
        if not lines[1:]:
            # Only when there was nothing to seed: beside a failed seed, it would contradict it.
            lines.append(
                f"  nothing seeded: name secrets in tools/{LOCAL_SETTINGS_FILE} [secrets], make tables in "
                f"{DEFAULT_SEED.as_posix()} seed() (docs/configuration.md)"
            )
        return "\n".join(lines)


def requested(environment: dict[str, str] | None = None) -> bool:
    """Whether LOCAL_AWS asks for moto; an unknown value is refused with the choices."""
    value = (os.environ if environment is None else environment).get(LOCAL_AWS_ENV, "").strip().lower()
    if value in ("", "0", "no", "none", "off"):
        return False
    if value != MOTO:
        raise LocalAwsError(
            f"{LOCAL_AWS_ENV}={value} is not a choice: use {LOCAL_AWS_ENV}={MOTO} for moto's server, "
            "or leave it unset to use your own AWS credentials"
        )
    return True


def start(seed_file: Path | None = None) -> LocalAws:
    """Start moto's server, point this process's boto3 at it, and seed it."""
    try:
        from moto.server import ThreadedMotoServer
    except ImportError:
        raise LocalAwsError("moto is not installed here: run `make install` (it is in the dev group)") from None
    # werkzeug, moto's HTTP server, logs a line per AWS call even when not verbose: they would
    # bury the dev server's own lines, and the tool's errors say what failed anyway.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    _point_boto3_at(endpoint)
    local = LocalAws(server, endpoint)
    seed_settings(local)
    run_seed_hook(local, seed_file if seed_file is not None else _seed_file())
    return local


def _point_boto3_at(endpoint: str) -> None:
    service_endpoints = [name for name in os.environ if name.startswith(_SERVICE_ENDPOINT_PREFIX)]
    for name in (*_REAL_ACCOUNT_VARIABLES, *service_endpoints):
        os.environ.pop(name, None)
    os.environ.update(FAKE_CREDENTIALS)
    os.environ["AWS_ENDPOINT_URL"] = endpoint
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or DEFAULT_REGION
    os.environ["AWS_REGION"] = os.environ["AWS_DEFAULT_REGION"] = region


def _seed_file() -> Path:
    named = os.environ.get(SEED_ENV, "").strip()
    return Path(named) if named else DEFAULT_SEED


def local_settings_file() -> Path | None:
    directory = package_directory()
    return Path(directory) / LOCAL_SETTINGS_FILE if directory else None


def seed_settings(local: LocalAws) -> None:
    """The secrets and parameters named in the local file's [secrets] and [parameters] tables."""
    import boto3

    path = local_settings_file()
    if path is None or not path.is_file():
        return
    shown = shown_path(str(path))
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        local.problems.append(f"{shown}: {error}")
        return
    secrets = _table(local, document, "secrets", shown)
    parameters = _table(local, document, "parameters", shown)
    secrets_client = boto3.client("secretsmanager")
    made = _seed_each(
        local,
        f"{shown} [secrets]",
        secrets,
        lambda name, value: secrets_client.create_secret(
            Name=name, SecretString=json.dumps(value) if isinstance(value, dict) else str(value)
        ),
    )
    if made:
        local.seeded.append(f"{len(made)} secret(s) from {shown} [secrets]: {', '.join(made)}")
    ssm_client = boto3.client("ssm")
    made = _seed_each(
        local,
        f"{shown} [parameters]",
        parameters,
        lambda name, value: ssm_client.put_parameter(Name=name, Value=str(value), Type="String", Overwrite=True),
    )
    if made:
        local.seeded.append(f"{len(made)} parameter(s) from {shown} [parameters]: {', '.join(made)}")


def _seed_each(local: LocalAws, where: str, entries: dict[str, Any], make: Callable[[str, Any], object]) -> list[str]:
    """Make each entry; one moto refuses (a name AWS would refuse too) is said, and the rest still made."""
    made = []
    for name, value in entries.items():
        try:
            make(name, value)
        except Exception as error:  # botocore's ClientError or ParamValidationError: its message says why
            local.problems.append(f'{where} "{name}": {error}')
        else:
            made.append(name)
    return made


def _table(local: LocalAws, document: dict[str, Any], name: str, shown: str) -> dict[str, Any]:
    table = document.get(name, {})
    if not isinstance(table, dict):
        local.problems.append(f'{shown}: `{name}` must be a table ([{name}]) of "name" = value lines')
        return {}
    return table


def run_seed_hook(local: LocalAws, path: Path) -> None:
    """Run the hook's `seed()`; a failure is said with the hook's own line, and the server serves regardless."""
    if not path.is_file():
        return
    shown = shown_path(str(path))
    try:
        spec = importlib.util.spec_from_file_location("_local_aws_seed", path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {shown}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        seed = getattr(module, "seed", None)
        if not callable(seed):
            local.problems.append(f"{shown}: defines no seed() function to run")
            return
        seed()
    except Exception as error:  # the user's own code: say where it broke, and keep serving
        local.problems.append(f"{_where(error, path)}: {type(error).__name__}: {error}")
        return
    local.seeded.append(f"what {shown} seed() made")


def _where(error: BaseException, path: Path) -> str:
    """`file:line` of the last frame inside the hook, else the hook's name."""
    hook = path.resolve()
    lines = [
        frame.lineno for frame in traceback.extract_tb(error.__traceback__) if Path(frame.filename).resolve() == hook
    ]
    shown = shown_path(str(path))
    return f"{shown}:{lines[-1]}" if lines else shown


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
