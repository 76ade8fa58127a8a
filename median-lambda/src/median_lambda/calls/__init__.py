"""POST: one call of one tool.

`dispatch` validates the input and runs the tool; `idempotency` makes a retried call answer
from its record; `deadline` and `event_loop` stop a tool at Lambda's deadline (sync and async);
`whole_numbers` reads a JSON number the schema calls an integer.
"""
