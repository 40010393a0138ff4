"""How much two runs of the same script differ on this machine: the noise no run's own steps
show (warm-up, CPU clocks, caches, neighbours), to give `profsight diff --noise`.

One small training loop (tests/recorders.py's, eight profiled steps) is recorded `N` times,
each in a process of its own, as two runs of one script are; prints each recording's mean
step, its step-to-step spread, and the spread of the means across recordings.

    .venv/bin/python scripts/run_to_run.py [N]      # N=5: about a minute on 2 cores
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import profsight
from profsight.compare.facts import RunFacts

ROOT = Path(__file__).resolve().parent.parent
#: One recording, in a process of its own (`tests/recorders.py`'s loop).
RECORD = (
    "import pathlib, sys, warnings\n"
    "sys.path.insert(0, 'tests')\n"
    "warnings.simplefilter('ignore')\n"
    "from recorders import record_plain\n"
    "record_plain(pathlib.Path(sys.argv[1]), steps=8)\n"
)


def main(n: int) -> None:
    means: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(n):
            out = Path(tmp) / f"run{k}.pt.trace.json"
            command = [sys.executable, "-c", RECORD, str(out)]
            subprocess.run(command, check=True, cwd=ROOT, capture_output=True)
            facts = RunFacts.of(profsight.explain(out))
            walls = facts.step_walls
            mean = statistics.fmean(walls)
            means.append(mean)
            spread = facts.step_spread_us or 0.0
            print(f"recording {k + 1}: mean step {mean:8.1f} µs, step-to-step sd {spread:6.1f} µs "
                  f"({100 * spread / mean:.1f}%)")  # fmt: skip
    mid, sd = statistics.fmean(means), statistics.stdev(means)
    spread = 100 * (max(means) - min(means)) / mid
    print(f"across recordings: mean {mid:.1f} µs, sd {sd:.1f} µs ({100 * sd / mid:.1f}%), range "
          f"{spread:.1f}% of the mean: give diff --noise about the range")  # fmt: skip


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
