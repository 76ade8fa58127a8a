"""The Median key: read from AWS Secrets Manager, cached per container, and kept through outages.

Where it comes from:
- The secret named by MEDIAN_KEY_SECRET_ID holds the key itself, or a JSON object whose "key"
  member is the key.
- With PARAMETERS_SECRETS_EXTENSION_HTTP_PORT set (template.yaml sets it with the layer), the
  secret is read from the AWS Parameters and Secrets Lambda Extension's localhost API with the
  standard library, so a cold GET imports no boto3. When the extension cannot give a secret
  (unreachable, refusing, or answering something else), that read goes through boto3 instead.
- The read after a signature mismatch always goes through boto3: the extension would answer
  with its own cached copy, which is the very key that did not match.
- Away from a deployed Lambda (make serve, tests, sam local invoke) and with no secret named,
  MEDIAN_DEV_KEY may stand in for it.

When it is read:
- A key read is kept for MEDIAN_KEY_CACHE_SECONDS (300).
- No read starts within MEDIAN_KEY_MIN_REFRESH_SECONDS (30) of the last one, whatever arrives:
  an expired cache, a forged signature, a rotated key, a secret that is missing. A failed read
  is remembered, and answered from memory, for that long.
- A failed or unusable read never discards a key that was good: it goes on verifying until a
  read succeeds, or until MEDIAN_KEY_STALE_IF_ERROR_SECONDS (3600) past its cache lifetime.
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Any

from median_lambda.protocol import (
    DEV_KEY_ENV,
    KEY_CACHE_SECONDS,
    KEY_CACHE_SECONDS_ENV,
    KEY_JSON_MEMBER,
    KEY_MIN_REFRESH_SECONDS,
    KEY_MIN_REFRESH_SECONDS_ENV,
    KEY_SECRET_ENV,
    KEY_STALE_IF_ERROR_SECONDS,
    KEY_STALE_IF_ERROR_SECONDS_ENV,
    SECRETS_EXTENSION_PORT_ENV,
    TOOL_TIME_MARGIN_SECONDS,
)
from median_lambda.runtime import observability
from median_lambda.runtime.env import running_in_deployed_lambda, seconds_from_env

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from mypy_boto3_secretsmanager import SecretsManagerClient


class KeyUnavailable(Exception):
    """No usable key. The message is the cause, for the log only: the answer says just `no_key`."""


def key_from_secret_value(value: str) -> str:
    """The key held by a secret's SecretString: the trimmed string, or the trimmed "key" of a JSON object."""
    text = value.strip()
    if text.startswith("{"):
        # Read as a request body is (median_lambda/runtime/strict_json.py): a repeated "key" is refused,
        # not taken as whichever copy this parser keeps.
        from median_lambda.runtime.strict_json import loads_as_written

        try:
            document = loads_as_written(text)
        except json.JSONDecodeError:
            raise KeyUnavailable("the secret starts like a JSON object but is not valid JSON") from None
        except ValueError as refused:
            raise KeyUnavailable(f"the secret is JSON this endpoint does not accept: {refused}") from None
        member = document.get(KEY_JSON_MEMBER) if isinstance(document, dict) else None
        if type(member) is not str:  # a number is read as its text (strict_json.NumberText): no key
            raise KeyUnavailable(f'the secret is a JSON object without a string "{KEY_JSON_MEMBER}" member')
        text = member.strip()
    if not text:
        raise KeyUnavailable("the secret is empty")
    return text


def key_from_secret_answer(answer: Mapping[str, Any]) -> str:
    """The key in a GetSecretValue answer, as boto3 or the extension gives it."""
    if isinstance(answer.get("SecretString"), str):
        return key_from_secret_value(answer["SecretString"])
    if "SecretBinary" in answer:  # bytes from boto3, base64 text from the extension: no key either way
        raise KeyUnavailable("the secret holds binary data (SecretBinary), not a SecretString")
    raise KeyUnavailable("the secret's answer holds neither a SecretString nor a SecretBinary")


class KeptRead:
    """What this container knows of one stored value. Times are by the reader's clock.

    A class of its own rather than a dataclass: a cold GET imports this module, and `dataclasses`
    (with `inspect`, `ast` and `tokenize`) would cost it ~0.2x of the extension floor
    (bench/README.md, "cold GET, key through the extension").
    """

    __slots__ = ("expires", "failure", "last_read", "value")

    def __init__(self) -> None:
        self.value: str | None = None  # the last good value read, kept through failed reads
        self.expires = 0.0  # when that value's cache lifetime ends
        self.last_read: float | None = None  # when the last read started, whether it succeeded or not
        self.failure: Exception | None = None  # why the last read gave no value; None when it did


class KeptReads:
    """Values read from a store that can fail (Secrets Manager, Parameter Store), kept per container.

    The Median key's outage behaviour, shared with the tools' own secrets and parameters
    (median_lambda/authoring/dependencies.py): a value is kept for its cache lifetime; no read starts within the
    refresh floor of the last one, and a failed read is remembered, and answered from memory,
    for that long; a failed read never discards a good value, which goes on serving until a read
    succeeds or until `stale_if_error` seconds past its lifetime.

    It lives here, not in a module of its own, because a cold GET already imports this module
    for the key: one more module would be one more import on the path bench/README.md times.
    `read` callables raise `unavailable` (an Exception subclass taking one message) on failure.
    An entry (`name`) keeps one value for one lifetime: a caller whose readers declare several
    lifetimes for one value names an entry for each (the tools' Secret and Parameter do), or the
    first read's lifetime would serve them all.
    """

    def __init__(
        self,
        clock: Callable[[], float],
        unavailable: type[Exception],
        too_old: str = "the value read before is too old, and it could not be read again since",
    ) -> None:
        self.clock = clock
        self.unavailable = unavailable
        # Said when the last good value is past its stale-if-error bound: in the words its operator knows.
        self.too_old = too_old
        self.states: dict[str, KeptRead] = {}

    def get(
        self,
        name: str,
        read: Callable[[], str],
        *,
        cache_seconds: float,
        min_refresh_seconds: float,
        stale_if_error_seconds: float,
    ) -> str:
        """The value for `name`: cached, else read now if the floor allows, else what the last read left.

        Raises `unavailable` with the last failure's cause when there is no value to give.
        """
        state = self.states.setdefault(name, KeptRead())
        now = self.clock()
        if state.value is not None and now < state.expires:
            return state.value
        if self.may_read(state, now, min_refresh_seconds):
            self.read(state, now, read, cache_seconds)
        if state.value is not None:
            if now < state.expires:
                return state.value
            if now < state.expires + stale_if_error_seconds:
                return state.value  # past its lifetime, but no read since has given a better one
        if state.failure is not None:
            raise self.unavailable(str(state.failure))  # a new one: raising the same instance grows its traceback
        if state.value is None:
            # The read was cut short (the call's time ran out) before it gave a value or a failure.
            raise self.unavailable(f"its last read did not finish; it is read again {min_refresh_seconds:g} s after")
        raise self.unavailable(self.too_old)

    @staticmethod
    def may_read(state: KeptRead, now: float, min_refresh_seconds: float) -> bool:
        return state.last_read is None or now - state.last_read >= min_refresh_seconds

    def read(self, state: KeptRead, now: float, read: Callable[[], str], cache_seconds: float) -> bool:
        """Read once and record the outcome; a failure keeps the value that was good. True if it succeeded."""
        state.last_read = now
        try:
            value = read()
        except self.unavailable as failure:
            state.failure = failure
            return False
        state.value, state.failure = value, None
        state.expires = now + cache_seconds
        return True


class MedianKeySource:
    """Where the handler gets the key. One per container: its cache is what makes warm calls cheap.

    It calls Secrets Manager through boto3 itself rather than through Powertools' SecretsProvider,
    which does the same caching: importing any Powertools module runs its package's __init__,
    which imports Logger, Metrics and Tracer, and that cost a cold GET 20 to 25% on top of the
    floor (bench/README.md). Nor does SecretsProvider keep a key through a failed read, or
    remember a failure for the refresh floor, which is what makes outages and forgeries cheap.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._client: SecretsManagerClient | None = None
        # A test passes its own clock to step past the refresh floor without sleeping through it.
        self._clock = clock
        self._kept = KeptReads(
            clock, KeyUnavailable, "the key read before is too old, and the secret could not be read again since"
        )
        self._secrets = self._kept.states  # read directly on the hot path: one lookup fewer per call
        # Why the extension gave no secret, each logged once per container: an operator sees every
        # distinct cause, and a broken layer does not write a line per request.
        self._extension_causes_logged: set[str] = set()

    @property
    def client(self) -> SecretsManagerClient:
        """The Secrets Manager client, created once per container on first use."""
        if self._client is None:
            from median_lambda.runtime.aws_clients import bounded_client

            self._client = bounded_client("secretsmanager")
        return self._client

    def forget(self) -> None:
        """Drop every key, client, timestamp and failure: the container starts over (SnapStart's hooks)."""
        self._client = None
        self._secrets.clear()
        self._extension_causes_logged.clear()

    def holds_nothing(self) -> bool:
        """True when no key, client or timestamp is held, as a snapshot must find it."""
        return self._client is None and not self._secrets

    def get(self, context: object = None) -> str:
        """The key to verify with; raises KeyUnavailable with the cause.

        A read it needs ends, as a whole, TOOL_TIME_MARGIN_SECONDS before the deadline of the Lambda
        `context` (when it is one), so that even a stalled Secrets Manager leaves time to answer.
        """
        secret_id = os.environ.get(KEY_SECRET_ENV, "").strip()
        if secret_id:
            state = self._secrets.get(secret_id)
            if state is not None and state.value is not None and self._clock() < state.expires:
                return state.value
            return self._from_secret(secret_id, context)
        if running_in_deployed_lambda():
            raise KeyUnavailable(f"{KEY_SECRET_ENV} is not set; a deployed function never reads {DEV_KEY_ENV}")
        dev_key = os.environ.get(DEV_KEY_ENV, "").strip()
        if not dev_key:
            raise KeyUnavailable(f"neither {KEY_SECRET_ENV} nor, for local work, {DEV_KEY_ENV} is set")
        return dev_key

    def refreshed_after_mismatch(self, current: str, context: object = None) -> str | None:
        """After a signature did not match: the key read anew if it has been rotated, else None.

        Read with boto3, past the extension's cache, and not within the refresh floor of the
        last read: a stream of forged requests cannot turn into a stream of Secrets Manager
        calls. A failed read keeps the current key and is logged here.
        """
        secret_id = os.environ.get(KEY_SECRET_ENV, "").strip()
        if not secret_id:
            return None
        state = self._secrets.setdefault(secret_id, KeptRead())
        now = self._clock()
        if not self._kept.may_read(state, now, _min_refresh_seconds()):
            return None
        self._read(secret_id, state, now, through_extension=False, context=context)
        fresh = state.value
        if state.failure is not None or fresh is None or fresh == current:
            return None
        observability.logger.info("The Median key in Secrets Manager has changed; verifying with the new one")
        return fresh

    def _from_secret(self, secret_id: str, context: object = None) -> str:
        """The key when the cache has none fresh: read now if the floor allows, else what the last read left."""
        return self._kept.get(
            secret_id,
            lambda: self._read_logged(secret_id, through_extension=True, context=context),
            cache_seconds=seconds_from_env(KEY_CACHE_SECONDS_ENV, KEY_CACHE_SECONDS),
            min_refresh_seconds=_min_refresh_seconds(),
            stale_if_error_seconds=seconds_from_env(KEY_STALE_IF_ERROR_SECONDS_ENV, KEY_STALE_IF_ERROR_SECONDS),
        )

    def _read(
        self, secret_id: str, state: KeptRead, now: float, *, through_extension: bool, context: object = None
    ) -> None:
        """Read the secret once and record the outcome; a failure keeps the key that was good."""
        self._kept.read(
            state,
            now,
            lambda: self._read_logged(
                secret_id, through_extension=through_extension, kept=state.value, context=context
            ),
            seconds_from_env(KEY_CACHE_SECONDS_ENV, KEY_CACHE_SECONDS),
        )

    def _read_logged(
        self, secret_id: str, *, through_extension: bool, kept: str | None = None, context: object = None
    ) -> str:
        """The key read once, by the invocation's deadline; a failure while a key read before is held is logged."""
        from median_lambda.runtime.time_limits import OUTBOUND_DEADLINE, invocation_deadline

        if kept is None and secret_id in self._secrets:
            kept = self._secrets[secret_id].value
        # Each call of the read (the extension's, boto3's) ends by then, as a whole (runtime/time_limits.py).
        ends_by = OUTBOUND_DEADLINE.set(invocation_deadline(context, TOOL_TIME_MARGIN_SECONDS))
        try:
            answer = self._extension_answer(secret_id) if through_extension else None
            return key_from_secret_answer(answer if answer is not None else self._boto3_answer(secret_id))
        except KeyUnavailable as failure:
            if kept is not None:
                observability.logger.warning(
                    "Reading the Median key failed; still verifying with the key read before",
                    extra={"cause": str(failure)},
                )
            raise
        finally:
            OUTBOUND_DEADLINE.reset(ends_by)

    def _boto3_answer(self, secret_id: str) -> Mapping[str, Any]:
        try:
            return self.client.get_secret_value(SecretId=secret_id)
        except Exception as error:  # botocore raises many types: none may become a crash
            raise KeyUnavailable(f"reading the secret failed: {describe_aws_error(error)}") from None

    def _extension_answer(self, secret_id: str) -> Mapping[str, Any] | None:
        """The extension's GetSecretValue answer; None, with the cause logged once, when it gives none.

        None means: read through boto3 instead, and also when the extension is not configured.
        """
        port = os.environ.get(SECRETS_EXTENSION_PORT_ENV, "").strip()
        if not port:
            return None
        from median_lambda.key.secrets_extension import ExtensionGaveNone, ask_extension

        try:
            return ask_extension(secret_id, port)
        except ExtensionGaveNone as none:
            if none.kind not in self._extension_causes_logged:
                self._extension_causes_logged.add(none.kind)
                observability.logger.warning(
                    "The Parameters and Secrets Extension gave no secret; reading the Median key through boto3"
                    " instead (logged once per container for each cause)",
                    extra={"cause": str(none)},
                )
            return None


def _min_refresh_seconds() -> float:
    return seconds_from_env(KEY_MIN_REFRESH_SECONDS_ENV, KEY_MIN_REFRESH_SECONDS)


def describe_aws_error(error: Exception) -> str:
    """botocore's own text names the cause (not found, access denied, unreachable) and never the value."""
    from botocore.exceptions import BotoCoreError, ClientError

    if isinstance(error, BotoCoreError | ClientError):
        return f"{type(error).__name__}: {error}"
    return type(error).__name__


def log_key_unavailable(error: KeyUnavailable) -> None:
    observability.logger.error("No usable Median key; answering 500 no_key", extra={"cause": str(error)})
