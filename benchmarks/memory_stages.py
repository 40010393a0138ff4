"""Peak resident memory of each stage of explaining one trace, per event (Linux only).

    python benchmarks/memory_stages.py TRACE

Loads TRACE as one profile (a merged file's ranks are not split, as `explain` would) and
runs the stages one after another: the attribution, the table, the call tree, the
diagnosis, the timelines. Each stage's peak is read from the kernel's high-water mark
(``VmHWM``), which is reset before the stage (``/proc/self/clear_refs``), so every line is
that stage's own peak. "now" is what stays resident after it. Bytes per event make traces of
different sizes comparable: the 10 GB target of issue 15 is about 150 B/event.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def _reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def main() -> int:
    from profsight.analyses.pipeline import diagnose
    from profsight.analyses.step.timeline import timelines
    from profsight.loaders import load

    began = time.perf_counter()
    profile = load(sys.argv[1])
    n = max(len(profile.events), 1)

    def stage(name: str) -> None:
        peak, now = _status("VmHWM"), _status("VmRSS")
        print(
            f"{name:12s} {time.perf_counter() - began:7.1f} s  peak {peak / n:5.0f} B/event "
            f"({peak / 1e9:.2f} GB)  now {now / n:5.0f} B/event",
            flush=True,
        )
        _reset_peak()

    print(f"{n:,} events")
    stage("load")
    _ = profile.attribution
    stage("attribution")
    profile.table()
    stage("table")
    profile.tree()
    stage("tree")
    diagnose(profile)
    stage("diagnose")
    timelines(profile)
    stage("timelines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
