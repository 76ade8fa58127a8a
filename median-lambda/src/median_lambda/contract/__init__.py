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

from median_lambda.contract import (
    test_artifact,
    test_iam_patterns_own_stack,
    test_idempotency,
    test_manifest,
    test_permissions_boundary,
    test_pipeline_role,
    test_post,
    test_signature,
)

# The suite's modules, in the order `make test` runs and summarises them.
SUITE = (
    test_signature,
    test_manifest,
    test_post,
    test_idempotency,
    test_artifact,
    test_permissions_boundary,
    test_pipeline_role,
    test_iam_patterns_own_stack,
)
# Every test of every module, and nothing else, for `from median_lambda.contract import *`.
__all__ = [name for module in SUITE for name in vars(module) if name.startswith("test_")]
globals().update({name: getattr(module, name) for module in SUITE for name in vars(module) if name.startswith("test_")})
