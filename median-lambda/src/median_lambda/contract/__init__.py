"""The contract suite: proof that this project's endpoint answers Median as the protocol says.

It runs on the project's own tools/, tools/settings.toml and template.yaml, whatever they hold
(no tool at all included), in the configuration template.yaml deploys: the Median key read from
Secrets Manager, the idempotency table on, a Lambda context with the function's timeout, moto's
server standing in for AWS over HTTP. It never runs one of your tools: each refusal it asks for
comes before a tool would run, and what must run a tool (a retried callId) runs on the suite's own
package, tests/contract/contract_tools/. Beside the protocol, it holds the deployment the project
ships to it: the pipeline's roles and permissions boundary (pipeline/oidc-role.yaml) against what
template.yaml declares and grants, so a resource or a right you add fails here, named, before a
deploy fails in AWS.

The template owns this folder: `copier update` replaces it with the template's next version, so
keep your own tests in tests/tools/. Nothing here imports from elsewhere in tests/.
"""
