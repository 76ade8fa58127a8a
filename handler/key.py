"""The Median key: read from AWS Secrets Manager with boto3, cached per container.

The secret named by MEDIAN_KEY_SECRET_ID holds the key itself, or a JSON object whose "key"
member is the key. Away from a deployed Lambda (make serve, tests, sam local invoke) and
with no secret named, MEDIAN_DEV_KEY may stand in for it.
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING

from handler import observability
from handler.env import seconds_from_env
from handler.protocol import (
    DEV_KEY_ENV,
    KEY_CACHE_SECONDS,
    KEY_CACHE_SECONDS_ENV,
    KEY_JSON_MEMBER,
    KEY_MIN_REFRESH_SECONDS,
    KEY_MIN_REFRESH_SECONDS_ENV,
    KEY_SECRET_ENV,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from mypy_boto3_secretsmanager import SecretsManagerClient


class KeyUnavailable(Exception):
    """No usable key. The message is the cause, for the log only: the answer says just `no_key`."""


def running_in_deployed_lambda() -> bool:
    return bool(os.environ.get("AWS_LAMBDA_FUNCTION_NAME")) and os.environ.get("AWS_SAM_LOCAL") != "true"


def key_from_secret_value(value: object) -> str:
    """The key held by a secret's value: the trimmed string, or the trimmed "key" of a JSON object."""
    if not isinstance(value, str):
        raise KeyUnavailable("the secret holds binary data (SecretBinary), not a SecretString")
    text = value.strip()
    if text.startswith("{"):
        try:
            document = json.loads(text)
        except ValueError:
            raise KeyUnavailable("the secret starts like a JSON object but is not valid JSON") from None
        member = document.get(KEY_JSON_MEMBER) if isinstance(document, dict) else None
        if not isinstance(member, str):
            raise KeyUnavailable(f'the secret is a JSON object without a string "{KEY_JSON_MEMBER}" member')
        text = member.strip()
    if not text:
        raise KeyUnavailable("the secret is empty")
    return text


class MedianKeySource:
    """Where the handler gets the key. One per container: its cache is what makes warm calls cheap.

    It calls Secrets Manager through boto3 itself rather than through Powertools' SecretsProvider,
    which does the same caching: importing any Powertools module runs its package's __init__,
    which imports Logger, Metrics and Tracer, and that cost a cold GET 20 to 25% on top of the
    floor (bench/README.md). What it would add, a cache with an expiry, is the few lines below.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._client: SecretsManagerClient | None = None
        # A test passes its own clock to step past the refresh floor without sleeping through it.
        self._clock = clock
        # Per secret: the key its value held when last read (or why it held none), and until
        # when that holds, by self._clock. The expiry is worked out at the read, so a warm
        # request reads one environment variable, not two.
        self._keys: dict[str, tuple[str | KeyUnavailable, float]] = {}
        # When this container last asked Secrets Manager for each secret (a failed read counts).
        self._fetched_at: dict[str, float] = {}

    @property
    def client(self) -> SecretsManagerClient:
        """The Secrets Manager client, created once per container on first use."""
        if self._client is None:
            import boto3

            from handler.aws_clients import bounded_config

            self._client = boto3.client("secretsmanager", config=bounded_config())
        return self._client

    def get(self) -> str:
        """The key to verify with; raises KeyUnavailable with the cause."""
        secret_id = os.environ.get(KEY_SECRET_ENV, "").strip()
        if secret_id:
            cached = self._keys.get(secret_id)
            if cached is not None and self._clock() < cached[1]:
                return _key_or_raise(cached[0])
            return self._from_secret(secret_id)
        if running_in_deployed_lambda():
            raise KeyUnavailable(f"{KEY_SECRET_ENV} is not set; a deployed function never reads {DEV_KEY_ENV}")
        dev_key = os.environ.get(DEV_KEY_ENV, "").strip()
        if not dev_key:
            raise KeyUnavailable(f"neither {KEY_SECRET_ENV} nor, for local work, {DEV_KEY_ENV} is set")
        return dev_key

    def refreshed_after_mismatch(self, current: str) -> str | None:
        """After a signature did not match: the key read anew if it may have been rotated, else None.

        At most one read per MEDIAN_KEY_MIN_REFRESH_SECONDS, so a stream of forged requests
        cannot turn into a stream of Secrets Manager calls.
        """
        secret_id = os.environ.get(KEY_SECRET_ENV, "").strip()
        if not secret_id:
            return None
        floor = seconds_from_env(KEY_MIN_REFRESH_SECONDS_ENV, KEY_MIN_REFRESH_SECONDS)
        last = self._fetched_at.get(secret_id)
        if last is not None and self._clock() - last < floor:
            return None
        fresh = self._from_secret(secret_id)
        if fresh == current:
            return None
        observability.logger.info("The Median key in Secrets Manager has changed; verifying with the new one")
        return fresh

    def _from_secret(self, secret_id: str) -> str:
        """The key read from Secrets Manager now, and kept for MEDIAN_KEY_CACHE_SECONDS."""
        self._keys.pop(secret_id, None)
        fetched_at = self._fetched_at[secret_id] = self._clock()
        try:
            answer = self.client.get_secret_value(SecretId=secret_id)
        except Exception as error:  # botocore raises many types: none may become a crash
            raise KeyUnavailable(f"reading the secret failed: {_describe(error)}") from None
        try:
            key: str | KeyUnavailable = key_from_secret_value(answer.get("SecretString", answer.get("SecretBinary")))
        except KeyUnavailable as unusable:
            key = unusable  # kept like a key: an unusable value is read again when the cache expires, not per request
        self._keys[secret_id] = (key, fetched_at + seconds_from_env(KEY_CACHE_SECONDS_ENV, KEY_CACHE_SECONDS))
        return _key_or_raise(key)


def _key_or_raise(cached: str | KeyUnavailable) -> str:
    if isinstance(cached, KeyUnavailable):
        raise KeyUnavailable(str(cached))  # a new one: raising the same instance again grows its traceback
    return cached


def _describe(error: Exception) -> str:
    """botocore's own text names the cause (not found, access denied, unreachable) and never the value."""
    from botocore.exceptions import BotoCoreError, ClientError

    if isinstance(error, BotoCoreError | ClientError):
        return f"{type(error).__name__}: {error}"
    return type(error).__name__


def log_key_unavailable(error: KeyUnavailable) -> None:
    observability.logger.error("No usable Median key; answering 500 no_key", extra={"cause": str(error)})
