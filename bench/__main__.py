"""`make bench`: what the endpoint costs as deployed, against the least any correct endpoint must do and a peer.

What it measures is what deploys: the artifact `median build-artifact` makes of this project (the
build `sam build` runs), with the example project's own tools/ and the production stage's
environment as template.yaml gives it (the key through the Parameters and Secrets extension, whose
localhost API a stand-in serves; the idempotency table on moto's DynamoDB over HTTP). The report
says which artifact, tools and environment it measured. Every row serves tools/orders.py's
`orderStatus`, a read declared `idempotent=False`; the rows with the table serve a copy of the
artifact where it is declared back into the record, as the peer records it.

Every case runs in the same run as what it is weighed against, interleaved with it (the order
rotated every round), so that a busy machine slows both alike and the ratio holds where the
milliseconds do not. A ratio is the median of each round's own ratio.

  cold GET   a fresh process imports handler.app from the artifact and answers one signed GET,
             the key through the extension's API (the template's default) or through boto3;
             against the floor of each: start Python, read the key, check the HMAC, answer the
             prebuilt manifest. And against the peer's cold GET.
  cold POST  the first call in a fresh process as deployed, through the record; against the
             table-on floor (the key, the HMAC, boto3, one conditional PutItem, the lookup, one
             UpdateItem), and against the peer's with Powertools Idempotency on the same table.
  warm GET   lambda_handler in a loop in a warm container (a process of its own on the artifact);
             against the HMAC check and the answer. µs per call.
  warm POST  orderStatus through lambda_handler, each call with its own callId, a Lambda context
             (so the time limits are armed), its metrics printed, no table (a read); against the
             HMAC check, json.loads, the order lookup and json.dumps of the output, and against the
             peer's; and each of its steps alone (bench/breakdown.py): where its microseconds go.

The peer (bench/peer.py) is the same endpoint written by hand the way a Powertools user would:
APIGatewayHttpResolver, Parameters' get_secret through boto3, a pydantic model, the signature
checked, Powertools Idempotency where the table is named, and the same per-tool metrics through
Powertools Metrics; nothing more.

Rows for information weigh the rest: the configurations without the table, the read as declared,
the warm POST with the table. Then the ideas bench/README.md weighs, measured the same way; the
artifact's size; `python -X importtime` top 10 for handler.app. It prints a table and writes
bench/results.json; `--markdown` prints that file as the README's table.

The plan is bench/plan.py's `measure`; bench/__init__.py lists where each concern lives.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.environment import ROOT
from bench.plan import measure
from bench.report import RESULTS, markdown, markdown_breakdown, read_results, table, write_results


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cold-runs", type=int, default=21, help="rounds of the cold processes (default 21)")
    parser.add_argument("--warm-rounds", type=int, default=21, help="rounds of each warm loop (default 21)")
    parser.add_argument(
        "--runtime-python",
        default=sys.executable,
        help="the Python the function's processes run, beside the artifact: make bench's .venv/bench-runtime, "
        "whose boto3 stands in for the Lambda runtime's; default: this one",
    )
    parser.add_argument("--no-ideas", action="store_true", help="only the cases and the rows for information")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--markdown", action="store_true", help="print bench/results.json as a Markdown table")
    parser.add_argument("--ideas", action="store_true", help="with --markdown: the ideas' rows too")
    parser.add_argument(
        "--breakdown", action="store_true", help="with --markdown: where a warm POST's microseconds go, as a table"
    )
    arguments = parser.parse_args()
    if arguments.markdown:
        results = read_results()
        print(markdown_breakdown(results) if arguments.breakdown else markdown(results, with_ideas=arguments.ideas))
        return 0
    # Absolute, as the processes run in the artifact's directory; not resolved, which would leave the venv.
    runtime_python = str(Path.cwd() / arguments.runtime_python)
    results = measure(arguments.cold_runs, arguments.warm_rounds, not arguments.no_ideas, runtime_python)
    print(table(results))
    write_results(results)
    print(f"\nwritten: {RESULTS.relative_to(ROOT)}")
    missed = [case["name"] for case in results["cases"] if case["met"] is False]
    if missed:
        print(f"targets missed: {', '.join(missed)}")
    return 1 if arguments.strict and missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
