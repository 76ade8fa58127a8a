"""What a tool names in its signature for the framework to give it: `Secret(...)` and `Parameter(...)`.

    @tool(risk="low")
    def track(args: TrackInput, token: str = Secret("median-tools/carrier-token")) -> dict: ...

Like FastMCP's `Depends()`: the default marks the parameter as the framework's to fill, and
the tool's schema never shows it. Each value is cached per container with the Median key's
outage behaviour (median_lambda/key/source.py, `KeptReads`): kept for `cache_seconds`; at most one read per
MIN_REFRESH_SECONDS whatever happens, a failed read remembered for that long; a good value
kept through failed reads for STALE_IF_ERROR_SECONDS past its lifetime. Each lifetime declared
for a value has its entry: two tools reading one secret for 0 and 300 s each get theirs.

Read through the AWS Parameters and Secrets Lambda Extension when it is on (its port is set),
so a call that needs a secret imports no boto3 for it; through boto3 when it is off or gives
nothing. When no value can be had, the call is answered 500 `internal_error` ("did not run;
retry") and the log names the secret or parameter and the cause, never a value.
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Any

from median_lambda.key.source import KeptReads, describe_aws_error
from median_lambda.protocol import KEY_MIN_REFRESH_SECONDS, KEY_STALE_IF_ERROR_SECONDS, SECRETS_EXTENSION_PORT_ENV
from median_lambda.runtime import observability

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from median_lambda.authoring.registry import Tool
    from median_lambda.authoring.settings import NamedBySetting

# The Median key's floors (docs/protocol.md §4): the same trade of freshness for outage tolerance.
DEFAULT_CACHE_SECONDS = 300.0
MIN_REFRESH_SECONDS = float(KEY_MIN_REFRESH_SECONDS)
STALE_IF_ERROR_SECONDS = float(KEY_STALE_IF_ERROR_SECONDS)


class SecretUnavailable(Exception):
    """A tool's secret or parameter could not be read, and no good value is kept. The message is the cause."""


class Dependency:
    """A value the framework reads for a tool, named by a parameter's default."""

    kind = "value"
    public_name = "Dependency"  # the name the author wrote: Secret or Parameter

    def __init__(
        self,
        name: str | None = None,
        *,
        setting: str | None = None,
        cache_seconds: float = DEFAULT_CACHE_SECONDS,
    ) -> None:
        self.name = name
        self.setting = setting
        self.cache_seconds = cache_seconds

    def __repr__(self) -> str:
        given = repr(self.name) if self.name is not None else f"setting={self.setting!r}"
        return f"{self.public_name}({given})"

    def problem(self) -> str | None:
        """What is wrong with how it was declared, for the author; None when nothing is."""
        if (self.name is None) == (self.setting is None):
            return f'{self.public_name}(...) takes a name, or setting="VARIABLE" naming the variable that holds it'
        for option, given in (("name", self.name), ("setting", self.setting)):
            if given is not None and (not isinstance(given, str) or not given.strip()):
                return f"{self.public_name}({option}={given!r}): {option} is a non-empty string"
        if isinstance(self.cache_seconds, bool) or not isinstance(self.cache_seconds, int | float):
            return f"{self.public_name}(cache_seconds={self.cache_seconds!r}) is a number of seconds"
        if not self.cache_seconds >= 0:
            return f"{self.public_name}(cache_seconds={self.cache_seconds!r}) is a number of seconds, 0 or more"
        return None

    def resolved_name(self) -> str:
        """The secret's or parameter's name: as given, or read from its setting."""
        if self.name is not None:
            return self.name
        from median_lambda.authoring.settings import value, where_to_set

        assert self.setting is not None
        named = value(self.setting)
        if not named:
            unknown = f"{self.setting} is not set, so the {self.kind}'s name is unknown"
            raise SecretUnavailable(f"{self!r}: {unknown}: {where_to_set(self.setting)}")
        return named

    def read_once(self, name: str) -> str:
        raise NotImplementedError

    def cache_key(self, name: str) -> str:
        """The entry its value is kept in: one per value and lifetime, so that each tool reading one
        value keeps it for the lifetime it declared (a tool asking for 0 s never gets what another
        keeps for 300 s)."""
        return f"{self.kind}:{name}@{float(self.cache_seconds)!r}"

    def value(self) -> str:
        """This container's value; raises SecretUnavailable with the cause."""
        name = self.resolved_name()
        return stores.get(
            self.cache_key(name),
            lambda: self.read_once(name),
            cache_seconds=float(self.cache_seconds),
            min_refresh_seconds=MIN_REFRESH_SECONDS,
            stale_if_error_seconds=STALE_IF_ERROR_SECONDS,
        )


class SecretSource(Dependency):
    """A secret in AWS Secrets Manager: its SecretString, or with `field`, one member of its JSON object.

    The JSON is read as strictly as a request body (median_lambda/runtime/strict_json.py), and a number
    member is given as written: `"port": 5432` is "5432", `1e2` is "1e2", never "100.0".

        token: str = Secret("median-tools/carrier-token")
        token: str = Secret(setting="CARRIER_TOKEN_SECRET")  # its name from the tool's configuration
        password: str = Secret("median-tools/warehouse-db", field="password")

    The function may read any secret named `<stack name>/...` (template.yaml): name yours so.
    """

    kind = "secret"
    public_name = "Secret"

    def __init__(
        self,
        name: str | None = None,
        *,
        setting: str | None = None,
        field: str | None = None,
        cache_seconds: float = DEFAULT_CACHE_SECONDS,
    ) -> None:
        super().__init__(name, setting=setting, cache_seconds=cache_seconds)
        self.field = field

    def problem(self) -> str | None:
        if self.field is not None and (not isinstance(self.field, str) or not self.field):
            return f"Secret(field={self.field!r}): field names a member of the secret's JSON object"
        return super().problem()

    def read_once(self, name: str) -> str:
        answer = _extension_secret(name) or _boto3_secret(name)
        text = answer.get("SecretString")
        if not isinstance(text, str):
            raise SecretUnavailable(f"secret {name!r} holds binary data (SecretBinary), not a SecretString")
        if self.field is None:
            return text
        return self._member(name, text)

    def _member(self, name: str, text: str) -> str:
        """The `field` member of the secret's JSON object, read as a request body is; a number as it is written.

        The causes name the secret and the rule, never the value (the parser's own words quote none).
        """
        from median_lambda.runtime.strict_json import loads_as_written

        try:
            document = loads_as_written(text)
        except json.JSONDecodeError as error:
            raise SecretUnavailable(
                f"secret {name!r} is not valid JSON (line {error.lineno}, column {error.colno}), "
                f"so it has no {self.field!r} member"
            ) from None
        except ValueError as refused:
            raise SecretUnavailable(f"secret {name!r} is not JSON this endpoint accepts: {refused}") from None
        member = document.get(self.field) if isinstance(document, dict) else None
        if not isinstance(member, str):  # a number is a NumberText: its text as written
            raise SecretUnavailable(f"secret {name!r} is not a JSON object with a text or number {self.field!r} member")
        return str(member)

    def cache_key(self, name: str) -> str:
        # Per secret, field and lifetime: two fields of one secret are two values.
        whole = super().cache_key(name)
        return whole if self.field is None else f"{whole}#{self.field}"


class ParameterSource(Dependency):
    """A parameter in AWS Systems Manager Parameter Store, a SecureString decrypted.

        base_url: str = Parameter("/median-tools/carrier/base-url")

    The function may read any parameter under `/<stack name>/` (template.yaml): put yours there.
    """

    kind = "parameter"
    public_name = "Parameter"

    def read_once(self, name: str) -> str:
        answer = _extension_parameter(name) or _boto3_parameter(name)
        found = answer.get("Parameter", {}).get("Value")
        if not isinstance(found, str):
            raise SecretUnavailable(f"parameter {name!r}: the answer holds no value")
        return found


# What a tool writes. Functions typed to return Any rather than the classes themselves, as
# FastMCP's Depends() is: `token: str = Secret("...")` must type-check under mypy --strict
# (make lint checks tools/), and a default of another type than its parameter's would not.
def Secret(
    name: str | None = None,
    *,
    setting: str | None = None,
    field: str | None = None,
    cache_seconds: float = DEFAULT_CACHE_SECONDS,
) -> Any:
    """A tool's secret in AWS Secrets Manager, as a parameter's default: see SecretSource."""
    return SecretSource(name, setting=setting, field=field, cache_seconds=cache_seconds)


def Parameter(
    name: str | None = None, *, setting: str | None = None, cache_seconds: float = DEFAULT_CACHE_SECONDS
) -> Any:
    """A tool's parameter in AWS Systems Manager Parameter Store, as a parameter's default: see ParameterSource."""
    return ParameterSource(name, setting=setting, cache_seconds=cache_seconds)


stores = KeptReads(time.monotonic, SecretUnavailable)
_clients: dict[str, Any] = {}
# The extension's causes for giving nothing, each logged once per container.
_extension_causes_logged: set[str] = set()


def forget_secrets() -> None:
    """Drop every value, failure and client: the container starts over (tests, SnapStart)."""
    stores.states.clear()
    _clients.clear()
    _extension_causes_logged.clear()


def _client(service: str) -> Any:
    client = _clients.get(service)
    if client is None:
        from median_lambda.runtime.aws_clients import bounded_client

        client = _clients[service] = bounded_client(service)
    return client


def _boto3_secret(name: str) -> Mapping[str, Any]:
    try:
        answer: Mapping[str, Any] = _client("secretsmanager").get_secret_value(SecretId=name)
    except Exception as error:  # botocore raises many types: none may become a crash
        raise SecretUnavailable(f"reading secret {name!r} failed: {describe_aws_error(error)}") from None
    return answer


def _boto3_parameter(name: str) -> Mapping[str, Any]:
    try:
        answer: Mapping[str, Any] = _client("ssm").get_parameter(Name=name, WithDecryption=True)
    except Exception as error:  # as above
        raise SecretUnavailable(f"reading parameter {name!r} failed: {describe_aws_error(error)}") from None
    return answer


def _extension_secret(name: str) -> Mapping[str, Any] | None:
    from median_lambda.key.secrets_extension import ask_extension

    return _through_extension(lambda port: ask_extension(name, port))


def _extension_parameter(name: str) -> Mapping[str, Any] | None:
    from median_lambda.key.secrets_extension import ask_extension_for_parameter

    return _through_extension(lambda port: ask_extension_for_parameter(name, port))


def _through_extension(ask: Callable[[str], Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The extension's answer; None, the cause logged once, when it gives none or is off: use boto3."""
    port = os.environ.get(SECRETS_EXTENSION_PORT_ENV, "").strip()
    if not port:
        return None
    from median_lambda.key.secrets_extension import ExtensionGaveNone

    try:
        return ask(port)
    except ExtensionGaveNone as none:
        if none.kind not in _extension_causes_logged:
            _extension_causes_logged.add(none.kind)
            observability.logger.warning(
                "The Parameters and Secrets Extension gave no value; reading a tool's secret or parameter through"
                " boto3 instead (logged once per container for each cause)",
                extra={"cause": str(none)},
            )
        return None


def names_by_setting(tools: Iterable[Tool]) -> list[NamedBySetting]:
    """Each variable that names a tool's secret or parameter (`make check` holds each against the stages)."""
    from median_lambda.authoring.settings import NamedBySetting

    return [
        NamedBySetting(dependency.setting, f"{each.function.__name__}'s {dependency.kind}", each.location)
        for each in tools
        for _, dependency in each.dependencies
        if isinstance(dependency, Dependency) and dependency.setting is not None
    ]
