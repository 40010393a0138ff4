"""Predicted vs measured savings: each planted scenario of `tests/scenarios.py` recorded with
its bottleneck and with the fix made (its fixed twin), with plain torch.profiler and with
Lightning, `RUNS` times each; prints docs/measurements.md's
Markdown table (medians over the runs).

    .venv/bin/python scripts/replay_twins.py          # about two minutes on 2 cores
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import scenarios
from test_replay import predicted_and_measured

RUNS = 3


def main() -> None:
    out = Path(tempfile.mkdtemp(prefix="profsight-twins-"))
    print(
        "| scenario | the fix (twin) | plain: predicted | measured | off by "
        "| Lightning: predicted | measured | off by |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name, scenario in scenarios.SCENARIOS.items():
        if scenario.fixed is None:
            continue
        cells = []
        for form in ("plain", "lightning"):
            runs = [
                predicted_and_measured(name, out / f"{name}-{form}-{k}", form) for k in range(RUNS)
            ]
            predicted = statistics.median(p for p, _ in runs)
            measured = statistics.median(m for _, m in runs)
            off = (predicted - measured) / measured * 100 if measured else float("nan")
            cells.append(f"{predicted:.0f}% | {measured:.0f}% | {off:+.0f}%")
        print(f"| `{name}` | {scenario.fix} | {' | '.join(cells)} |", flush=True)


if __name__ == "__main__":
    main()
