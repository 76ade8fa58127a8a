"""The Powertools Logger every module of the handler logs through.

Service name and level come from POWERTOOLS_SERVICE_NAME and POWERTOOLS_LOG_LEVEL (set in
template.yaml's Globals). Nothing logged here may carry the key, a signature or a tool's
input values: they are customers' data.
"""

from __future__ import annotations

from aws_lambda_powertools import Logger

logger = Logger(service="median-tools")
