"""`make bench` (`python -m bench`): the endpoint against the least any correct endpoint must do, and against a peer.

A room per concern, in the order a run uses them:

- `__main__`: the command line, and what a run prints and writes.
- `plan`: `measure`, the run step by step.
- `environment`: the stage: moto, the extension's stand-in, a function's environment, the
  artifacts, the events.
- `floors`: the least any correct endpoint must do, cold and warm.
- `peer`: the same endpoint written by hand with Powertools; `bench_tools`: the tool all three serve.
- `cold`, `warm`: timing new processes, and loops in this process; `breakdown`: a warm POST step by step.
- `ratios`: a row as a ratio of paired samples, and the targets; `cases`: which row weighs what.
- `ideas`: the alternatives bench/README.md weighs; `footprint`: imports, client, artifact size.
- `report`: the table, bench/results.json, and the Markdown table.

Nothing here is imported by the handler: the cold processes import `bench.peer` and
`bench.bench_tools` from an artifact that holds those two alone.
"""
