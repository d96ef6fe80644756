# PodStart developer loop. `make dev` and `make test` install what they need on a fresh machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat requirements.lock pyproject.toml | sha1sum | cut -c1-12)
export PYTHONPATH := $(CURDIR)
export JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION := 1
export PYTHONDONTWRITEBYTECODE :=

.PHONY: install dev test test-fast lint synth bench asl clean web test-web chromium openapi

$(STAMP):
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.lock
	@rm -f $(VENV)/.installed-* && touch $@

install: $(STAMP)

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
	$(VENV)/bin/mypy functions sandbox infra app.py tests/fakes $(if $(wildcard mcp_gateway/__init__.py),mcp_gateway)
	$(VENV)/bin/lint-imports

test: lint web chromium ## every layer: unit, functional, infra, e2e on a sandbox, UI components, browser
	$(PY) -m pytest tests/unit tests/functional tests/infra
	$(PY) -m pytest tests/e2e
	cd web && npm run typecheck && npm test
	cd web && PODSTART_E2E_REQUIRE_CLUSTERS=1 npm run e2e

FAST_TESTS := tests/unit tests/functional/test_port_contracts.py tests/functional/test_operation_service.py \
	tests/functional/test_admission.py tests/functional/test_engine_and_projector.py

test-fast: install ## unit tests and the in-process functional tests on fakes (seconds, no sandbox)
	$(PY) -m pytest $(FAST_TESTS)

test-web: install web chromium ## only the UI: typecheck, vitest, browser end-to-end
	cd web && npm run typecheck && npm test && PODSTART_E2E_REQUIRE_CLUSTERS=1 npm run e2e

synth: install ## synthesize the CloudFormation template offline into cdk.out/
	time $(PY) app.py

bench: install web chromium ## cold imports, bundle sizes, synth time, MCP tools/list size, UI load
	$(PY) -m tests.bench
	cd web && npm run bench

asl: install ## regenerate statemachines/*.asl.json from functions.domain.asl
	$(PY) -c "import json; from functions.domain.asl import definition; from functions.domain.kinds import KINDS, execution_timeout, state_machine_file; [open('statemachines/' + state_machine_file(k), 'w').write(json.dumps(definition(k, s, execution_timeout(k)), indent=2) + '\n') for k, s in KINDS.items()]"

openapi: install $(WEB_STAMP) ## regenerate web/src/api/openapi.ts (the UI's types) from the REST OpenAPI document
	cd web && PODSTART_PYTHON=$(CURDIR)/$(PY) node scripts/openapi.mjs

clean:
	rm -rf cdk.out build .mypy_cache .ruff_cache
