"""`make bench`: what the endpoint costs, as ratios against the least any correct endpoint must do and against a peer.

Every case runs in the same run as what it is weighed against, interleaved with it (the order
rotated every round), so that a busy machine slows both alike and the ratio holds where the
milliseconds do not. A ratio is the median of each round's own ratio.

The endpoint serves the bench's own tool, Median's example `orderStatus` (bench/bench_tools,
named by $MEDIAN_TOOLS_PACKAGE), so it measures the same endpoint whatever `tools/` holds.

  cold GET   a fresh process imports the handler (from an artifact laid out as `sam build`
             lays it, with the prebuilt manifest; its environment as deployed) and answers one
             signed GET. Two configurations: the key through the Parameters and Secrets
             extension's localhost API (the template's default; a stand-in of that API serves
             the secret it reads from Secrets Manager), and through boto3. Against the floor of
             each: start Python, read the key (one GET to the extension's API with http.client,
             or `import boto3` and one GetSecretValue), check the HMAC, answer the prebuilt
             manifest. And against the peer's cold GET.
  cold POST  the first call in a fresh process as deployed: the idempotency table named (moto's
             DynamoDB), the key through the extension; against the table-on floor (the key,
             the HMAC, boto3, one conditional PutItem, one UpdateItem), and against the peer's
             with Powertools Idempotency on the same table.
  warm GET   lambda_handler in a loop, reading the files the build writes as a deployed
             container does; against the HMAC check and the answer. µs per call.
  warm POST  orderStatus through lambda_handler, each call with its own callId, a Lambda
             context (so the time limit is armed), metrics printed, no table (as for a tool
             declared idempotent=False); against the HMAC check, json.loads, the order lookup
             and json.dumps of the output, and against the peer's; and each of its steps alone
             (bench/breakdown.py): where its microseconds go.

The peer (bench/peer.py) is the same endpoint written by hand the way a Powertools user would:
APIGatewayHttpResolver, Parameters' get_secret through boto3, a pydantic model, the signature
checked, Powertools Idempotency where the table is named, nothing more.

Rows for information weigh the rest: the configurations without the table, a tool declared
idempotent=False, the warm POST with the table. Then the ideas bench/README.md weighs, measured
the same way; the size of the `sam build` artifact (when `make build` has put the SAM CLI in .venv/sam-cli); `python -X
importtime` top 10 for median_lambda.app. Secrets Manager and DynamoDB are moto's server on a free
loopback port, reached over HTTP. It prints a table and writes bench/results.json;
`--markdown` prints that file as the README's table.

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
        help="the Python the cold processes run, with only the runtime group installed as in the artifact "
        "(make bench sets up .venv/bench-runtime); default: this one",
    )
    parser.add_argument("--no-package", action="store_true", help="skip `sam build` and the package size")
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
    results = measure(
        arguments.cold_runs, arguments.warm_rounds, not arguments.no_package, not arguments.no_ideas, runtime_python
    )
    print(table(results))
    write_results(results)
    print(f"\nwritten: {RESULTS.relative_to(ROOT)}")
    missed = [case["name"] for case in results["cases"] if case["met"] is False]
    if missed:
        print(f"targets missed: {', '.join(missed)}")
    return 1 if arguments.strict and missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
