"""`median`, the project's commands (`median --help`; the project's Makefile runs each): median_lambda.cli.commands.

`commands` is the command line and which module runs each command; `checks`, `requests`,
`scaffold`, `tool_tests`, `artifact`, `validate`, `local`, `deploy` and `smoke_check` run them,
with their helpers beside them. Never in the Lambda artifact: the build leaves cli/ behind
(median_lambda.build.sources.DEVELOPER_PARTS), and `median check-artifact` refuses it there.
"""
