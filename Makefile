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
.PHONY: help install lock audit test test-tools runtime-python test-runtime-python serve check new-tool swap-check lint format clean

help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

# --- The lock (issue 17): uv.lock pins every group, with hashes, for every platform the project
# installs for; each venv below is installed from it and nothing else (docs/dependencies.md).
# uv itself comes first, by pip, at the version and with the hashes the lock records for it.
UV := $(BIN)/uv
UV_INSTALLED := $(VENV)/.uv-installed
# UV_PYTHON_DOWNLOADS: uv uses the Python that made each venv, and never fetches one of its own.
UV_ENV := UV_PYTHON_DOWNLOADS=never
# When `uv sync --locked` fails, the lock may no longer match pyproject.toml: if so, this names
# the command that fixes it (any other failure, a network one say, is uv's own message above).
STALE_LOCK = { $(BIN)/python -m scripts.lock check; exit 1; }

$(UV_INSTALLED): uv.lock
	$(PYTHON) -m venv $(VENV)
	$(PYTHON) -m scripts.lock uv-requirement > $(VENV)/uv-requirement.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r $(VENV)/uv-requirement.txt
	@touch $@

# The dev venv holds exactly the dev group's locked packages (uv sync removes anything else);
# the translator follows without its dependencies, at its locked version and hashes: its own
# pins would hold pydantic below the runtime group's (pyproject.toml, translator).
$(INSTALLED): pyproject.toml uv.lock $(UV_INSTALLED)
	$(UV_ENV) UV_PROJECT_ENVIRONMENT=$(VENV) $(UV) sync --quiet --locked --no-default-groups --group dev || $(STALE_LOCK)
	$(UV_ENV) $(UV) export --quiet --frozen --format requirements.txt --no-header --only-group translator \
		--prune pydantic --prune boto3 --prune jsonschema --prune typing-extensions > $(VENV)/translator-requirements.txt
	$(UV_ENV) $(UV) pip install --quiet --python $(BIN)/python --require-hashes --no-deps -r $(VENV)/translator-requirements.txt
	@touch $@

install: $(INSTALLED) ## Create .venv from uv.lock: the runtime, test and lint dependencies

# UPGRADE="pydantic wrapt" moves those packages to their newest allowed versions, UPGRADE=all every package.
lock: $(UV_INSTALLED) ## Update uv.lock after a change to pyproject.toml; UPGRADE=NAME (or all) to upgrade
	$(UV_ENV) $(UV) lock $(if $(filter all,$(UPGRADE)),--upgrade,$(addprefix --upgrade-package ,$(UPGRADE)))

# GitHub's Checks workflow runs this; no advisory source is reachable from every machine.
audit: $(UV_INSTALLED) ## Audit every version in uv.lock against known vulnerabilities (OSV)
	$(BIN)/python -m scripts.audit

test: $(INSTALLED) ## Run the whole test suite
	$(BIN)/python -m pytest

# The inner loop while writing a tool: the framework's own ~1,500 tests are `make test`'s.
test-tools: $(INSTALLED) ## Run only your tools' tests, tests/tools/ (seconds; make test runs everything)
	$(BIN)/python -m pytest tests/tools

runtime-python: ## Print the Python 3.13 this machine has (empty if none)
	@echo $(RUNTIME_PYTHON)

test-runtime-python: ## Run the suite again on the Lambda runtime's Python 3.13 (in .venv-py313)
	$(if $(RUNTIME_PYTHON),,$(error No Python $(LAMBDA_PYTHON) here: install one, or set RUNTIME_PYTHON=/path/to/python$(LAMBDA_PYTHON)))
	$(MAKE) test PYTHON=$(RUNTIME_PYTHON) VENV=.venv-py313

# LOCAL_AWS=moto: moto's server stands in for AWS, seeded from tools/settings.local.toml and
# tests/tools/local_aws_seed.py (docs/configuration.md); unset, tools use your own credentials.
serve: $(INSTALLED) ## Serve the endpoint on http://127.0.0.1:$(PORT) with a local dev key; LOCAL_AWS=moto: no AWS account
	PORT=$(PORT) LOCAL_AWS=$(LOCAL_AWS) $(BIN)/python -m devserver

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

lint: $(INSTALLED) ## The lock matches pyproject.toml; ruff (lint and format); mypy on handler/, tools/ and tests/support/; handler/'s layers
	$(BIN)/python -m scripts.lock check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

format: $(INSTALLED) ## Fix what ruff can fix and format the code
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean: ## Remove the virtualenv, caches and build output
	rm -rf $(VENV) .venv-py313 .aws-sam .pytest_cache .mypy_cache .ruff_cache .import_linter_cache .hypothesis
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

$(SAM_INSTALLED): pyproject.toml uv.lock $(INSTALLED)
	$(PYTHON) -m venv $(SAM_VENV)
	$(UV_ENV) UV_PROJECT_ENVIRONMENT=$(SAM_VENV) $(UV) sync --quiet --locked --only-group sam || $(STALE_LOCK)
	@touch $@

build: $(SAM_INSTALLED) ## sam build: the Lambda artifact in .aws-sam/build (no Docker, no AWS account)
	$(SAM) build

validate: $(SAM_INSTALLED) ## sam validate --lint, serverless rules, Checkov; a version left stale, Lambda's 256-char and 4 KB limits
	$(BIN)/python -m scripts.check_template
	$(SAM) validate --lint
	$(SAM) validate --lint --template pipeline/oidc-role.yaml

# AWS Labs' serverless rules for cfn-lint (cfn-lint-serverless, in the SAM CLI's venv), after
# sam validate's own cfn-lint run: an error (E, ES) fails, a warning (W, WS) is printed. The
# template silences the rules that do not apply to it, each with its reason, in Metadata.
.PHONY: validate-serverless
validate: validate-serverless
validate-serverless: $(SAM_INSTALLED)
	$(SAM_VENV)/bin/cfn-lint template.yaml --append-rules cfn_lint_serverless.rules --non-zero-exit-code error

# Checkov's bundled checks, offline (no platform, no mapping download, no update check), on both
# templates and .github/: any failed check fails. It reads SAM resources as written, before the
# transform (it merges Globals in itself), so the roles are written out in template.yaml, where
# it sees them. A check that does not apply is skipped next to its resource, in Metadata, with
# the reason. A template Checkov cannot parse only counts as a "parsing error" with exit 0, so
# that fails here too (a broken workflow it skips without a word: `make lint-workflows` fails on
# it). Its own venv: its pins (boto3, cfn-lint, ...) are not the SAM CLI's or ours.
CHECKOV_VENV := $(VENV)/checkov
CHECKOV_INSTALLED := $(CHECKOV_VENV)/.installed
CHECKOV = CKV_SKIP_PACKAGE_UPDATE_CHECK=true BC_SKIP_MAPPING=TRUE \
	$(CHECKOV_VENV)/bin/checkov --skip-download --quiet --compact
.PHONY: validate-checkov
validate: validate-checkov

$(CHECKOV_INSTALLED): pyproject.toml uv.lock $(UV_INSTALLED)
	$(PYTHON) -m venv $(CHECKOV_VENV)
	$(UV_ENV) UV_PROJECT_ENVIRONMENT=$(CHECKOV_VENV) $(UV) sync --quiet --locked --only-group checkov || $(STALE_LOCK)
	@touch $@

validate-checkov: $(CHECKOV_INSTALLED)
	@for scan in "--framework cloudformation secrets -f template.yaml -f pipeline/oidc-role.yaml" \
			"--framework github_actions secrets -d .github"; do \
		echo "checkov $$scan"; \
		report=$$($(CHECKOV) $$scan 2>&1); status=$$?; echo "$$report"; \
		if echo "$$report" | grep -q "Parsing errors"; then \
			echo "Checkov could not read a file above, so it checked nothing in it: fix the file's YAML." >&2; exit 1; \
		fi; \
		[ $$status -eq 0 ] || exit $$status; \
	done

# sam build runs this (template.yaml: BuildMethod makefile) in this directory, with
# ARTIFACTS_DIR set; samconfig.toml's build_in_source spares it a copy of .venv. The
# manifest check fails the build first; the wheels are Linux ones for the template's
# architecture and CPython 3.13, whatever this machine is; bin/ holds the installer's console
# scripts, which nothing in Lambda runs, and .lock is uv's own; handler/manifest.json is what GET serves. The packages
# are the lock's (scripts/lock.py, artifact-requirements), every file checked against its hash,
# with no resolution of their own (--no-deps): the artifact holds exactly the locked versions.
# handler/ and tools/ are copied by what belongs in a function (scripts/artifact_sources.py: Python
# modules, tools/settings.toml, what pyproject.toml's [tool.median.artifact] include names), so
# tools/settings.local.toml and any editor's backup of it stay behind: never deployed.
build-MedianToolsFunction: $(INSTALLED)
	$(if $(ARTIFACTS_DIR),,$(error ARTIFACTS_DIR is not set: run 'make build' or 'sam build', not this target))
	$(BIN)/python -m handler check
	rm -rf "$(ARTIFACTS_DIR)" && mkdir -p "$(ARTIFACTS_DIR)"
	$(BIN)/python -m scripts.artifact_sources "$(ARTIFACTS_DIR)" handler tools
	$(BIN)/python -m scripts.lock artifact-requirements > $(VENV)/artifact-requirements.txt
	machine=$$($(BIN)/python -m scripts.sam_settings wheel-machine) && \
	$(UV_ENV) $(UV) pip install --quiet --python $(BIN)/python --target "$(ARTIFACTS_DIR)" \
		--python-platform $$machine-manylinux2014 --python-version $(LAMBDA_PYTHON) \
		--only-binary :all: --require-hashes --no-deps -r $(VENV)/artifact-requirements.txt
	rm -f $(VENV)/artifact-requirements.txt
	$(or $(RUNTIME_PYTHON),$(BIN)/python) -m scripts.compile_artifact "$(ARTIFACTS_DIR)" $(LAMBDA_PYTHON)
	rm -rf "$(ARTIFACTS_DIR)/bin" "$(ARTIFACTS_DIR)/.lock"
	$(BIN)/python -m handler manifest > "$(ARTIFACTS_DIR)/handler/manifest.json"

event: $(INSTALLED) ## A freshly signed event in events/ for sam local: TOOL=name INPUT='{...}', or a GET
	$(BIN)/python -m handler event $(REQUEST_OPTIONS)
	$(BIN)/python -m handler local-env --output $(ENV_VARS)

# --- sam local: the built artifact in Lambda's container image ------------------------
# LOCAL_ARCH=x86_64 (or arm64) runs it on that architecture instead of the template's, built into
# a folder of its own, so the deploy build in .aws-sam/build is never swapped for it. An x86_64
# Linux host runs the template's arm64 only through qemu's binfmt handlers, and slowly.
# SAM_FLAGS passes SAM's own flags through (SAM_FLAGS=--skip-pull-image works offline once the
# image is present). PARAMETER_OVERRIDES adds template parameters: sam local would replace
# samconfig.toml's with any given on its command line, so scripts/sam_settings.py merges them.
LOCAL_ARCH ?=
export LOCAL_ARCH PARAMETER_OVERRIDES
LOCAL_BUILD_DIR = $(if $(LOCAL_ARCH),.aws-sam/local-$(LOCAL_ARCH),.aws-sam/build)
# start-api's own default port, so a `make serve` on 3000 never answers the curls meant for it.
START_API_PORT := $(if $(filter command line environment,$(origin PORT)),$(PORT),3001)
SAM_LOCAL = $(SAM) local $(1) --template $(LOCAL_BUILD_DIR)/template.yaml \
	--parameter-overrides "$$($(BIN)/python -m scripts.sam_settings local-overrides)" $(SAM_FLAGS)
.PHONY: local-build

local-build: $(SAM_INSTALLED) $(INSTALLED)
	@overrides=$$($(BIN)/python -m scripts.sam_settings local-overrides) || exit 2
ifeq ($(strip $(LOCAL_ARCH)),)
	$(SAM) build
else
	LAMBDA_ARCHITECTURE=$(LOCAL_ARCH) $(SAM) build --build-dir $(LOCAL_BUILD_DIR) \
		--cache-dir .aws-sam/cache-local-$(LOCAL_ARCH) --parameter-overrides Architecture=$(LOCAL_ARCH)
endif

# Signatures go stale after 300 s: each invoke signs its event anew.
invoke: local-build ## sam local invoke with a fresh event: TOOL=orderStatus INPUT='{...}'; LOCAL_ARCH=, SAM_FLAGS=
	$(NEED_CONTAINER)
	$(BIN)/python -m handler local-env --output $(ENV_VARS) >/dev/null
	event=$$($(BIN)/python -m handler event $(REQUEST_OPTIONS)) && \
		$(call SAM_LOCAL,invoke MedianToolsFunction) --event "$$event" --env-vars $(ENV_VARS)

start-api: local-build ## sam local start-api on http://127.0.0.1:3001 (PORT=), verifying with the local dev key
	$(NEED_CONTAINER)
	@$(BIN)/python -m scripts.port_free $(START_API_PORT) "PORT=$$(( $(START_API_PORT) + 100 )) make start-api"
	$(BIN)/python -m handler local-env --output $(ENV_VARS) >/dev/null
	$(call SAM_LOCAL,start-api) --port $(START_API_PORT) --env-vars $(ENV_VARS)

call: $(INSTALLED) ## A signed request to URL= (make serve's by default): TOOL=, INPUT=, DIAGNOSTICS=1
	$(BIN)/python -m handler call "$$URL" $(REQUEST_OPTIONS) $${KEY_FILE:+--key-file "$$KEY_FILE"}

# The preflight stops a deploy that could not work (no credentials, no secret) and asks for
# --guided while the stack does not exist. The guided questions come after the build: if
# they change Architecture, the wheels are built again for it and deployed at once.
deploy: build ## sam deploy (guided the first time); needs the key's secret, see README "Deploy" and docs/deploy.md
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

$(BENCH_INSTALLED): pyproject.toml uv.lock $(UV_INSTALLED)
	$(PYTHON) -m venv $(BENCH_VENV)
	$(UV_ENV) UV_PROJECT_ENVIRONMENT=$(BENCH_VENV) $(UV) sync --quiet --locked --no-default-groups --group runtime --group aws-sdk || $(STALE_LOCK)
	@touch $@

# BENCH_ARGS="--cold-runs 5 --warm-rounds 5 --no-ideas" for a quick look while developing.
bench: $(INSTALLED) $(BENCH_INSTALLED) ## Cold/warm GET and POST against the floor and the peer; writes bench/results.json
	$(BIN)/python -m bench --runtime-python $(BENCH_VENV)/bin/python $(BENCH_ARGS)

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

# --inexact: added beside the dev group, which stays as it is.
$(CI_LINT_INSTALLED): pyproject.toml uv.lock $(INSTALLED)
	$(UV_ENV) UV_PROJECT_ENVIRONMENT=$(VENV) $(UV) sync --quiet --locked --inexact --no-default-groups --group dev --group ci-lint || $(STALE_LOCK)
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

# --inexact: added beside the dev group, which stays as it is.
$(MUTATION_INSTALLED): pyproject.toml uv.lock $(INSTALLED)
	$(UV_ENV) UV_PROJECT_ENVIRONMENT=$(VENV) $(UV) sync --quiet --locked --inexact --no-default-groups --group dev --group mutation || $(STALE_LOCK)
	@touch $@

mutate: $(MUTATION_INSTALLED) ## Mutation testing (mutmut) on the modules that guard signatures, money and sync
	nice -n 19 $(BIN)/python -m scripts.mutate $(MODULES)
