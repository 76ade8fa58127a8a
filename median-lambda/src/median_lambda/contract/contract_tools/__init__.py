"""The contract suite's own tools: what it runs where a tool must run (a call retried through the
idempotency table), so that it never runs one of yours. Served by $MEDIAN_TOOLS_PACKAGE, in place of
tools/, by the `contract_tools` fixture (median_lambda/contract/conftest.py)."""
