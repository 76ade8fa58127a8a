"""The Median key: read from AWS Secrets Manager through Powertools Parameters, cached per container.

The secret named by MEDIAN_KEY_SECRET_ID holds the key itself, or a JSON object whose "key"
member is the key. Away from a deployed Lambda (make serve, tests, sam local invoke) and
with no secret named, MEDIAN_DEV_KEY may stand in for it.
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING

from handler.env import seconds_from_env
from handler.observability import logger
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

    from aws_lambda_powertools.utilities.parameters import SecretsProvider


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
    """Where the handler gets the key. One per container: its cache is what makes warm calls cheap."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._provider: SecretsProvider | None = None
        # A test passes its own clock to step past the refresh floor without sleeping through it.
        self._clock = clock
        # When this container last asked Secrets Manager for each secret, by self._clock.
        self._fetched_at: dict[str, float] = {}

    @property
    def provider(self) -> SecretsProvider:
        if self._provider is None:
            from aws_lambda_powertools.utilities.parameters import SecretsProvider

            from handler.aws_clients import bounded_config

            self._provider = SecretsProvider(boto_config=bounded_config())
        return self._provider

    def get(self) -> str:
        """The key to verify with; raises KeyUnavailable with the cause."""
        secret_id = os.environ.get(KEY_SECRET_ENV, "").strip()
        if secret_id:
            return self._from_secret(secret_id, force=False)
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
        fresh = self._from_secret(secret_id, force=True)
        if fresh == current:
            return None
        logger.info("The Median key in Secrets Manager has changed; verifying with the new one")
        return fresh

    def _from_secret(self, secret_id: str, *, force: bool) -> str:
        from aws_lambda_powertools.utilities.parameters.exceptions import GetParameterError

        max_age = int(seconds_from_env(KEY_CACHE_SECONDS_ENV, KEY_CACHE_SECONDS))
        last = self._fetched_at.get(secret_id)
        will_fetch = force or last is None or self._clock() - last >= max_age
        try:
            value = self.provider.get(secret_id, max_age=max_age, force_fetch=force)
        except GetParameterError as error:
            raise KeyUnavailable(f"reading the secret failed: {error}") from None
        except Exception as error:  # botocore raises many types: none may become a crash
            raise KeyUnavailable(f"reading the secret failed: {type(error).__name__}") from None
        finally:
            if will_fetch:
                self._fetched_at[secret_id] = self._clock()
        return key_from_secret_value(value)


def log_key_unavailable(error: KeyUnavailable) -> None:
    logger.error("No usable Median key; answering 500 no_key", extra={"cause": str(error)})
