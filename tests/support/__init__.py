"""The project's own test machinery, which the tests and the bench share and no user's test needs.

`cold_start`: the handler laid out as an artifact and run in a new process; `secrets_extension`:
the Parameters and Secrets Lambda Extension stood in; `ports`: a free loopback port; `ledger`: an
HTTP API that counts the writes it takes. A user's tests use `median_lambda.testing` instead;
nothing under handler/ imports this package.
"""
