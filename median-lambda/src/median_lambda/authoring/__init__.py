"""The author's API, and what collects what an author writes.

`api` is `@tool`, `@diagnostics`, `ToolContext` and `ToolError` (median_lambda/__init__.py is their
public face); `settings` and `dependencies` fill a tool's Settings, Secret and Parameter arguments;
`registry` loads tools/ and holds what `@tool` records; `registration` finds mistakes that show
only once the modules have run; `local_crash` explains a crash away from Lambda.
"""
