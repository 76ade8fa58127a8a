#!/usr/bin/env bash
# The README's "Make it yours", proven on the road a user takes: copy a project from this checkout
# (`copier copy`, with the examples, your uncommitted changes included), then in it delete the
# example tools and their tests, and their blocks in template.yaml, tools/settings.toml and
# pipeline/oidc-role.yaml (median remove-examples), see `make test-tools` succeed with no
# tool tests, scaffold a tool with `make new-tool`, add a user's own project on real systems
# (docs/your-own-systems.md's settings.toml, tools and tests, as a user copies them: a value in
# every stage, [default] included, and values only staging or production has; its template and
# pipeline fragments, a company's table and one the stack creates, in their `yours` blocks), and
# run `make lint test check validate build` there. Any step that fails fails the script.
#
#   make swap-check                  # or maintainers/swap_examples.sh
#   KEEP=1 make swap-check           # keep the project afterwards, to look into it
#   NAME=my_tool make swap-check     # scaffold another name
#
# The project makes its own virtualenvs, as a user's does (uv's cache keeps that to seconds): the
# full suite of this repository is not the project's, and its twins and template tests hold only
# here, where nobody deletes the examples.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# What the README's "Make it yours" deletes (tests/integration/test_readme.py holds both to one list), and what
# it keeps of tests/tools/: the package, and the seed hook.
examples=(tools/orders.py tools/_sample_store.py tools/health.py tools/returns.py tests/tools/conftest.py
  tests/tools/test_health.py tests/tools/test_orders.py tests/tools/test_returns.py tests/tools/test_returns_template.py)
kept=(tools/__init__.py tests/tools/__init__.py tests/tools/local_aws_seed.py)
name=${NAME:-loyalty_points}
venv=$(cd "$root" && cd "${VENV:-.venv}" && pwd -P)

scratch=$(mktemp -d "${TMPDIR:-/tmp}/median-swap.XXXXXX")
copy="$scratch/project"
cleanup() {
  if [ -n "${KEEP:-}" ]; then echo "swap-check: the project is kept in $copy" >&2; else rm -rf "$scratch"; fi
}
trap cleanup EXIT

step() { printf '\n--- swap-check: %s\n' "$*" >&2; }
in_copy() { env -u VIRTUAL_ENV -u MAKEFLAGS -u MAKELEVEL make --no-print-directory -C "$copy" "$@"; }

step "copier copy this checkout, with its examples, to $copy"
# From a clone with what the working tree changed committed (the template proof's own clone):
# Copier reads a git template's tracked files, never the virtualenvs, builds or the dev key beside them.
template=$(cd "$root" && "$venv/bin/python" -c \
  'import sys; from pathlib import Path; from maintainers.template_proof import template_clone; print(template_clone(Path(sys.argv[1])))' \
  "$scratch")
# uv on PATH, as a user who runs `uvx copier copy` has it: the task that writes uv.lock runs it.
PATH="$venv/bin:$PATH" "$venv/copier/bin/copier" copy --trust --defaults --quiet --vcs-ref HEAD "$template" "$copy"
in_copy install

step "make remove-examples: the README's Make it yours (${examples[*]}, and their blocks)"
in_copy remove-examples
for example in "${examples[@]}"; do
  [ ! -e "$copy/$example" ] || { echo "swap-check: make remove-examples left $example" >&2; exit 1; }
done
for own in "${kept[@]}"; do
  [ -e "$copy/$own" ] || { echo "swap-check: make remove-examples deleted $own" >&2; exit 1; }
done

step "make test-tools, with no tool tests yet"
in_copy test-tools

step "make new-tool NAME=$name"
in_copy new-tool NAME="$name"

step "a project of the user's own: the guide your-own-systems.md's settings.toml, tools and tests"
# The contract suite must never read these as if they were the examples: real values in every
# stage, and two that only staging and production have (which no tool reads). The snippets are
# cut by this checkout's tests/project_copy.py, which a project does not hold.
(cd "$root" && "$venv/bin/python" - "$copy" <<'PYTHON'
import sys
from pathlib import Path

from tests.project_copy import paste_fragments, snippet_files

project = Path(sys.argv[1])
guide = Path("docs/your-own-systems.md")  # the template repository's: a project links to it
for path, source in snippet_files(guide.read_text(encoding="utf-8")).items():
    (project / path).write_text(source, encoding="utf-8")
    print(f"wrote {path}")
# Its template and pipeline fragments (the company's table, one the stack creates), in their `yours` blocks.
for place in paste_fragments(project, guide.read_text(encoding="utf-8")):
    print(f"pasted the guide's fragment under {place}")
settings = project / "tools/settings.toml"
text = settings.read_text(encoding="utf-8")
for stage, line in (("staging", "CARRIER_RETRIES = 1"), ("production", "CARRIER_RETRIES = 3")):
    assert text.count(f"[{stage}]\n") == 1, f"tools/settings.toml has no one [{stage}] table"
    text = text.replace(f"[{stage}]\n", f"[{stage}]\n{line}\n")
settings.write_text(text, encoding="utf-8")
# The guide's staging table, as it says: the Parameter named as the setting, set where the stage is.
samconfig = project / "samconfig.toml"
text = samconfig.read_text(encoding="utf-8")
assert text.count(" Stage=staging") == 1, "samconfig.toml has no one staging deploy"
samconfig.write_text(text.replace(" Stage=staging", " Stage=staging ParcelsTable=parcels-staging"), encoding="utf-8")
PYTHON
)

step "make lint test check validate build"
in_copy lint test check validate build
(cd "$copy" && .venv/bin/median check-artifact)

step "passed: without the examples, with a new tool and a project on real systems, every check is green"
