# Every target sets up what it needs: a fresh clone runs `make test` or `make serve` directly.
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
PORT ?= 3000
# template.yaml's Runtime (and .python-version, pyproject.toml's requires-python): the Python the
# function runs on. Every venv is made with it, so the tests run on what Lambda runs, and the
# build compiles the artifact's bytecode with it. PYTHON=/path/to/python3.13 names one; else the
# first found: on PATH, installed by pyenv, or by `uv python install 3.13`.
LAMBDA_PYTHON := 3.13
ifndef PYTHON
PYTHON := $(firstword $(foreach candidate,python$(LAMBDA_PYTHON) \
	$(wildcard $(HOME)/.pyenv/versions/$(LAMBDA_PYTHON)*/bin/python$(LAMBDA_PYTHON)) \
	$(wildcard $(HOME)/.local/share/uv/python/cpython-$(LAMBDA_PYTHON)*/bin/python$(LAMBDA_PYTHON)), \
	$(shell $(candidate) -c 'import sys; print(sys.executable)' 2>/dev/null)))
endif
# Said before any venv is made with another Python, which uv would then refuse half-way.
NEED_LAMBDA_PYTHON = @$(if $(PYTHON),$(PYTHON) -c 'import sys; sys.exit(sys.version_info[:2] != ($(subst .,$(comma) ,$(LAMBDA_PYTHON))))' 2>/dev/null ||) { \
	echo "This project runs on Python $(LAMBDA_PYTHON), the Lambda runtime's, and $(if $(PYTHON),$(PYTHON) is not it,none was found here)." >&2; \
	echo "Install it (pyenv install $(LAMBDA_PYTHON), uv python install $(LAMBDA_PYTHON), or your system's package), or name it: make PYTHON=/path/to/python$(LAMBDA_PYTHON) ..." >&2; \
	exit 1; }
comma := ,

.DEFAULT_GOAL := help
.PHONY: help install lock audit test test-tools serve check new-tool lint format clean

help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

# --- The locks (issue 17): uv.lock pins the project's dependencies and groups, with hashes, for
# every platform the project installs for; tooling/*.txt pin each developer tool that is not the
# project's (the SAM CLI, Checkov, the workflows' linters) in a venv of its own. Every venv below
# is installed from one of them and nothing else (docs/dependencies.md).
# uv itself comes first, by pip, at the version and with the hashes the lock records for it.
UV := $(BIN)/uv
UV_INSTALLED := $(VENV)/.uv-installed
# UV_PYTHON_DOWNLOADS: uv uses the Python that made each venv, and never fetches one of its own;
# UV_PYTHON: the dev venv's, which is the Lambda runtime's (a `python3.13` shim on PATH may fail).
UV_ENV := UV_PYTHON_DOWNLOADS=never UV_PYTHON=$(BIN)/python
# When `uv sync --locked` fails, the lock may no longer match pyproject.toml: if so, this names
# the command that fixes it (any other failure, a network one say, is uv's own message above).
STALE_LOCK = { $(BIN)/python -m scripts.lock check; exit 1; }

$(UV_INSTALLED): uv.lock
	$(NEED_LAMBDA_PYTHON)
	$(PYTHON) -m venv $(VENV)
	$(PYTHON) -m scripts.lock uv-requirement > $(VENV)/uv-requirement.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r $(VENV)/uv-requirement.txt
	@touch $@

# The dev venv holds exactly what `uv sync` gives: the project's dependencies and the dev group,
# as locked (uv sync removes anything else), and INSTALL_GROUPS beside them (maintainer.mk's).
INSTALL_GROUPS ?=
$(INSTALLED): pyproject.toml uv.lock $(UV_INSTALLED)
	$(UV_ENV) UV_PROJECT_ENVIRONMENT=$(VENV) $(UV) sync --quiet --locked $(addprefix --group ,$(INSTALL_GROUPS)) || $(STALE_LOCK)
	@touch $@

install: $(INSTALLED) ## Create .venv from uv.lock: the runtime, test and lint dependencies

# A venv of its own for a developer tool, exactly as tooling/NAME.py.lock pins it, hashes checked.
# $(call TOOL_VENV,<venv>,<NAME>,<how uv pip puts it there: sync, or install beside what is there>)
define TOOL_VENV
	$(PYTHON) -m venv $(1)
	$(BIN)/python -m scripts.lock tool-requirements $(2) > $(1)/requirements.txt
	$(UV_ENV) $(UV) pip $(or $(3),sync) --quiet --python $(1)/bin/python --require-hashes $(1)/requirements.txt
	@touch $(1)/.installed
endef

# UPGRADE="pydantic wrapt" moves those packages to their newest allowed versions, UPGRADE=all every package.
lock: $(UV_INSTALLED) ## Update uv.lock and tooling/*.lock after a change to pyproject.toml or tooling/; UPGRADE=NAME (or all)
	$(UV_ENV) $(UV) lock $(if $(filter all,$(UPGRADE)),--upgrade,$(addprefix --upgrade-package ,$(UPGRADE)))
	$(BIN)/python -m scripts.lock tooling $(UPGRADE)

# GitHub's Checks workflow runs this; no advisory source is reachable from every machine.
audit: $(UV_INSTALLED) ## Audit every version in uv.lock against known vulnerabilities (OSV)
	$(BIN)/python -m scripts.audit

test: $(INSTALLED) ## Run the whole test suite
	$(BIN)/python -m pytest

# The inner loop while writing a tool: the framework's own ~1,500 tests are `make test`'s. With no
# tool tests yet ("Make it yours" deletes the examples' folder), it says so and succeeds.
test-tools: $(INSTALLED) ## Run only your tools' tests, tests/tools/ (seconds; make test runs everything)
	@if [ -n "$$(find tests/tools -name 'test_*.py' 2>/dev/null | head -n 1)" ]; then \
		echo "$(BIN)/python -m pytest tests/tools"; $(BIN)/python -m pytest tests/tools; \
	else \
		echo "No tool tests yet: tests/tools/ holds no test_*.py. make new-tool NAME=loyalty_points writes a tool and its tests."; \
	fi

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

lint: $(INSTALLED) ## The lock matches pyproject.toml; ruff (lint and format); mypy on handler/, tools/ and tests/contract/; handler/'s layers
	$(BIN)/python -m scripts.lock check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

format: $(INSTALLED) ## Fix what ruff can fix and format the code
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean: ## Remove the virtualenv, caches and build output
	rm -rf $(VENV) .aws-sam .pytest_cache .mypy_cache .ruff_cache .import_linter_cache .hypothesis
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

$(SAM_INSTALLED): tooling/sam-cli.py.lock $(UV_INSTALLED)
	$(call TOOL_VENV,$(SAM_VENV),sam-cli)

# The deploy workflow's `sam deploy` is this one too: the SAM CLI that built and checked the artifact.
.PHONY: sam-cli
sam-cli: $(SAM_INSTALLED) ## Install the SAM CLI, as tooling/sam-cli.py.lock pins it, in .venv/sam-cli (make build does it too)

build: $(SAM_INSTALLED) $(INSTALLED) ## sam build: the Lambda artifact in .aws-sam/build (no Docker, no AWS account)
	$(SAM) build

validate: $(SAM_INSTALLED) $(INSTALLED) ## sam validate --lint, serverless rules, Checkov; a version left stale, Lambda's 256-char and 4 KB limits
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

$(CHECKOV_INSTALLED): tooling/checkov.py.lock $(UV_INSTALLED)
	$(call TOOL_VENV,$(CHECKOV_VENV),checkov)

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
# tools/settings.local.toml and any editor's backup of it stay behind: never deployed, and never
# read here (--no-local), so a broken one cannot stop a build. handler/stages.txt lists the
# stages a container may run as: settings.toml's tables, read at start without a TOML parser;
# handler/tool_modules.json which module of tools/ holds each tool, so that a cold POST imports
# only the one it runs; handler/version.txt the template's version, which every log line carries.
build-MedianToolsFunction: $(INSTALLED)
	$(if $(ARTIFACTS_DIR),,$(error ARTIFACTS_DIR is not set: run 'make build' or 'sam build', not this target))
	$(BIN)/python -m handler check --no-local
	$(BIN)/python -m scripts.check_imports
	rm -rf "$(ARTIFACTS_DIR)" && mkdir -p "$(ARTIFACTS_DIR)"
	$(BIN)/python -m scripts.artifact_sources "$(ARTIFACTS_DIR)" handler tools
	$(BIN)/python -m scripts.lock artifact-requirements > $(VENV)/artifact-requirements.txt
	machine=$$($(BIN)/python -m scripts.sam_settings wheel-machine) && \
	$(UV_ENV) $(UV) pip install --quiet --python $(BIN)/python --target "$(ARTIFACTS_DIR)" \
		--python-platform $$machine-manylinux2014 --python-version $(LAMBDA_PYTHON) \
		--only-binary :all: --require-hashes --no-deps -r $(VENV)/artifact-requirements.txt
	rm -f $(VENV)/artifact-requirements.txt
	$(BIN)/python -m scripts.compile_artifact "$(ARTIFACTS_DIR)" $(LAMBDA_PYTHON)
	rm -rf "$(ARTIFACTS_DIR)/bin" "$(ARTIFACTS_DIR)/.lock"
	$(BIN)/python -m handler manifest > "$(ARTIFACTS_DIR)/handler/manifest.json"
	$(BIN)/python -m handler stages > "$(ARTIFACTS_DIR)/handler/stages.txt"
	$(BIN)/python -m handler tool-modules > "$(ARTIFACTS_DIR)/handler/tool_modules.json"
	$(BIN)/python -m handler --version | cut -d ' ' -f 2 > "$(ARTIFACTS_DIR)/handler/version.txt"

event: $(INSTALLED) ## A freshly signed event in events/ for sam local: TOOL=name INPUT='{...}', or a GET
	$(BIN)/python -m handler event $(REQUEST_OPTIONS)
	$(BIN)/python -m handler local-env --output $(ENV_VARS)

# --- sam local: the built artifact in Lambda's container image ------------------------
# LOCAL_ARCH=x86_64 (or arm64) runs it on that architecture instead of the template's: a copy of
# template.yaml set to it (scripts/set_architecture.py, as `copier copy` sets the project's), built
# into a folder of its own, so neither template.yaml nor the deploy build in .aws-sam/build is
# touched: the copy's code is this directory's (--base-dir), its settings this samconfig.toml's, and
# its wheels are the copy's architecture (LAMBDA_ARCHITECTURE: SAM does not tell a makefile build).
# An x86_64 Linux host runs the template's arm64 only through qemu's binfmt handlers, and slowly.
# SAM_FLAGS passes SAM's own flags through (SAM_FLAGS=--skip-pull-image works offline once the
# image is present). PARAMETER_OVERRIDES adds template parameters: sam local would replace
# samconfig.toml's with any given on its command line, so scripts/sam_settings.py merges them.
LOCAL_ARCH ?=
export LOCAL_ARCH PARAMETER_OVERRIDES
LOCAL_BUILD_DIR = $(if $(LOCAL_ARCH),.aws-sam/local-$(LOCAL_ARCH),.aws-sam/build)
LOCAL_TEMPLATE = .aws-sam/template-$(LOCAL_ARCH).yaml
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
	@mkdir -p .aws-sam && cp template.yaml $(LOCAL_TEMPLATE)
	$(BIN)/python -m scripts.set_architecture $(LOCAL_ARCH) --template $(LOCAL_TEMPLATE) >/dev/null
	LAMBDA_ARCHITECTURE=$(LOCAL_ARCH) $(SAM) build --template $(LOCAL_TEMPLATE) --base-dir . \
		--config-file "$(CURDIR)/samconfig.toml" --build-dir $(LOCAL_BUILD_DIR) --cache-dir .aws-sam/cache-local-$(LOCAL_ARCH)
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

# The preflight stops a deploy that could not work (no credentials, no secret, a setting samconfig.toml
# passes that the template no longer takes), and asks for what samconfig.toml lacks (the region, the
# first time, if copier copy left it to your profile) and records it there: sam deploy then asks only
# to confirm its change set. Never --guided, which asks everything again. The architecture the build
# is for is written in the template, so no answer can change it.
deploy: build ## sam deploy (the first asks your region, if samconfig.toml has none); needs the key's secret: README "Deploy", docs/deploy.md
	flags=$$($(BIN)/python -m scripts.deploy_preflight) && \
	$(SAM) deploy $$flags

delete: $(SAM_INSTALLED) ## Delete the deployed stack (the key's secret stays)
	$(SAM) delete

# --- GitHub pipeline (issue 12) ------------------------------------------------------
# .github/ as GitHub would read it (its workflow and Dependabot schemas) and as zizmor audits it
# (pinning, permissions, injection, Dependabot's cooldown), both offline, from a venv of their own.
WORKFLOW_LINT_VENV := $(VENV)/workflow-lint
WORKFLOW_LINT_INSTALLED := $(WORKFLOW_LINT_VENV)/.installed
.PHONY: lint-workflows

$(WORKFLOW_LINT_INSTALLED): tooling/workflow-lint.py.lock $(UV_INSTALLED)
	$(call TOOL_VENV,$(WORKFLOW_LINT_VENV),workflow-lint)

lint-workflows: $(WORKFLOW_LINT_INSTALLED) ## Check .github/: GitHub's schemas (check-jsonschema) and zizmor's audits, offline
	$(WORKFLOW_LINT_VENV)/bin/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml
	$(WORKFLOW_LINT_VENV)/bin/check-jsonschema --builtin-schema vendor.dependabot .github/dependabot.yml
	$(WORKFLOW_LINT_VENV)/bin/zizmor --offline .github

# --- Upgrade: a later version of the template (issue 26; docs/upgrading.md) ----------------
# copier update, as tooling/copier.py.lock pins it, then the checks (scripts/upgrade.py): a file it
# could not merge is named and left for you, never resolved for you.
COPIER_VENV := $(VENV)/copier
COPIER_INSTALLED := $(COPIER_VENV)/.installed
.PHONY: upgrade

$(COPIER_INSTALLED): tooling/copier.py.lock $(UV_INSTALLED)
	$(call TOOL_VENV,$(COPIER_VENV),copier)

upgrade: $(COPIER_INSTALLED) $(INSTALLED) ## Take a later version of the template (copier update), then make lint test check; VERSION=v1.2.0
	$(BIN)/python -m scripts.upgrade $(VERSION)

# The template repository's own targets (the bench, mutation testing, the browser tests, the
# template's proofs and releases): maintainer.mk, which projects made from the template do not get.
-include maintainer.mk
