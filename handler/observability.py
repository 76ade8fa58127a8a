"""The Powertools Logger every module of the handler logs through, created on first use.

Service name and level come from POWERTOOLS_SERVICE_NAME and POWERTOOLS_LOG_LEVEL (set in
template.yaml's Globals). Nothing logged here may carry the key, a signature or a tool's
input values: they are customers' data.

Importing any Powertools module imports its whole package (Logger, Metrics, Tracer), which
costs a cold GET more than its target allows, and a served GET logs nothing. So this module
imports Powertools only when something is first logged: write `observability.logger.info(…)`
at the call, not `from handler.observability import logger` at the top of a module that GET
imports. tests/integration/test_cold_get.py holds GET to that.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aws_lambda_powertools import Logger

    logger: Logger

SERVICE_NAME = "median-tools"


def __getattr__(name: str) -> Any:
    if name == "logger":
        from aws_lambda_powertools import Logger

        created = globals()["logger"] = Logger(service=SERVICE_NAME)
        return created
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
