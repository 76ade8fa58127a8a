"""`make serve LOCAL_AWS=moto`: moto's server stands in for AWS, so tools that use it run with no account.

moto's server (the dev group's, never the artifact's) listens on a free port of 127.0.0.1,
answering this developer's AWS clients alone: no web page, and no other account of the machine
(median_lambda/testing/moto_server.py: either could otherwise read every seeded secret and plant
another value). This process's environment points boto3 at it: AWS_ENDPOINT_URL, which boto3
reads for every service, and the credential this run made, which the server answers alone, so
nothing can reach a real account by mistake. For a shell of the developer's own (the AWS CLI, a
script), the same variables are in a file only they can read, which the terminal names and
`stop()` deletes. The handler's clients and a tool's own
`boto3.client(...)`, `Secret(...)` and `Parameter(...)` all go there. The idempotency table is
made there as deployed, so a call retried with its callId (the inspector's "Reuse the last
callId") is answered from its record, not run again. It is seeded at start, from two places a
user owns:

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
import os
import shlex
import shutil
import sys
import tempfile
import tomllib
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from median_lambda.authoring.settings import LOCAL_SETTINGS_FILE
from median_lambda.protocol import IDEMPOTENCY_TABLE_ENV
from median_lambda.runtime.env import package_directory, shown_path
from median_lambda.testing.aws import MedianAWS
from median_lambda.testing.moto_server import LocalMotoServer, aws_environment

if TYPE_CHECKING:
    from collections.abc import Callable

LOCAL_AWS_ENV = "LOCAL_AWS"
MOTO = "moto"
SEED_ENV = "LOCAL_AWS_SEED"
DEFAULT_SEED = Path("tests") / "tools" / "local_aws_seed.py"
# A region for the fake account when none is set: moto serves any, and a region is all boto3 asks.
DEFAULT_REGION = "us-east-1"


class LocalAwsError(Exception):
    """LOCAL_AWS asks for something this server cannot do; the message says what to do instead."""


@dataclass
class LocalAws:
    """moto's running server, and what was seeded into it."""

    server: LocalMotoServer
    endpoint: str
    seeded: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    idempotency_table: str | None = None
    # The variables a shell of the developer's sources to reach this server (its credential among them).
    environment_file: Path | None = None

    def stop(self) -> None:
        self.server.stop()
        if self.environment_file is not None:
            shutil.rmtree(self.environment_file.parent, ignore_errors=True)

    def summary(self) -> str:
        lines = [f"Local AWS: moto's server on {self.endpoint} (AWS_ENDPOINT_URL); no AWS account is used."]
        if self.environment_file is not None:
            lines.append(
                "  it answers only requests signed with this run's credential; from another shell of yours "
                f"(the AWS CLI, a script): . {self.environment_file}"
            )
        if self.idempotency_table:
            lines.append(
                f"  idempotency table {self.idempotency_table}, as deployed: a call retried with its callId is "
                "answered from its record, not run again"
            )
        lines += [f"  seeded {each}" for each in self.seeded]
        lines += [f"  seed failed: {problem}" for problem in self.problems]
        if not self.seeded and not self.problems:
            # Only when there was nothing to seed: beside a failed seed, it would contradict it.
            lines.append(
                f"  nothing seeded: name secrets in tools/{LOCAL_SETTINGS_FILE} [secrets], make tables in "
                f"{DEFAULT_SEED.as_posix()} seed() (README.md's configuration guide)"
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
    if importlib.util.find_spec("moto") is None:
        raise LocalAwsError("moto is not installed here: run `make install` (it is in the dev group)")
    server = LocalMotoServer()
    endpoint = server.start()
    _point_boto3_at(endpoint)
    local = LocalAws(server, endpoint, environment_file=write_environment_file(endpoint))
    _make_the_idempotency_table(local)
    seed_settings(local)
    run_seed_hook(local, seed_file if seed_file is not None else _seed_file())
    return local


def _point_boto3_at(endpoint: str) -> None:
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or DEFAULT_REGION
    to_set, to_unset = aws_environment(endpoint, region, current=list(os.environ))
    for name in to_unset:
        os.environ.pop(name, None)
    os.environ.update(to_set)


def write_environment_file(endpoint: str) -> Path:
    """What points a shell of the developer's at this server, in a file of a folder only they can open.

    mkdtemp makes the folder 0700, its owner's alone, and the file is made new (O_EXCL) with 0600,
    whatever the umask: another account of the machine can neither read the credential nor put a
    file of its own in its place. Sourced, it sets what this process set and unsets what it unset.
    """
    to_set, to_unset = aws_environment(endpoint, os.environ["AWS_DEFAULT_REGION"])
    folder = Path(tempfile.mkdtemp(prefix="median-local-aws-"))
    path = folder / "aws.env"
    lines = [
        "# make serve LOCAL_AWS=moto: its moto server and this run's credential, until make serve stops.",
        f"unset {' '.join(to_unset)}",
        *(f"export {name}={shlex.quote(value)}" for name, value in to_set.items()),
    ]
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write("\n".join(lines) + "\n")
    return path


def _make_the_idempotency_table(local: LocalAws) -> None:
    """The idempotency table on moto, as deployed, named in IDEMPOTENCY_TABLE: a retried callId runs its tool once."""
    name = os.environ.get(IDEMPOTENCY_TABLE_ENV, "").strip() or MedianAWS.IDEMPOTENCY_TABLE
    try:
        MedianAWS(local.endpoint, region=os.environ["AWS_DEFAULT_REGION"]).create_idempotency_table(name)
    except Exception as error:  # botocore's ClientError: a name DynamoDB refuses; its message says why
        local.problems.append(f"the idempotency table {name}: {error}")
        return
    os.environ[IDEMPOTENCY_TABLE_ENV] = name
    local.idempotency_table = name


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
