"""Reading memory snapshots: profsight's read and replay against the floor, a bare
restricted ``pickle.load`` of the same bytes (what any reader of the format pays).

    python benchmarks/bench_snapshot.py [SNAPSHOT ...]   (default: tests/data/shared/snapshots)

Prints, per file, its events, both times (best of 3) and their ratio.
"""

from __future__ import annotations

import gzip
import io
import pickle
import sys
import time
from pathlib import Path
from typing import Any

from profsight.analyses.snapshot_peak import snapshot_peaks
from profsight.loaders.snapshot_pickle import load_snapshot

DEFAULT = Path(__file__).parent.parent / "tests/data/shared/snapshots"


class _Plain(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"{module}.{name}")


def _floor(path: Path) -> float:
    start = time.perf_counter()
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    _Plain(io.BytesIO(data)).load()
    return time.perf_counter() - start


def _profsight(path: Path) -> tuple[float, int]:
    start = time.perf_counter()
    snapshot = load_snapshot(path)
    snapshot_peaks(snapshot)
    return time.perf_counter() - start, sum(len(d.events) for d in snapshot.devices)


def main(paths: list[Path]) -> None:
    print(f"{'snapshot':<40} {'events':>8} {'pickle.load':>12} {'profsight':>10} {'ratio':>6}")
    for path in paths:
        floor = min(_floor(path) for _ in range(3))
        runs = [_profsight(path) for _ in range(3)]
        seconds, events = min(r[0] for r in runs), runs[0][1]
        times = f"{floor:>11.3f}s {seconds:>9.3f}s {seconds / floor:>5.1f}x"
        print(f"{path.name:<40} {events:>8,} {times}")


if __name__ == "__main__":
    given = [Path(p) for p in sys.argv[1:]]
    main(given or sorted(DEFAULT.glob("*.pickle*")))
