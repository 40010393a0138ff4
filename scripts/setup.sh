#!/usr/bin/env bash
# Set up profsight in ./.venv on a fresh machine.
#   scripts/setup.sh        the package (what `profsight explain` needs: no torch)
#   scripts/setup.sh demo   plus torch 2.13 (CPU build), Lightning and torchmetrics
#                           (what `profsight demo` and profsight.lightning need)
#   scripts/setup.sh dev    plus torch 2.13 (CPU build), Lightning, the test/lint tools and
#                           the docs site's (MkDocs, Material, mkdocstrings)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
pip() { .venv/bin/python -m pip --disable-pip-version-check -q "$@"; }
if [ "${1:-}" = "dev" ]; then
    # torch first and pinned: a bare `torch` requirement makes pip pull a multi-GB CUDA build.
    .venv/bin/python -c "import torch" 2>/dev/null || pip install "torch==2.13.0"
    pip install -e ".[dev,docs]"
    # tests/test_html.py opens the HTML report in Debian's chromium (Playwright's own browser
    # download is not used); without it those tests are skipped.
    if [ ! -x /usr/bin/chromium ]; then
        if [ "$(id -u)" = "0" ]; then
            apt-get update -qq && apt-get install -y -qq chromium
        else
            echo "note: /usr/bin/chromium is missing; the HTML report's browser tests will be" \
                "skipped (as root: apt-get install chromium)" >&2
        fi
    fi
elif [ "${1:-}" = "demo" ]; then
    # torch first and pinned, for the same reason as in dev
    .venv/bin/python -c "import torch" 2>/dev/null || pip install "torch==2.13.0"
    pip install -e ".[torch]"
else
    pip install -e .
fi
