# The two commands for a fresh machine: `make run` and `make test`. Each sets itself up.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.setup-stamp
PROTOS := $(wildcard proto/diagnosis/v1/*.proto)
GEN_DIR := client

# pip, with its noise about unreachable local indexes dropped; a failed install still fails the target.
quiet_pip = out=$$($(BIN)/python -m pip install -q --disable-pip-version-check $(1) 2>&1) || { echo "$$out"; exit 1; }; \
	echo "$$out" | grep -v -e '^WARNING: Location' -e '^$$' || true

.PHONY: setup run test lint proto proto-check bench soak load soak-api mutate breakages clean

setup: $(STAMP)

$(STAMP): pyproject.toml client/pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(call quiet_pip,--upgrade pip)
	@$(call quiet_pip,-e ./client -e '.[dev]')
	@touch $(STAMP)

run: setup
	@$(BIN)/diagnosis serve

test: setup
	@$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: setup
	@$(BIN)/ruff check server client tests bench
	@$(BIN)/ruff format --check server client tests bench
	@$(BIN)/mypy server client bench tests

# Regenerate the committed Python code from the protos.
proto: setup
	@PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m grpc_tools.protoc -Iproto \
		--python_out=$(GEN_DIR) --grpc_python_out=$(GEN_DIR) \
		--mypy_out=$(GEN_DIR) --mypy_grpc_out=$(GEN_DIR) $(PROTOS)

# Fails when the committed generated code does not match the protos.
proto-check: setup
	@tmp=$$(mktemp -d) && \
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m grpc_tools.protoc -Iproto \
		--python_out=$$tmp --grpc_python_out=$$tmp --mypy_out=$$tmp --mypy_grpc_out=$$tmp $(PROTOS) 2> >(grep -v '^Writing mypy' >&2) && \
	for f in $$(cd $$tmp && find . -name '*_pb2*.py' -o -name '*_pb2*.pyi'); do \
		cmp -s "$$tmp/$$f" "$(GEN_DIR)/$$f" || { echo "stale generated code: $(GEN_DIR)/$$f (run make proto)"; rm -rf $$tmp; exit 1; }; \
	done; \
	extra=$$(cd $(GEN_DIR) && find diagnosis -path '*/__pycache__' -prune -o \( -name '*_pb2*.py' -o -name '*_pb2*.pyi' \) -print \
		| while read f; do test -e "$$tmp/$$f" || echo $$f; done); \
	rm -rf $$tmp; \
	if [ -n "$$extra" ]; then echo "generated files with no proto: $$extra"; exit 1; fi; \
	echo "generated code matches the protos"

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
	@$(call quiet_pip,-e '.[bench]')
	@touch $(BENCH_STAMP)

bench: setup $(BENCH_STAMP)
	@$(BIN)/python -m bench $(BENCH_ARGS)

# Mutation testing (mutmut) of the pure safety core against its own tests; writes var/mutate/summary.json.
# Not part of `make test`; a whole run takes over 30 minutes on 2 cores, so MUTATE_ARGS names a part (globs), e.g.
# MUTATE_ARGS='diagnosis_server.gatekeeper.*'.
MUTATE_STAMP := $(VENV)/.mutate-stamp

$(MUTATE_STAMP): $(STAMP) pyproject.toml
	@$(call quiet_pip,-e '.[mutate]')
	@touch $(MUTATE_STAMP)

mutate: setup $(MUTATE_STAMP)
	@$(BIN)/python -m tests.mutation.mutate $(MUTATE_ARGS)

# Issue 17's breakages, each applied to a scratch copy: every one must turn its tests red.
breakages: setup
	@$(BIN)/python -m tests.mutation.breakages $(BREAKAGE_ARGS)

clean:
	rm -rf $(VENV) var
