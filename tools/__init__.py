"""Your tools: one module each. Every module here whose name does not start with `_` is loaded."""
