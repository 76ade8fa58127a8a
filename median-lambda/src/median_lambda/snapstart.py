"""Lambda SnapStart: what goes into the snapshot, and what a restored container does first.

With SnapStart on, Lambda initialises a published version once, snapshots its memory, and
starts new containers from that snapshot. So the snapshot should hold everything a first
request would otherwise build (the tools, POST's machinery, each tool's validator), so that
a restored container serves its first POST warm; and nothing that must be one container's
own: no key, no connection or boto3 client, no timestamp. Every clock-based cache starts
anew after a restore, since `time.monotonic` jumps across one.

The hooks come from `snapshot-restore-py` (AWS's library, in every managed Python runtime)
and are registered only when Lambda initialises for a snapshot: an ordinary cold start
imports neither that library nor anything below.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from median_lambda.protocol import INITIALIZATION_TYPE_ENV, SNAPSTART_INITIALIZATION
from median_lambda.runtime import observability

if TYPE_CHECKING:
    from collections.abc import Callable

    from median_lambda.key.source import MedianKeySource


def register_hooks_under_snapstart(key_source: MedianKeySource, manifest_answer: Callable[[], Any]) -> bool:
    """Register the hooks if Lambda is initialising for a snapshot; whether it did.

    The entry point hands over its key source and its GET answer (median_lambda/app.py): the hooks
    forget the one and warm the other without importing the module that registered them.
    """
    if os.environ.get(INITIALIZATION_TYPE_ENV) != SNAPSTART_INITIALIZATION:
        return False
    try:
        from snapshot_restore_py import register_after_restore, register_before_snapshot
    except ImportError:  # the managed runtimes have it; a custom image may not
        observability.logger.warning(
            "SnapStart is on but snapshot_restore_py is missing: restored containers will build "
            "POST's machinery on their first POST"
        )
        return False
    register_before_snapshot(before_snapshot, key_source, manifest_answer)
    register_after_restore(after_restore, key_source)
    return True


def before_snapshot(key_source: MedianKeySource, manifest_answer: Callable[[], Any]) -> None:
    """Warm everything a first request would build; then drop every key, client and timestamp."""
    from median_lambda.authoring.registry import load_tools
    from median_lambda.calls import idempotency
    from median_lambda.calls.dispatch import handle_post  # POST's machinery: pydantic, the deadline, Metrics

    del handle_post  # imported for the modules it brings, found again at the first POST
    for tool in load_tools().tools:
        # Each model is built with defer_build (median_lambda/authoring/api.py): build its validator now.
        tool.input_model.model_rebuild(force=True)
    manifest_answer()  # the prebuilt manifest read, or built from the tools
    if idempotency.table_name() is not None:
        # Powertools' idempotency utility is ~150 ms of imports at a POST's first recorded call.
        import aws_lambda_powertools.utilities.idempotency  # noqa: F401
    # The key's refresh and the idempotency table read through boto3: imported, not used. A
    # module holds no credentials, and no client is made here.
    import boto3  # noqa: F401

    start_anew(key_source)


def after_restore(key_source: MedianKeySource) -> None:
    """A restored container's first act: nothing it remembers of time or of AWS is its own."""
    start_anew(key_source)
    if "random" in sys.modules:
        # Every container restored from one snapshot would draw the same "random" numbers
        # (botocore's retry jitter, for one). Nothing secret comes from `random`; the secrets
        # module and uuid4 read the OS, which Lambda reseeds on restore.
        import random

        random.seed()


def start_anew(key_source: MedianKeySource) -> None:
    """Forget the key, its timestamps and failures, the tools' secrets and parameters, and every AWS client."""
    from median_lambda.calls import idempotency
    from median_lambda.runtime.aws_clients import forget_tool_clients

    key_source.forget()
    idempotency.forget_clients()
    forget_tool_clients()
    if "median_lambda.authoring.dependencies" in sys.modules:  # a tool's secrets, if any was read: never in a snapshot
        from median_lambda.authoring.dependencies import forget_secrets

        forget_secrets()
