#!/usr/bin/env bash
# The README's "Make it yours", proven: in a temporary copy of this repository, delete the
# example tools and their tests, and their blocks in template.yaml and tools/settings.toml
# (scripts/remove_example_blocks.py), see `make test-tools` succeed with no tool tests, scaffold
# a tool with `make new-tool`, add a user's own project on real systems (docs/your-own-systems.md's
# settings.toml, tools and tests, as a user copies them: a value in every stage, [default]
# included, and values only staging or production has), and run `make lint test check build`
# there. Any step that fails fails the script.
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

step "make test-tools, with no tool tests yet"
in_copy test-tools

step "make new-tool NAME=$name"
in_copy new-tool NAME="$name"

step "a project of the user's own: docs/your-own-systems.md's settings.toml, tools and tests"
# The framework's tests must never read these as if they were the examples: real values in every
# stage, and two that only staging and production have (which no tool reads).
(cd "$copy" && .venv/bin/python - <<'PYTHON'
from pathlib import Path

from tests.project_copy import snippet_files

for path, source in snippet_files(Path("docs/your-own-systems.md").read_text(encoding="utf-8")).items():
    Path(path).write_text(source, encoding="utf-8")
    print(f"wrote {path}")
settings = Path("tools/settings.toml")
text = settings.read_text(encoding="utf-8")
for stage, line in (("staging", "CARRIER_RETRIES = 1"), ("production", "CARRIER_RETRIES = 3")):
    assert text.count(f"[{stage}]\n") == 1, f"tools/settings.toml has no one [{stage}] table"
    text = text.replace(f"[{stage}]\n", f"[{stage}]\n{line}\n")
settings.write_text(text, encoding="utf-8")
PYTHON
)

step "make lint test check build"
in_copy lint test check build
(cd "$copy" && .venv/bin/python -m scripts.check_artifact)

step "passed: without the examples, with a new tool and a project on real systems, every check is green"
