# PodStart developer loop. `make dev` and `make test` install what they need on a fresh machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat requirements.lock pyproject.toml | sha1sum | cut -c1-12)
export PYTHONPATH := $(CURDIR)
export JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION := 1
export PYTHONDONTWRITEBYTECODE :=

.PHONY: install dev test test-fast lint synth bench asl clean

$(STAMP):
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.lock
	@rm -f $(VENV)/.installed-* && touch $@

install: $(STAMP)

dev: install ## run the whole product on the embedded sandbox (UI, REST, MCP on :3099)
	$(PY) -m sandbox

lint: install ## ruff, mypy, and the import contract (domain imports neither boto3 nor kubernetes)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy functions sandbox infra app.py $(if $(wildcard mcp_gateway/__init__.py),mcp_gateway)
	$(VENV)/bin/lint-imports

test: lint ## every test layer: unit, functional, infra, then e2e against a sandbox on free ports
	$(PY) -m pytest tests/unit tests/functional tests/infra
	$(PY) -m pytest tests/e2e

synth: install ## synthesize the CloudFormation template offline into cdk.out/
	time $(PY) app.py

bench: install ## cold imports, bundle sizes, synth time, MCP tools/list size
	$(PY) -m tests.bench

asl: install ## regenerate statemachines/*.asl.json from functions.domain.asl
	$(PY) -c "import json; from functions.domain.asl import definition; from functions.domain.kinds import KINDS, state_machine_file; [open('statemachines/' + state_machine_file(k), 'w').write(json.dumps(definition(k, s), indent=2) + '\n') for k, s in KINDS.items()]"

clean:
	rm -rf cdk.out build .mypy_cache .ruff_cache
