# profsight: the two commands of the README, and the checks they run.
.PHONY: demo test check lint types unit setup setup-dev benchmark clean

# Set up (no torch needed) and explain the bundled sample trace.
demo: setup
	.venv/bin/profsight explain

# Set up everything the tests need (torch 2.13 CPU, Lightning) and run the whole suite.
test: setup-dev check

check: lint types unit

lint:
	.venv/bin/ruff check src tests scripts benchmarks
	.venv/bin/ruff format --check src tests scripts benchmarks

types:
	.venv/bin/mypy

unit:
	.venv/bin/python -m pytest -q

setup:
	scripts/setup.sh

setup-dev:
	scripts/setup.sh dev

benchmark: setup-dev
	.venv/bin/python benchmarks/bench_load.py

clean:
	rm -rf .venv .pytest_cache .mypy_cache .ruff_cache benchmarks/out
