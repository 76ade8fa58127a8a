"""`make bench` (`python -m bench`): the endpoint against the least any correct endpoint must do, and against a peer.

A room per concern, in the order a run uses them:

- `__main__`: the command line, and what a run prints and writes.
- `plan`: `measure`, the run step by step.
- `environment`: the stage: the artifact `median build-artifact` makes, the production stage's
  environment from template.yaml, moto, the extension's stand-in, the events.
- `floors`: the least any correct endpoint must do, cold and warm.
- `peer`: the same endpoint written by hand with Powertools, serving the example's orderStatus.
- `cold`: timing new processes; `warm`: running warm containers, whose code is `container` (the loops),
  `breakdown` (a warm POST step by step) and `warm_ideas`.
- `ratios`: a row as a ratio of paired samples, and the targets; `cases`: which row weighs what.
- `ideas`: the cold alternatives bench/README.md weighs; `footprint`: imports, client creation.
- `report`: the table, bench/results.json, and the Markdown table.

Nothing here is in the artifact, nor imported by the handler: the processes that run `bench.peer`,
`bench.floors` and `bench.container` beside it find them in this repository, after the artifact
on their path.
"""
