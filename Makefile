# Each target makes the venv if need be, then runs one of median-lambda's commands (.venv/bin/median
# --help lists them): a fresh clone runs `make test` or `make serve` directly.
VENV := .venv
BIN := $(VENV)/bin
MEDIAN := $(BIN)/median
INSTALLED := $(VENV)/.installed
# template.yaml's Runtime, which every venv is made with: the tests run on what Lambda runs. PYTHON=
# names one; else the first found: on PATH, installed by pyenv, or by `uv python install 3.13`.
LAMBDA_PYTHON := 3.13
ifndef PYTHON
PYTHON := $(firstword $(foreach candidate,python$(LAMBDA_PYTHON) \
	$(wildcard $(HOME)/.pyenv/versions/$(LAMBDA_PYTHON)*/bin/python$(LAMBDA_PYTHON)) \
	$(wildcard $(HOME)/.local/share/uv/python/cpython-$(LAMBDA_PYTHON)*/bin/python$(LAMBDA_PYTHON)), \
	$(shell $(candidate) -c 'import sys; print(sys.executable)' 2>/dev/null)))
endif
NEED_LAMBDA_PYTHON = @$(if $(PYTHON),$(PYTHON) -c 'import sys; sys.exit(sys.version_info[:2] != ($(subst .,$(comma) ,$(LAMBDA_PYTHON))))' 2>/dev/null ||) { \
	echo "This project runs on Python $(LAMBDA_PYTHON), the Lambda runtime's, and $(if $(PYTHON),$(PYTHON) is not it,none was found here)." >&2; \
	echo "Install it (pyenv install $(LAMBDA_PYTHON), uv python install $(LAMBDA_PYTHON), or your system's package), or name it: make PYTHON=/path/to/python$(LAMBDA_PYTHON) ..." >&2; \
	exit 1; }
comma := ,

.DEFAULT_GOAL := help
help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

# --- The venv: uv first, by pip, at the version and with the hashes uv.lock records (read with the
# standard library: nothing is installed yet), then exactly what `uv sync` gives from the lock.
UV := $(BIN)/uv
UV_INSTALLED := $(VENV)/.uv-installed
UV_ENV := UV_PYTHON_DOWNLOADS=never UV_PYTHON=$(BIN)/python
UV_REQUIREMENT = import sys, tomllib; \
	uv = [p for p in tomllib.load(open("uv.lock", "rb"))["package"] if p["name"] == "uv"]; \
	len(uv) == 1 or sys.exit("uv.lock pins no single version of uv: run `uv lock` (or make lock where uv is) and commit uv.lock"); \
	files = ([uv[0]["sdist"]] if "sdist" in uv[0] else []) + uv[0].get("wheels", []); \
	print(f"uv=={uv[0]["version"]}", *(f"--hash={f["hash"]}" for f in files))
# When `uv sync --locked` fails on a lock that no longer matches pyproject.toml, say what fixes it.
STALE_LOCK = { $(UV_ENV) $(UV) lock --check --offline --quiet 2>/dev/null || \
	echo 'uv.lock does not match pyproject.toml: run `make lock` and commit uv.lock' >&2; exit 1; }

$(UV_INSTALLED): uv.lock
	$(NEED_LAMBDA_PYTHON)
	$(PYTHON) -m venv $(VENV)
	$(PYTHON) -c '$(UV_REQUIREMENT)' > $(VENV)/uv-requirement.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r $(VENV)/uv-requirement.txt
	@touch $@
# INSTALL_GROUPS: more of pyproject.toml's dependency groups to install beside dev.
$(INSTALLED): pyproject.toml uv.lock $(UV_INSTALLED)
	$(UV_ENV) UV_PROJECT_ENVIRONMENT=$(VENV) $(UV) sync --quiet --locked $(addprefix --group ,$(INSTALL_GROUPS)) || $(STALE_LOCK)
	@touch $@
install: $(INSTALLED) ## Create .venv from uv.lock: median-lambda, your tools' dependencies, the linters
# uv itself, not `median lock`: a lock that asks for median-lambda anew (an upgrade's) is made before the venv has it.
lock: $(UV_INSTALLED) ## Update uv.lock after a change to pyproject.toml; UPGRADE=PACKAGE (or all) moves one
	$(UV_ENV) $(UV) lock $(if $(filter all,$(UPGRADE)),--upgrade,$(addprefix --upgrade-package ,$(UPGRADE)))

# --- The rest needs the venv. Through the environment, any JSON in INPUT arrives intact; `median
# local` reads LOCAL_ARCH, PARAMETER_OVERRIDES and SAM_FLAGS there, `median serve` PORT and LOCAL_AWS.
export TOOL INPUT URL DIAGNOSTICS KEY_FILE NAME ALSO SOURCE PORT LOCAL_AWS LOCAL_ARCH PARAMETER_OVERRIDES SAM_FLAGS
URL ?= http://127.0.0.1:$(or $(PORT),3000)/
REQUEST = $${TOOL:+--tool "$$TOOL"} $${INPUT:+--input "$$INPUT"} $${DIAGNOSTICS:+--diagnostics}
.PHONY: help install lock audit test test-tools serve check new-tool lint format clean sam-cli build validate \
	event invoke start-api call deploy delete lint-workflows upgrade remove-examples build-MedianToolsFunction \
	build-PreTrafficHook

audit: $(INSTALLED) ## Audit every locked version against known vulnerabilities (OSV)
	$(MEDIAN) audit
test: $(INSTALLED) ## Run the whole test suite: your tools' tests and median-lambda's contract suite
	$(BIN)/python -m pytest
test-tools: $(INSTALLED) ## Run only your tools' tests, tests/tools/ (seconds; make test runs everything)
	$(MEDIAN) test-tools
serve: $(INSTALLED) ## Serve the endpoint and its inspector on http://127.0.0.1:3000 (PORT=); LOCAL_AWS=moto: no AWS account
	$(MEDIAN) serve
check: $(INSTALLED) ## Check the tools against Median's sync rules and every stage; ALSO="SOURCE ..." adds other endpoints
	$(MEDIAN) check $${ALSO:+--also $$ALSO} $${KEY_FILE:+--key-file "$$KEY_FILE"}
new-tool: $(INSTALLED) ## Write tools/NAME.py, a working tool, and its tests: NAME=loyalty_points
	@[ -n "$$NAME" ] || { echo "Name the tool's module: make new-tool NAME=loyalty_points" >&2; exit 2; }
	$(MEDIAN) new-tool "$$NAME"
lint: $(INSTALLED) ## The lock matches pyproject.toml and the template version; ruff (lint and format); mypy on handler/ and tools/
	$(MEDIAN) lock --check
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && $(BIN)/mypy
format: $(INSTALLED) ## Fix what ruff can fix and format the code
	$(BIN)/ruff check --fix . && $(BIN)/ruff format .
clean: ## Remove the virtualenv, caches and build output
	rm -rf $(VENV) .aws-sam .pytest_cache .mypy_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
remove-examples: $(INSTALLED) ## Delete the example tools and tests the template wrote, and their blocks
	$(MEDIAN) remove-examples
upgrade: $(INSTALLED) ## Take a later version of the template and median-lambda, then check; VERSION=v3.1.0, SOURCE=fork
	$(MEDIAN) upgrade $(VERSION) $${SOURCE:+--source "$$SOURCE"}

# --- AWS SAM and the linters of what it deploys: each a venv of its own in .venv, as median-lambda
# pins it, made when a command first needs it.
sam-cli: $(INSTALLED) ## Install the pinned SAM CLI in .venv/sam-cli (make build does it too)
	$(MEDIAN) tool-venv sam-cli
build: $(INSTALLED) ## sam build: the Lambda artifact in .aws-sam/build (no Docker, no AWS account)
	$(MEDIAN) build
validate: $(INSTALLED) ## sam validate --lint, serverless rules, Checkov; a version left stale, Lambda's limits
	$(MEDIAN) validate
event: $(INSTALLED) ## A freshly signed event in events/ for sam local: TOOL=name INPUT='{...}', or a GET
	$(MEDIAN) event $(REQUEST) && $(MEDIAN) local-env
invoke: $(INSTALLED) ## sam local invoke with a fresh event: TOOL=name INPUT='{...}', or a GET; LOCAL_ARCH=, SAM_FLAGS=
	$(MEDIAN) local invoke $(REQUEST)
start-api: $(INSTALLED) ## sam local start-api on http://127.0.0.1:3001 (PORT=), verifying with the local dev key
	$(MEDIAN) local start-api
call: $(INSTALLED) ## A signed request to URL= (make serve's by default): TOOL=, INPUT=, DIAGNOSTICS=1
	$(MEDIAN) call "$$URL" $(REQUEST) $${KEY_FILE:+--key-file "$$KEY_FILE"}
deploy: $(INSTALLED) ## Preflight (asks once what samconfig.toml lacks), sam build, sam deploy; needs the key's secret
	$(MEDIAN) deploy
delete: $(INSTALLED) ## Delete the deployed stack (the key's secret stays)
	$(MEDIAN) delete
lint-workflows: $(INSTALLED) ## Check .github/: GitHub's schemas (check-jsonschema) and zizmor's audits, offline
	$(MEDIAN) lint-workflows

# sam build runs these (template.yaml's Metadata: BuildMethod makefile, which requires these names) in
# this folder, with ARTIFACTS_DIR set: the tools are checked, then the artifact is built there. The
# PreTraffic hook runs from the function's artifact (it compares what a new version answers with the
# manifest in it): sam build builds each function of its own, so it is built again for the hook.
build-MedianToolsFunction build-PreTrafficHook: $(INSTALLED)
	$(if $(ARTIFACTS_DIR),,$(error ARTIFACTS_DIR is not set: run 'make build' or 'sam build', not this target))
	$(MEDIAN) build-artifact "$(ARTIFACTS_DIR)"

# Targets of your own, in *.mk files beside this Makefile, are included here: this file stays the
# template's, for `make upgrade` to merge, and yours stay yours. `make help` lists those with `## `.
-include $(wildcard *.mk)
