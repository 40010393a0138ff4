"""The basis of `HELD_BACK_US`: how long launched work takes to start on an idle GPU.

For every GPU trace given (default: the real traces in tests/data), each kernel, copy or
memset launched in the trace is measured from the later of its launch returning and the end
of its device's previous work, to its start: the time the item waited with the device free.
Items launched by one-time start-up are left out (`startup_events`). Prints, per trace, the
count, median, 99th percentile and maximum, and the items held past the threshold.

    .venv/bin/python scripts/launch_latency.py [TRACE ...]
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

import profsight
from profsight.analyses.step.held import ready_waits
from profsight.analyses.step.startup import startup_events
from profsight.knowledge.advice import HELD_BACK_US

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"


def waits_us(path: Path) -> np.ndarray:
    """Each launched item's wait with its device free (µs)."""
    profile = profsight.load(path)
    _, ready, start = ready_waits(profile, startup_events(profile))
    return (start - ready) / 1000.0


def main(paths: list[Path]) -> None:
    warnings.simplefilter("ignore")
    clean = []  # the traces with no held item: what a normal launch waits
    for path in paths:
        w = waits_us(path)
        if len(w) == 0:
            continue
        held = w >= HELD_BACK_US
        if not held.any():
            clean.append(w)
        print(
            f"{path.relative_to(DATA) if path.is_relative_to(DATA) else path}: {len(w)} items, "
            f"median {np.median(w):.1f} µs, p99 {np.percentile(w, 99):.1f} µs, "
            f"max {w.max():.1f} µs; held >= {HELD_BACK_US:g} µs: {int(held.sum())}"
            + (f" (up to {w[held].max() / 1000:.1f} ms)" if held.any() else "")
        )
    if clean:
        p99 = max(float(np.percentile(w, 99)) for w in clean)
        print(
            f"{len(clean)} traces with no held item: {sum(len(w) for w in clean)} items, "
            f"p99 at most {p99:.1f} µs in each, max {max(float(w.max()) for w in clean):.1f} µs"
        )


if __name__ == "__main__":
    given = [Path(a) for a in sys.argv[1:]]
    main(given or sorted(p for p in DATA.glob("**/*.json.gz") if "malformed" not in p.parts))
