"""The contract suite: proof that this project's endpoint answers Median as the protocol says.

It runs on the project's own tools/, tools/settings.toml and template.yaml, whatever they hold
(no tool at all included), in the configuration template.yaml deploys: the Median key read from
Secrets Manager, the idempotency table on, a Lambda context with the function's timeout, moto's
server standing in for AWS over HTTP. It never runs one of your tools: each refusal it asks for
comes before a tool would run, and what must run a tool (a retried callId) runs on the suite's own
package, median_lambda/contract/contract_tools/. Beside the protocol, it holds the deployment the project
ships to it: the pipeline's roles and permissions boundary (pipeline/oidc-role.yaml) against what
template.yaml declares and grants, so a resource or a right you add fails here, named, before a
deploy fails in AWS.

A project runs it from one file, tests/test_median_contract.py:

    from median_lambda.contract import *  # noqa: F403

which gives pytest every test of the modules below, as tests of that file; the suite's fixtures and
its summary at the end of `make test` come with median-lambda, as a pytest plugin
(median_lambda.contract.fixtures). A new version of the library brings its new tests with it.
"""

from __future__ import annotations

import importlib
from typing import Any

# The suite's modules, in the order `make test` runs and summarises them.
SUITE_MODULES = (
    "test_signature",
    "test_manifest",
    "test_post",
    "test_idempotency",
    "test_artifact",
    "test_permissions_boundary",
    "test_pipeline_role",
    "test_iam_patterns_own_stack",
)


def __getattr__(name: str) -> Any:
    """The suite's tests (and `__all__`, every one of them), imported the first time one is asked for.

    pytest imports this package with the suite's fixtures (median_lambda.contract.fixtures) in every
    run of a venv that has median-lambda; the suite itself, and what it needs of the `dev` extra
    (PyYAML, SAM's translator), only in a run that imports it: `from median_lambda.contract import *`.
    """
    if name in SUITE_MODULES or not (name == "__all__" or name.startswith("test_")):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")  # a module is imported as one
    suite = [importlib.import_module(f"{__name__}.{module}") for module in SUITE_MODULES]
    tests = {test: value for module in suite for test, value in vars(module).items() if test.startswith("test_")}
    globals().update(tests, __all__=list(tests))
    if name not in tests and name != "__all__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return globals()[name]
