#!/usr/bin/env bash
# The README's "Make it yours", proven: in a temporary copy of this repository, delete the
# example tools and their tests, scaffold a tool with `make new-tool`, and run
# `make lint test check build` there. Any step that fails fails the script.
#
#   make swap-check                  # or scripts/swap_examples.sh
#   KEEP=1 make swap-check           # keep the copy afterwards, to look into it
#   NAME=my_tool make swap-check     # scaffold another name
#
# Cheap: the copy runs on this checkout's virtualenvs (VENV=, the SAM CLI's inside it), so
# nothing is installed again; only `make build` fetches the function's wheels, as it always does.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# What the README's "Make it yours" deletes (tests/integration/test_readme.py holds both to one list).
examples=(tools/orders.py tools/_sample_store.py tools/health.py tests/tools)
name=${NAME:-loyalty_points}
venv=$(cd "$root" && cd "${VENV:-.venv}" && pwd)

copy=$(mktemp -d "${TMPDIR:-/tmp}/median-swap.XXXXXX")
cleanup() {
  if [ -n "${KEEP:-}" ]; then echo "swap-check: the copy is kept in $copy" >&2; else rm -rf "$copy"; fi
}
trap cleanup EXIT

step() { printf '\n--- swap-check: %s\n' "$*" >&2; }
in_copy() { make --no-print-directory -C "$copy" VENV="$venv" "$@"; }

step "copy the repository to $copy"
# The working tree as a clone (plus your changes) has it: no git, virtualenvs, build or caches.
# tar keeps modification times, so the copy's pyproject.toml is no newer than the venv's stamp.
tar -C "$root" -cf - \
  --exclude=./.git --exclude=./.venv --exclude=./.venv-py313 --exclude=./.aws-sam \
  --exclude=__pycache__ --exclude=.pytest_cache --exclude=.mypy_cache --exclude=.ruff_cache \
  --exclude=.hypothesis . | tar -C "$copy" -xf -

step "delete the examples: ${examples[*]}"
(cd "$copy" && rm -rf -- "${examples[@]}")

step "make new-tool NAME=$name"
in_copy new-tool NAME="$name"

step "make lint test check build"
in_copy lint test check build
(cd "$copy" && "$venv/bin/python" -m scripts.check_artifact)

step "passed: without the examples and with a new tool, every check is green"
