#!/usr/bin/env bash
# The README's "Make it yours", proven: in a temporary copy of this repository, delete the
# example tools and their tests, and their blocks in template.yaml and tools/settings.toml
# (scripts/remove_example_blocks.py), scaffold a tool with `make new-tool`, and run
# `make lint test check build` there. Any step that fails fails the script.
#
#   make swap-check                  # or scripts/swap_examples.sh
#   KEEP=1 make swap-check           # keep the copy afterwards, to look into it
#   NAME=my_tool make swap-check     # scaffold another name
#
# Cheap: the copy's .venv is a link to this checkout's virtualenv (VENV=, .venv by default),
# the SAM CLI's inside it, so nothing is installed again; only `make build` fetches the
# function's wheels, as it always does. A link rather than `make VENV=...`: the commands the
# project prints (and its tests run) say `.venv/bin/python`, as in any clone.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# What the README's "Make it yours" deletes (tests/integration/test_readme.py holds both to one list).
examples=(tools/orders.py tools/_sample_store.py tools/health.py tools/returns.py tests/tools)
name=${NAME:-loyalty_points}
venv=$(cd "$root" && cd "${VENV:-.venv}" && pwd -P)

copy=$(mktemp -d "${TMPDIR:-/tmp}/median-swap.XXXXXX")
cleanup() {
  if [ -n "${KEEP:-}" ]; then echo "swap-check: the copy is kept in $copy" >&2; else rm -rf "$copy"; fi
}
trap cleanup EXIT

step() { printf '\n--- swap-check: %s\n' "$*" >&2; }
in_copy() { make --no-print-directory -C "$copy" "$@"; }

# The SAM CLI's venv, installed here first: made through the copy's link, its scripts would
# name the copy's path as their interpreter, and stop working once the copy is gone.
step "the SAM CLI, installed in $root"
make --no-print-directory -C "$root" VENV="${VENV:-.venv}" "${VENV:-.venv}/sam-cli/.installed" >/dev/null

step "copy the repository to $copy"
# What a clone has, with your changes and new files: nothing git ignores (virtualenvs, builds,
# caches, the dev key). tar keeps modification times, so the copy's pyproject.toml is no newer
# than the virtualenv's install stamp and nothing is installed again.
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$root" && git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' file; do
    if [ -e "$file" ]; then printf '%s\0' "$file"; fi  # a tracked file you deleted is not copied
  done | tar --null -T - -cf -) | tar -C "$copy" -xf -
else
  tar -C "$root" -cf - --exclude=./.venv --exclude=./.aws-sam \
    --exclude=./.median-dev-key --exclude=__pycache__ --exclude=.pytest_cache --exclude=.mypy_cache \
    --exclude=.ruff_cache --exclude=.hypothesis . | tar -C "$copy" -xf -
fi

ln -s "$venv" "$copy/.venv"

step "delete the examples: ${examples[*]}"
(cd "$copy" && rm -rf -- "${examples[@]}")
step "delete the examples' blocks in template.yaml and tools/settings.toml"
(cd "$copy" && .venv/bin/python -m scripts.remove_example_blocks)

step "make new-tool NAME=$name"
in_copy new-tool NAME="$name"

step "make lint test check build"
in_copy lint test check build
(cd "$copy" && .venv/bin/python -m scripts.check_artifact)

step "passed: without the examples and with a new tool, every check is green"
