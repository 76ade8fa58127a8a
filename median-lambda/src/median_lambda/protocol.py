"""Every number, name and rule of the Median protocol that this project settles, in one place.

Median's published page for GET fixes the manifest limits; the rest (signature format,
error codes, size caps) is this project's reading of what that page leaves open.
docs/protocol.md tells the same contract in prose: change both together.
"""

from __future__ import annotations

import re

PROTOCOL_VERSION = 1

# --- HTTP --------------------------------------------------------------------
ALLOWED_METHODS = ("GET", "POST")
ALLOW_HEADER = ", ".join(ALLOWED_METHODS)
JSON_CONTENT_TYPE = "application/json"
# The largest body served, in bytes; larger answers 413 `too_large` before the signature
# is checked or anything is decoded or parsed. Checked on the body as it arrives (its
# base64 length, or its length in characters) and again on the decoded bytes, so neither
# form can slip a larger payload past the parser.
MAX_BODY_BYTES = 1024 * 1024
# The event shapes served, by what each must carry (median_lambda/request/events.py); any other event
# (ALB, WebSocket, VPC Lattice, ...) is answered 400 `bad_request` naming these.
SERVED_EVENT_SHAPES = (
    "API Gateway REST API (payload 1.0)",
    "API Gateway HTTP API (payload 2.0)",
    "Lambda Function URL",
)
# Lambda refuses to return a synchronous response larger than this, as its JSON: API Gateway
# then answers its own 502 and Median gets no JSON at all. An answer over it is replaced by a
# 500 `internal_error` that says so.
MAX_RESPONSE_BYTES = 6_291_556
# A 422 lists at most this many problems in `details`; `omitted` counts the rest. A 1 MiB
# body of unknown fields is ~95,000 problems, ~6.7 MB of details.
MAX_INPUT_ERROR_DETAILS = 100
# ... and quotes a field's name to at most this many characters, then "…": a name of the tool's own
# is never longer (the name rule), and an unknown one of any length cannot push the 422 past Lambda's limit.
MAX_QUOTED_FIELD_CHARS = 64
# A message that lists an author's problems (GET's invalid_manifest) quotes at most this many
# characters of them; the log has them all.
MAX_QUOTED_PROBLEMS_CHARS = 20_000
# The deepest a POST body may nest objects and arrays, its own object counting as one; deeper is
# 400 `bad_request`. Every step after the parser (validation, the call's identity, Powertools'
# copy of its payload, the recorded answer, a tool's own json.dumps or deepcopy) recurses once
# or more per level, on a stack Python bounds at ~1,000 frames: the parser alone accepts about
# that many levels on 3.11, and more on 3.13, where they would break a later step as a 500.
MAX_NESTING_DEPTH = 64

# --- Signature -----------------------------------------------------------------
SIGNATURE_HEADER = "median-signature"
SIGNATURE_SCHEME = "v1"
SIGNATURE_TOLERANCE_SECONDS = 300
SIGNATURE_HEX_LENGTH = 64
# A timestamp longer than this is centuries away from now: stale without parsing it.
MAX_TIMESTAMP_DIGITS = 15

# --- The Median key ------------------------------------------------------------
KEY_SECRET_ENV = "MEDIAN_KEY_SECRET_ID"  # noqa: S105 - the variable's name, not a secret
DEV_KEY_ENV = "MEDIAN_DEV_KEY"
KEY_CACHE_SECONDS_ENV = "MEDIAN_KEY_CACHE_SECONDS"
KEY_CACHE_SECONDS = 300
KEY_MIN_REFRESH_SECONDS_ENV = "MEDIAN_KEY_MIN_REFRESH_SECONDS"
KEY_MIN_REFRESH_SECONDS = 30
# How long past its cache lifetime a key that was good goes on verifying while every read of
# the secret fails or finds it unusable: a Secrets Manager brown-out, or a policy change gone
# wrong, leaves an operator an hour to fix before Median's calls fail; and a key the operator
# has replaced stops being accepted within the hour even by a container that cannot read the
# new one. A read that succeeds replaces the key at once.
KEY_STALE_IF_ERROR_SECONDS_ENV = "MEDIAN_KEY_STALE_IF_ERROR_SECONDS"
KEY_STALE_IF_ERROR_SECONDS = 3600
KEY_JSON_MEMBER = "key"

# --- The AWS Parameters and Secrets Lambda Extension (AWS's API, not Median's) ------
# When the extension's own port variable is set (template.yaml sets it with the layer), the key
# is read from its localhost API: GET <path>?secretId=<id>, the session token in this header.
SECRETS_EXTENSION_PORT_ENV = "PARAMETERS_SECRETS_EXTENSION_HTTP_PORT"
SECRETS_EXTENSION_HOST = "localhost"
SECRETS_EXTENSION_PATH = "/secretsmanager/get"
SECRETS_EXTENSION_TOKEN_HEADER = "X-Aws-Parameters-Secrets-Token"  # noqa: S105 - a header's name
SECRETS_EXTENSION_TOKEN_ENV = "AWS_SESSION_TOKEN"  # noqa: S105 - the variable's name

# --- Lambda SnapStart (AWS's names) ---------------------------------------------------------
# Lambda sets this to "snap-start" while it initialises a function version for its snapshot
# (and "on-demand" or "provisioned-concurrency" otherwise): the hooks of median_lambda/snapstart.py
# are registered only then.
INITIALIZATION_TYPE_ENV = "AWS_LAMBDA_INITIALIZATION_TYPE"
SNAPSTART_INITIALIZATION = "snap-start"
# An environment Lambda initialised ahead of any request: its first invocation is no cold start.
PROVISIONED_INITIALIZATION = "provisioned-concurrency"

# --- Versions (template.yaml) ---------------------------------------------------------------
# The alias API Gateway calls, which CodeDeploy moves to each new version (AutoPublishAlias).
LIVE_ALIAS = "live"

# --- At most once per callId (Powertools Idempotency over DynamoDB) -------------
# Unset (make serve, tests): idempotency is off and every call runs its tool.
IDEMPOTENCY_TABLE_ENV = "IDEMPOTENCY_TABLE"
IDEMPOTENCY_EXPIRY_SECONDS_ENV = "IDEMPOTENCY_EXPIRY_SECONDS"
IDEMPOTENCY_EXPIRY_SECONDS = 3600
# The prefix of every record's `id`; fixed so a code change cannot orphan the records in flight.
IDEMPOTENCY_KEY_PREFIX = "median-call"
# What a reuse of a callId must match: its tool, its input, and its conversation, known by its
# `id` when it has one that is not null, false or empty, so that a retry whose conversation
# gained a member is still the same call; by all of it otherwise. The two forms are tagged
# apart, so a conversation whose `id` is an object never matches one without an `id` that
# holds the same object (median_lambda/calls/idempotency.py, call_identity).
CONVERSATION_ID_MEMBER = "id"
# A DynamoDB item holds at most 400 KB. A longer answer is still sent, and the record keeps,
# instead of it, a 500 saying the call ran but its answer cannot be sent again.
IDEMPOTENCY_MAX_RECORDED_ANSWER_BYTES = 350_000

# --- Time limits -----------------------------------------------------------------
# Kept before Lambda's deadline to serialise the answer and flush the metrics. A call that
# goes through the idempotency table also keeps the longest time of each table request
# still to come (median_lambda/runtime/aws_clients.py): one after the tool for a tool's run, and one more
# before it for the input's validation.
TOOL_TIME_MARGIN_SECONDS = 0.5
# An `async def` tool is cancelled at that same deadline. One that goes on regardless (it blocks
# the event loop, or catches its cancellation) is stopped as a plain tool is, this much later:
# taken from the margin, which keeps the rest for the answer.
ASYNC_CANCEL_GRACE_SECONDS = 0.25

# --- Observability ----------------------------------------------------------------
# Powertools' own variables, read as Powertools reads them: template.yaml sets both to the
# stack's name, so two stages in one account never share a service or, by default, a namespace.
SERVICE_NAME_ENV = "POWERTOOLS_SERVICE_NAME"
SERVICE_NAME = "median-tools"  # when the environment names none (make serve, a script)
METRICS_NAMESPACE_ENV = "POWERTOOLS_METRICS_NAMESPACE"
METRICS_NAMESPACE = "MedianTools"  # when the environment names none (make serve, tests)
# Tracing is on only where this is set to false (template.yaml: EnableTracing=true).
TRACE_DISABLED_ENV = "POWERTOOLS_TRACE_DISABLED"
# The version Lambda runs (its number; `$LATEST` for an unpublished function, and where nothing sets
# it): the `function_version` dimension of the handler's metrics, which the rollback alarms read for
# the version a deployment brings.
FUNCTION_VERSION_ENV = "AWS_LAMBDA_FUNCTION_VERSION"
UNPUBLISHED_VERSION = "$LATEST"
# Metrics are off where the first is true, or the second is and the first is unset: Powertools' rule.
METRICS_DISABLED_ENV = "POWERTOOLS_METRICS_DISABLED"
POWERTOOLS_DEV_ENV = "POWERTOOLS_DEV"
# What Powertools warns at each flush of an empty set; most calls' tools record nothing through it.
EMPTY_FLUSH_WARNING = "No application metrics to publish"

# --- Manifest rules Median enforces at sync -------------------------------------
MAX_TOOLS = 20
MAX_MANIFEST_BYTES = 500_000
MAX_FIELDS = 20
MAX_SCHEMA_CHARS = 8_000
# The safe intersection of the major model APIs' function-name rules.
NAME_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
NAME_RULE = "a letter, then up to 63 letters, digits or underscores"
RESERVED_NAMES = frozenset(
    {
        "searchKnowledgeBase",
        "searchPastConversations",
        "requestHandoff",
        "saveVisitorDetails",
        "resolveConversation",
        "closeConversation",
        "suggestKnowledge",
        "suggestTool",
        "reportBug",
        "suggestImprovement",
        "searchSignals",
        "requestScreenshot",
    }
)
RISKS = ("low", "medium", "reviewed", "high")
# What each risk makes Median do, in the seed page's words: shown to authors (the inspector).
RISK_MEANINGS = {
    "low": "Runs as soon as the agent calls it.",
    "medium": "Runs when called; the agent first asks for the customer's yes.",
    "reviewed": (
        "Asks for the customer's yes, then waits for an automated reviewer, which may hand the call to a teammate."
    ),
    "high": "Waits for a teammate's approval in the conversation.",
}
SCALAR_TYPES = ("string", "number", "integer", "boolean")

# --- The tools package ---------------------------------------------------------------
# The package whose modules hold the endpoint's tools: `tools/`, beside `handler/`.
TOOLS_PACKAGE = "tools"
# Names another importable package to serve instead (dotted, e.g. `tests.sample_tools`). Unset
# everywhere a user works; the framework's own tests set it, so they never depend on `tools/`.
TOOLS_PACKAGE_ENV = "MEDIAN_TOOLS_PACKAGE"

# --- The prebuilt manifest ---------------------------------------------------------
# `sam build` writes GET's answer, as `python -m median_lambda manifest` prints it, to this file
# beside median_lambda/app.py in the artifact; GET serves it without importing the tools or pydantic.
# A source checkout has none, and GET builds the manifest from the tools instead.
PREBUILT_MANIFEST_FILE = "manifest.json"

# --- The stage ---------------------------------------------------------------------
# The table of tools/settings.toml whose values override its [default]: template.yaml's Stage
# parameter. A stage is `default` or one of the file's tables; any other is refused at start,
# unless the project has no settings.toml at all (ANY_STAGE).
STAGE_ENV = "MEDIAN_STAGE"
DEFAULT_STAGE = "default"
# `sam build` writes the stages tools/settings.toml declares, one a line, beside the prebuilt
# manifest (`python -m median_lambda stages`): a container checks its stage without reading TOML.
PREBUILT_STAGES_FILE = "stages.txt"
# Among those stages: every name is one, as in a project with no tools/settings.toml at all, where no
# stage has a value of its own to miss, so a deploy as any stage samconfig.toml names is served.
ANY_STAGE = "*"

# --- Where each tool lives ------------------------------------------------------------
# `sam build` writes which module of the tools package holds each tool, and the diagnostics,
# beside the prebuilt manifest (`median tool-modules`): a cold POST imports only the module of the
# tool it runs. A source checkout has none, and a POST imports the whole package.
PREBUILT_TOOL_MODULES_FILE = "tool_modules.json"

# --- POST operations -------------------------------------------------------------
OP_CALL = "call"
OP_DIAGNOSTICS = "diagnostics"
OPS = (OP_CALL, OP_DIAGNOSTICS)


class ErrorCode:
    """The `error.code` values an answer may carry."""

    UNAUTHORIZED = "unauthorized"
    # The dev server's only (`make serve`): a request from another site's page, or by a
    # name other than loopback's (DNS rebinding). A deployed endpoint never sends it.
    FORBIDDEN = "forbidden"
    NO_KEY = "no_key"
    INVALID_MANIFEST = "invalid_manifest"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    BAD_REQUEST = "bad_request"
    UNSUPPORTED_VERSION = "unsupported_version"
    UNKNOWN_TOOL = "unknown_tool"
    NO_DIAGNOSTICS = "no_diagnostics"
    INVALID_INPUT = "invalid_input"
    TOOL_ERROR = "tool_error"
    INTERNAL_ERROR = "internal_error"
    TOO_LARGE = "too_large"
    IN_PROGRESS = "in_progress"
    CALL_ID_REUSED = "call_id_reused"
    TIMEOUT = "timeout"
