# The two commands for a fresh machine: `make run` and `make test`. Each sets itself up.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.setup-stamp
PROTOS := $(wildcard proto/diagnosis/v1/*.proto)
GEN_DIR := client

PIP := $(BIN)/python -m pip install -q --disable-pip-version-check
# The project with the extras $(1), then the client editable over the copy its path dependency installed
# (pip refuses both in one command: one name, two sources).
install_project = $(PIP) -e '.$(1)' && $(PIP) --no-deps -e ./client

.PHONY: setup run test lint client-compat proto proto-check buf-lint buf-breaking bench soak load soak-api mutate breakages eval-models clean

setup: $(STAMP)

$(STAMP): pyproject.toml client/pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(PIP) --upgrade pip
	@$(call install_project,[dev])
	@touch $(STAMP)

run: setup
	@$(BIN)/diagnosis serve

# On TEST_WORKERS processes (2; 0 runs in this one), a test file to one worker: its module and session
# fixtures (a served server, the npm packages) are made once there.
TEST_WORKERS ?= 2

test: setup
	@$(BIN)/python -m pytest $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile) $(PYTEST_ARGS)

lint: setup
	@$(BIN)/ruff check server client tests bench
	@$(BIN)/ruff format --check server client tests bench
	@$(BIN)/mypy server client bench tests

# The client's own suite (client/compat) in fresh virtualenvs against a real server: the lowest protobuf and
# grpcio client/pyproject.toml allows, then the newest (COMPAT_PINS=lowest or newest: one of them).
client-compat: setup
	@PYTHON=$(PYTHON) bash client/compat/run.sh

# The generator in its own virtualenv (client/codegen-requirements.txt says why its pins are old): the code it
# writes is what the client's lowest supported protobuf and grpcio accept.
CODEGEN := var/codegen
CODEGEN_STAMP := $(CODEGEN)/.stamp
CODEGEN_PINS := client/codegen-requirements.txt
PROTOC = PATH="$(CURDIR)/$(CODEGEN)/bin:$$PATH" $(CODEGEN)/bin/python -m grpc_tools.protoc -Iproto

$(CODEGEN_STAMP): $(CODEGEN_PINS)
	@test -x $(CODEGEN)/bin/python || $(PYTHON) -m venv $(CODEGEN)
	@$(CODEGEN)/bin/python -m pip install -q --disable-pip-version-check --no-deps -r $(CODEGEN_PINS)
	@touch $(CODEGEN_STAMP)

# Regenerate the committed Python code from the protos.
proto: $(CODEGEN_STAMP)
	@$(PROTOC) --python_out=$(GEN_DIR) --grpc_python_out=$(GEN_DIR) \
		--mypy_out=$(GEN_DIR) --mypy_grpc_out=$(GEN_DIR) $(PROTOS) 2> >(grep -v '^Writing mypy' >&2)

# Fails when the committed generated code does not match the protos.
proto-check: $(CODEGEN_STAMP)
	@tmp=$$(mktemp -d) && \
	$(PROTOC) --python_out=$$tmp --grpc_python_out=$$tmp --mypy_out=$$tmp --mypy_grpc_out=$$tmp $(PROTOS) 2> >(grep -v '^Writing mypy' >&2) && \
	for f in $$(cd $$tmp && find . -name '*_pb2*.py' -o -name '*_pb2*.pyi'); do \
		cmp -s "$$tmp/$$f" "$(GEN_DIR)/$$f" || { echo "stale generated code: $(GEN_DIR)/$$f (run make proto)"; rm -rf $$tmp; exit 1; }; \
	done; \
	extra=$$(cd $(GEN_DIR) && find diagnosis -path '*/__pycache__' -prune -o \( -name '*_pb2*.py' -o -name '*_pb2*.pyi' \) -print \
		| while read f; do test -e "$$tmp/$$f" || echo $$f; done); \
	rm -rf $$tmp; \
	if [ -n "$$extra" ]; then echo "generated files with no proto: $$extra"; exit 1; fi; \
	echo "generated code matches the protos"

# buf (npm package @bufbuild/buf, the version the contract tests pin) in var/buf; proto/buf.yaml configures it.
BUF_DIR := var/buf
BUF := $(BUF_DIR)/node_modules/.bin/buf
BUF_PIN := tests/contract/node/package.json
BUF_VERSION = $(shell $(PYTHON) -c 'import json, sys; print(json.load(open(sys.argv[1]))["devDependencies"]["@bufbuild/buf"])' $(BUF_PIN))

$(BUF): $(BUF_PIN)
	@command -v npm >/dev/null || { echo "buf comes from npm: install Node.js and npm"; exit 1; }
	@npm install --prefix $(BUF_DIR) --no-audit --no-fund --save-exact --loglevel=error @bufbuild/buf@$(BUF_VERSION)
	@touch $(BUF)

# The protos against buf's STANDARD lint rules.
buf-lint: $(BUF)
	@$(BUF) lint proto && echo "buf lint: the protos follow the STANDARD rules"

# The protos against the last commit of main (BUF_AGAINST=REF names another base): a change that breaks
# generated code or the wire for a caller in any language fails. main is the local branch, else
# origin/main; on main itself, its previous commit. No base (a shallow checkout): skipped, saying so.
buf-breaking: $(BUF)
	@base="$(BUF_AGAINST)"; \
	if [ -z "$$base" ]; then \
		for ref in main origin/main; do \
			if git rev-parse -q --verify "$$ref^{commit}" >/dev/null; then base=$$ref; break; fi; \
		done; \
		if [ -z "$$base" ] || [ "$$(git rev-parse "$$base")" = "$$(git rev-parse HEAD)" ]; then base=HEAD~1; fi; \
	fi; \
	if ! git rev-parse -q --verify "$$base^{commit}" >/dev/null; then \
		if [ -n "$(BUF_AGAINST)" ]; then echo "buf breaking: no commit $$base in this checkout"; exit 1; fi; \
		echo "buf breaking: skipped, no base commit in this checkout (fetch main to compare against it)"; exit 0; \
	fi; \
	if ! git cat-file -e "$$base:proto" 2>/dev/null; then \
		echo "buf breaking: skipped, $$base has no proto/"; exit 0; \
	fi; \
	tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	git archive "$$base" proto | tar -x -C "$$tmp" && \
	$(BUF) breaking proto --against "$$tmp/proto" && \
	echo "buf breaking: no breaking change against $$base ($$(git rev-parse --short "$$base"))"

# The fail-closed property tests at 10,000 examples (`make test` runs them at 2,000).
soak: setup
	@DIAGNOSIS_PROPERTY_EXAMPLES=10000 $(BIN)/python -m pytest tests/reliability -m property $(PYTEST_ARGS)

# Concurrent Diagnose streams and WatchRun subscribers against a real `diagnosis serve` (not part of `make test`).
# LOAD_SECONDS (60), LOAD_STREAMS (200), LOAD_WATCHERS (500) override the defaults.
load: setup
	@$(BIN)/python -m tests.reliability_api.load

# Five minutes of mixed Diagnose/WatchRun/GetRun/ListRuns/CheckEvidence and bad requests against a real
# `diagnosis serve` on loopback: errors, p50/p99, RSS and open fds at start and end (not part of `make test`).
# SOAK_SECONDS (300), SOAK_WORKERS (24) override the defaults.
soak-api: setup
	@$(BIN)/python -m tests.reliability_api.soak

# The benchmarks: a table and var/bench/latest.json (LangGraph, their baseline, is a bench-only dependency).
BENCH_STAMP := $(VENV)/.bench-stamp

$(BENCH_STAMP): $(STAMP) pyproject.toml
	@$(call install_project,[bench])
	@touch $(BENCH_STAMP)

bench: setup $(BENCH_STAMP)
	@$(BIN)/python -m bench $(BENCH_ARGS)

# Mutation testing (mutmut) of the pure safety core against its own tests; writes var/mutate/summary.json.
# Not part of `make test`. Bounded by MUTATE_MINUTES (29); a second run over the same code goes on from the first
# (a whole run is about 28 minutes on 2 cores). MUTATE_ARGS names a part (globs): 'diagnosis_server.gatekeeper.*'.
MUTATE_STAMP := $(VENV)/.mutate-stamp

$(MUTATE_STAMP): $(STAMP) pyproject.toml
	@$(call install_project,[mutate])
	@touch $(MUTATE_STAMP)

mutate: setup $(MUTATE_STAMP)
	@$(BIN)/python -m tests.mutation.mutate $(MUTATE_ARGS)

# Issue 17's breakages, each applied to a scratch copy: every one must turn its tests red.
breakages: setup
	@$(BIN)/python -m tests.mutation.breakages $(BREAKAGE_ARGS)

# Model answers played from our prompts on the incident corpus (honest, typical, untrue), replayed through the real
# graph: per variant, the cause as likely cause or possible direction, true claims shown, REJECT, untrue claims
# shown; writes var/eval-models/summary.json, then the same for the free-hand answers (freehand.json).
# EVAL_ARGS: incident names, -v for one line a run.
eval-models: setup
	@$(BIN)/python -m tests.eval_models $(EVAL_ARGS)
	@$(BIN)/python -m tests.eval_models --cases-dir tests/eval_models/freehand --out var/eval-models/freehand.json $(EVAL_ARGS)

clean:
	rm -rf $(VENV) var
