# Every target sets up what it needs: a fresh clone runs `make test` or `make serve` directly.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
PORT ?= 3000
# template.yaml's Runtime: the Python the function runs on, its wheels and its bytecode.
LAMBDA_PYTHON := 3.13
# That Python on this machine, if it has one (on PATH, or installed by pyenv): it precompiles
# the artifact and runs the suite a second time. Empty where there is none.
ifndef RUNTIME_PYTHON
RUNTIME_PYTHON := $(firstword $(foreach candidate,python$(LAMBDA_PYTHON) \
	$(wildcard $(HOME)/.pyenv/versions/$(LAMBDA_PYTHON)*/bin/python$(LAMBDA_PYTHON)), \
	$(shell $(candidate) -c 'import sys; print(sys.executable)' 2>/dev/null)))
endif

.DEFAULT_GOAL := help
.PHONY: help install test runtime-python test-runtime-python serve check new-tool swap-check lint format clean

help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

$(INSTALLED): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade "pip>=25.1"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --group dev
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --group translator --no-deps
	@touch $@

install: $(INSTALLED) ## Create .venv and install the runtime, test and lint dependencies

test: $(INSTALLED) ## Run the whole test suite
	$(BIN)/python -m pytest

runtime-python: ## Print the Python 3.13 this machine has (empty if none)
	@echo $(RUNTIME_PYTHON)

test-runtime-python: ## Run the suite again on the Lambda runtime's Python 3.13 (in .venv-py313)
	$(if $(RUNTIME_PYTHON),,$(error No Python $(LAMBDA_PYTHON) here: install one, or set RUNTIME_PYTHON=/path/to/python$(LAMBDA_PYTHON)))
	$(MAKE) test PYTHON=$(RUNTIME_PYTHON) VENV=.venv-py313

serve: $(INSTALLED) ## Serve the endpoint on http://127.0.0.1:$(PORT) with a local dev key
	PORT=$(PORT) $(BIN)/python -m devserver

# ALSO="other.json https://..." checks them with the organisation's other endpoints (their
# saved manifests, or their URLs with a signed GET under $MEDIAN_KEY or KEY_FILE=).
check: $(INSTALLED) ## Check the tools against Median's sync rules; ALSO="SOURCE ..." adds other endpoints
	$(BIN)/python -m handler check $${ALSO:+--also $$ALSO} $${KEY_FILE:+--key-file "$$KEY_FILE"}

new-tool: $(INSTALLED) ## Write tools/NAME.py, a working tool, and its tests: NAME=loyalty_points
	@[ -n "$$NAME" ] || { echo "Name the tool's module: make new-tool NAME=loyalty_points" >&2; exit 2; }
	$(BIN)/python -m handler new-tool "$$NAME"

# The README's "Make it yours", proven in a temporary copy on this checkout's virtualenvs.
swap-check: $(INSTALLED) ## In a temporary copy: delete the examples, make new-tool, make lint test check build
	VENV="$(VENV)" scripts/swap_examples.sh

lint: $(INSTALLED) ## ruff (lint and format) and mypy on handler/
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(INSTALLED) ## Fix what ruff can fix and format the code
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean: ## Remove the virtualenv, caches and build output
	rm -rf $(VENV) .venv-py313 .aws-sam .pytest_cache .mypy_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +

# --- SAM: build, local invoke, deploy (issue 3) --------------------------------------
# The SAM CLI gets a virtualenv of its own, made only when a target here needs it: `make
# test` stays light, and SAM's pins (it holds pydantic back) never change what the tests run on.
SAM_VENV := $(VENV)/sam-cli
SAM_INSTALLED := $(SAM_VENV)/.installed
SAM := $(SAM_VENV)/bin/sam
EVENTS := events
ENV_VARS := $(EVENTS)/env.json
URL ?= http://127.0.0.1:$(PORT)/
# Handed to the CLI through the environment rather than spliced into a command line,
# so any JSON (quotes included) arrives intact.
export TOOL INPUT URL DIAGNOSTICS KEY_FILE NAME ALSO
# The CLI's request options, from TOOL=, INPUT= and DIAGNOSTICS=1.
REQUEST_OPTIONS = $${TOOL:+--tool "$$TOOL"} $${INPUT:+--input "$$INPUT"} $${DIAGNOSTICS:+--diagnostics}
# sam local runs the function in a container: say so plainly where none can run.
NEED_CONTAINER = @docker info >/dev/null 2>&1 || finch info >/dev/null 2>&1 || { \
	echo "sam local runs the function in a container, and no Docker (or Finch) is running here." >&2; \
	echo "Start Docker, or use 'make serve' for a local endpoint without one." >&2; exit 1; }

.PHONY: build validate event invoke start-api deploy delete call build-MedianToolsFunction

$(SAM_INSTALLED): pyproject.toml $(INSTALLED)
	$(PYTHON) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --upgrade "pip>=25.1"
	$(SAM_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --group sam
	@touch $@

build: $(SAM_INSTALLED) ## sam build: the Lambda artifact in .aws-sam/build (no Docker, no AWS account)
	$(SAM) build

validate: $(SAM_INSTALLED) ## sam validate --lint: the template and the pipeline's role template, by cfn-lint
	$(SAM) validate --lint
	$(SAM) validate --lint --template pipeline/oidc-role.yaml

# AWS Labs' serverless rules for cfn-lint (cfn-lint-serverless, in the SAM CLI's venv), after
# sam validate's own cfn-lint run: an error (E, ES) fails, a warning (W, WS) is printed. The
# template silences the rules that do not apply to it, each with its reason, in Metadata.
.PHONY: validate-serverless
validate: validate-serverless
validate-serverless: $(SAM_INSTALLED)
	$(SAM_VENV)/bin/cfn-lint template.yaml --append-rules cfn_lint_serverless.rules --non-zero-exit-code error

# sam build runs this (template.yaml: BuildMethod makefile) in this directory, with
# ARTIFACTS_DIR set; samconfig.toml's build_in_source spares it a copy of .venv. The
# manifest check fails the build first; the wheels are Linux ones for the template's
# architecture and CPython 3.13, whatever this machine is; bin/ holds pip's console
# scripts, which nothing in Lambda runs; handler/manifest.json is what GET serves.
build-MedianToolsFunction: $(INSTALLED)
	$(if $(ARTIFACTS_DIR),,$(error ARTIFACTS_DIR is not set: run 'make build' or 'sam build', not this target))
	$(BIN)/python -m handler check
	rm -rf "$(ARTIFACTS_DIR)" && mkdir -p "$(ARTIFACTS_DIR)"
	tar -c --exclude __pycache__ --exclude '*.pyc' handler tools | tar -x -C "$(ARTIFACTS_DIR)"
	machine=$$($(BIN)/python -m scripts.sam_settings wheel-machine) && \
	for group in "--group runtime" "--group tracing --no-deps"; do \
		$(BIN)/python -m pip install --quiet --disable-pip-version-check $$group --target "$(ARTIFACTS_DIR)" \
			--platform manylinux2014_$$machine --implementation cp --python-version $(LAMBDA_PYTHON) \
			--only-binary=:all: --no-compile || exit 1; \
	done
	$(or $(RUNTIME_PYTHON),$(BIN)/python) -m scripts.compile_artifact "$(ARTIFACTS_DIR)" $(LAMBDA_PYTHON)
	rm -rf "$(ARTIFACTS_DIR)/bin"
	$(BIN)/python -m handler manifest > "$(ARTIFACTS_DIR)/handler/manifest.json"

event: $(INSTALLED) ## A freshly signed event in events/ for sam local: TOOL=name INPUT='{...}', or a GET
	$(BIN)/python -m handler event $(REQUEST_OPTIONS)
	$(BIN)/python -m handler local-env --output $(ENV_VARS)

# Signatures go stale after 300 s: each invoke signs its event anew.
invoke: build ## sam local invoke with a fresh event: TOOL=orderStatus INPUT='{"orderNumber":"ORD-1042"}'
	$(NEED_CONTAINER)
	$(BIN)/python -m handler local-env --output $(ENV_VARS) >/dev/null
	event=$$($(BIN)/python -m handler event $(REQUEST_OPTIONS)) && \
		$(SAM) local invoke MedianToolsFunction --event "$$event" --env-vars $(ENV_VARS)

start-api: build ## sam local start-api on http://127.0.0.1:$(PORT), verifying with the local dev key
	$(NEED_CONTAINER)
	$(BIN)/python -m handler local-env --output $(ENV_VARS) >/dev/null
	$(SAM) local start-api --port $(PORT) --env-vars $(ENV_VARS)

call: $(INSTALLED) ## A signed request to URL= (make serve's by default): TOOL=, INPUT=, DIAGNOSTICS=1
	$(BIN)/python -m handler call "$$URL" $(REQUEST_OPTIONS) $${KEY_FILE:+--key-file "$$KEY_FILE"}

# The preflight stops a deploy that could not work (no credentials, no secret) and asks for
# --guided while the stack does not exist. The guided questions come after the build: if
# they change Architecture, the wheels are built again for it and deployed at once.
deploy: build ## sam deploy (guided the first time); needs the key's secret, see README "Deploy to AWS"
	built=$$($(BIN)/python -m scripts.sam_settings architecture) && \
	flags=$$($(BIN)/python -m scripts.deploy_preflight) && \
	$(SAM) deploy $$flags && \
	chosen=$$($(BIN)/python -m scripts.sam_settings architecture) && \
	if [ "$$chosen" != "$$built" ]; then \
		echo "Architecture is now $$chosen, the build was for $$built: building again and redeploying." >&2; \
		$(SAM) build && $(SAM) deploy; \
	fi

delete: $(SAM_INSTALLED) ## Delete the deployed stack (the key's secret stays)
	$(SAM) delete

# --- Benchmarks (issue 5) ------------------------------------------------------------
# The cold processes run in a venv holding only what a deployed function has: the runtime
# group (the artifact) and aws-sdk (boto3, which the Lambda runtime provides). The dev venv
# holds more (moto, pytest, …), and botocore changes what it imports when awscrt is present.
BENCH_VENV := $(VENV)/bench-runtime
BENCH_INSTALLED := $(BENCH_VENV)/.installed
.PHONY: bench

$(BENCH_INSTALLED): pyproject.toml
	$(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --upgrade "pip>=25.1"
	$(BENCH_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --group runtime --group aws-sdk
	@touch $@

# BENCH_ARGS="--cold-runs 5 --warm-rounds 5 --no-ideas" for a quick look while developing.
bench: $(INSTALLED) $(BENCH_INSTALLED) ## Cold/warm GET and POST against the floor and the peer; writes bench/results.json
	$(BIN)/python bench/bench.py --runtime-python $(BENCH_VENV)/bin/python $(BENCH_ARGS)

# --- Inspector and browser tests (issue 6) ------------------------------------------
# `make serve` serves the inspector at http://127.0.0.1:$(PORT)/_inspector. Its browser tests also run
# inside `make test` whenever Debian's chromium is installed; this runs them alone.
.PHONY: test-browser
test-browser: $(INSTALLED) ## Run the inspector's tests in headless Chromium (apt-get install chromium)
	$(BIN)/python -m pytest -m browser tests/browser

# --- GitHub pipeline (issue 12) ------------------------------------------------------
# .github/ as GitHub would read it (its workflow and Dependabot schemas) and as zizmor audits it
# (pinning, permissions, injection, Dependabot's cooldown), both offline, in their own group so `make install` stays light.
CI_LINT_INSTALLED := $(VENV)/.ci-lint-installed
.PHONY: lint-workflows

$(CI_LINT_INSTALLED): pyproject.toml $(INSTALLED)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --group ci-lint
	@touch $@

lint-workflows: $(CI_LINT_INSTALLED) ## Check .github/: GitHub's schemas (check-jsonschema) and zizmor's audits, offline
	$(BIN)/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml
	$(BIN)/check-jsonschema --builtin-schema vendor.dependabot .github/dependabot.yml
	$(BIN)/zizmor --offline .github

# --- Mutation testing (issue 18) -----------------------------------------------------
# mutmut mutates each guarding module in a copy of its own (.mutmut/<module>/) and tries each
# mutant against the tests that guard it (scripts/mutate.py); the table goes to .mutmut/table.md.
# Slow (tens of minutes), so never part of `make test` or .ci/run: the weekly workflow runs it.
# MODULES="signature rules" measures only those. One worker, at the lowest priority.
MUTATION_INSTALLED := $(VENV)/.mutation-installed
.PHONY: mutate

$(MUTATION_INSTALLED): pyproject.toml $(INSTALLED)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --group mutation
	@touch $@

mutate: $(MUTATION_INSTALLED) ## Mutation testing (mutmut) on the modules that guard signatures, money and sync
	nice -n 19 $(BIN)/python -m scripts.mutate $(MODULES)
