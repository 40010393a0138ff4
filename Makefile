# profsight: the two commands of the README, and the checks they run.
.PHONY: demo sample test check lint types unit docs setup setup-demo setup-dev benchmark benchmark-real benchmark-large benchmark-job benchmark-tune clean

# Set up torch 2.13 (CPU build) and Lightning, then profile a short ResNet-18 training and
# explain it (profsight-demo/fit-report.html).
demo: setup-demo
	.venv/bin/profsight demo

# Set up (no torch needed) and explain the bundled sample trace.
sample: setup
	.venv/bin/profsight explain

# Set up everything the tests need (torch 2.13 CPU, Lightning, MkDocs) and run the whole
# suite: lint, types, tests and the docs site.
test: setup-dev check

check: lint types unit docs

lint:
	.venv/bin/ruff check src tests scripts benchmarks docs
	.venv/bin/ruff format --check src tests scripts benchmarks docs

types:
	.venv/bin/mypy

unit:
	.venv/bin/python -m pytest -q

# The docs site (mkdocs.yml), built strictly into .site/ (ignored by git): a broken link,
# a missing page or a docstring mkdocstrings cannot read fails the build.
docs:
	NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir .site

setup:
	scripts/setup.sh

setup-demo:
	scripts/setup.sh demo

setup-dev:
	scripts/setup.sh dev

# Every benchmark, each printing its ratios from one run (about an hour and 62 GB of disk:
# traces of 258 MB, 2 GB, 10 GB, a 2 GB .json.gz, a job of 64 ranks of 500 MB, the real GPU
# traces of tests/data and a 1 GB Lightning trace, with HTA and TraceLens beside them).
benchmark: setup-dev
	cd benchmarks && ../.venv/bin/python bench_real.py
	.venv/bin/python benchmarks/bench_load.py
	cd benchmarks && ../.venv/bin/python bench_large.py
	.venv/bin/python benchmarks/bench_job.py
	.venv/bin/python benchmarks/bench_job.py --big
	.venv/bin/python benchmarks/bench_job.py --real --repeat 3

benchmark-real: setup-dev
	cd benchmarks && ../.venv/bin/python bench_real.py

benchmark-large: setup-dev
	cd benchmarks && ../.venv/bin/python bench_large.py

benchmark-job: setup-dev
	.venv/bin/python benchmarks/bench_job.py
	.venv/bin/python benchmarks/bench_job.py --real --repeat 3

benchmark-tune: setup-dev
	.venv/bin/python benchmarks/bench_tune.py

clean:
	rm -rf .venv .pytest_cache .mypy_cache .ruff_cache .site benchmarks/out
