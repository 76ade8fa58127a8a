"""GET: the manifest, and Median's sync rules.

`schema` turns a tool's input model into the flat JSON Schema the protocol allows; `rules` are
the rules Median's sync applies to a manifest; `build` assembles the manifest from the tools.
"""
