"""A trace of 2 GB or more on this 24 GB machine: time and peak memory, against the same
work on the 250 MB trace it is built from (measured in the same run).

    python benchmarks/bench_large.py [--copies 8] [--repeat 1]

The large trace is the 250 MB torch trace of bench_load.py with its event array written
`--copies` times, each copy under its own process id (as if N processes had been profiled
into one file), so it holds N times the events of a real trace and every event is distinct.
Both files are explained (``profsight explain --format json``) and tabled in fresh
processes. Targets (issue 7): no running out of memory; time and memory grow at most
linearly with the file (ratios <= 1.2x of the per-byte cost on the small trace).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from bench_load import OUT, PY, ensure_trace, measure

_ARRAY_OPEN = b'"traceEvents": ['
_ARRAY_CLOSE = b"\n  ],"


def build_large(source: Path, copies: int) -> Path:
    target = OUT / f"large_cpu_x{copies}.pt.trace.json"
    if target.exists():
        return target
    data = source.read_bytes()
    start = data.index(_ARRAY_OPEN) + len(_ARRAY_OPEN)
    end = data.rindex(_ARRAY_CLOSE)
    head, body, tail = data[:start], data[start:end], data[end:]
    pids = {
        line.split(b":")[1].strip(b" ,") for line in body.splitlines()[:2000] if b'"pid": ' in line
    }
    numeric = sorted(p for p in pids if p.isdigit())
    print(f"writing {copies} copies of {len(body) / 1e6:.0f} MB of events (pids {numeric}) ...")
    with target.open("wb") as out:
        out.write(head)
        for k in range(copies):
            copy = body
            for pid in numeric:
                copy = copy.replace(
                    b'"pid": ' + pid + b",", b'"pid": ' + pid + str(k).encode() + b","
                )
            out.write(copy if k == 0 else b"," + copy)
        out.write(tail)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--build-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    small = ensure_trace(250.0)
    if args.build_only:
        build_large(small, args.copies)
        return 0
    # built in its own process: a child started from a big parent inherits its peak RSS
    subprocess.run([PY, __file__, "--build-only", "--copies", str(args.copies)], check=True)
    large = build_large(small, args.copies)
    sizes = {"small": small.stat().st_size, "large": large.stat().st_size}
    print(f"small: {sizes['small'] / 1e6:.0f} MB, large: {sizes['large'] / 1e9:.2f} GB")
    rows = []
    for task in ("profsight", "explain"):
        for which, path in (("small", small), ("large", large)):
            r = measure(PY, task, path, args.repeat)
            rows.append((task, which, r))
            print(
                f"{task:<10}{which:<7}{r['seconds']:>8.1f} s{r['peak_rss'] / 1e9:>7.2f} GB peak"
                f" ({r['peak_rss'] / sizes[which]:.2f}x file; worker {r['child_rss'] / 1e9:.2f} GB)"
            )
    for task in ("profsight", "explain"):
        s, big = (r for t, _, r in rows if t == task)
        scale = sizes["large"] / sizes["small"]
        print(
            f"{task}: seconds per byte, large/small {big['seconds'] / s['seconds'] / scale:.2f}x; "
            f"peak memory per byte, large/small {big['peak_rss'] / s['peak_rss'] / scale:.2f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
