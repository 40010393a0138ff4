"""Speed and memory of ``profsight table`` on a large trace, against two baselines.

    python benchmarks/bench_load.py [--size-mb 250] [--repeat 3] [--skip-hta]

1. records a CPU trace of at least --size-mb with torch (kept in benchmarks/out/);
2. times, each in a fresh process, on the same file in the same run:
   * a bare msgspec typed decode of the events' top-level fields (the floor for any reader),
   * a msgspec typed decode of the fields profsight reads (args included: `_schema`, a copy
     of its schema, checked equal to it first, so that the decode's process imports nothing
     of profsight),
   * ``profsight table`` (load, nest, attribute, aggregate, render),
   * Holistic Trace Analysis loading it (``traceinsight`` in its own venv, benchmarks/out/);
3. prints times, ratios and peak memory as a multiple of the file size.

Targets (issue 2): profsight <= 2x the bare decode, >= 10x faster than HTA, peak memory
<= 3x the file size. The machines are noisy: compare ratios from one run, not times.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from _schema_check import check_schema_copy

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
PY = sys.executable


def run_task(python: str, task: str, trace: Path) -> dict[str, float]:
    result = subprocess.run(
        [python, str(HERE / "_task.py"), task, str(trace)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def ensure_trace(size_mb: float) -> Path:
    trace = OUT / f"large_cpu_{int(size_mb)}mb.pt.trace.json"
    if not trace.exists() or trace.stat().st_size < size_mb * 0.9e6:
        OUT.mkdir(exist_ok=True)
        print(f"recording a {size_mb:.0f} MB trace with torch ...", flush=True)
        subprocess.run(
            [PY, str(HERE / "record_large.py"), str(trace), "--size-mb", str(size_mb)], check=True
        )
    return trace


def ensure_hta() -> str:
    venv = OUT / "hta-venv"
    python = venv / "bin/python"
    if not python.exists():
        print("installing Holistic Trace Analysis (traceinsight) in its own venv ...", flush=True)
        subprocess.run([PY, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "traceinsight"],
            check=True,
            stderr=subprocess.DEVNULL,
        )
    return str(python)


def measure(python: str, task: str, trace: Path, repeat: int) -> dict[str, float]:
    runs = [run_task(python, task, trace) for _ in range(repeat)]
    return {
        "seconds": statistics.median(r["seconds"] for r in runs),
        "peak_rss": max(r["peak_rss"] for r in runs),
        "child_rss": max(r.get("child_rss", 0) for r in runs),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mb", type=float, default=250.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-hta", action="store_true")
    args = parser.parse_args()
    check_schema_copy()
    trace = ensure_trace(args.size_mb)
    size = trace.stat().st_size
    results = {
        "decode": measure(PY, "decode", trace, args.repeat),
        "schema": measure(PY, "schema", trace, args.repeat),
        "profsight": measure(PY, "profsight", trace, args.repeat),
        "explain": measure(PY, "explain", trace, args.repeat),
    }
    if not args.skip_hta:
        results["hta"] = measure(ensure_hta(), "hta", trace, 1)
    print(f"\ntrace: {trace.name}, {size / 1e6:.0f} MB, {os.cpu_count()} CPUs")
    print(f"{'task':<28}{'seconds':>9}{'MB/s':>8}{'peak RSS':>10}{'x file':>8}")
    labels = {
        "decode": "msgspec decode, top level",
        "schema": "msgspec decode, our fields",
        "profsight": "profsight table",
        "explain": "profsight explain (JSON)",
        "hta": "HTA TraceAnalysis load",
    }
    for task, r in results.items():
        print(
            f"{labels[task]:<28}{r['seconds']:>9.2f}{size / 1e6 / r['seconds']:>8.0f}"
            f"{r['peak_rss'] / 1e6:>9.0f}M{r['peak_rss'] / size:>8.2f}"
        )
    p, d, f = results["profsight"], results["decode"], results["schema"]
    print(f"\nprofsight / top-level decode:  {p['seconds'] / d['seconds']:.2f}x   (target <= 2)")
    print(f"profsight / our-fields decode: {p['seconds'] / f['seconds']:.2f}x   (target <= 2)")
    e = results["explain"]
    print(f"explain / table:               {e['seconds'] / p['seconds']:.2f}x   (target <= 2)")
    print(f"explain / our-fields decode:   {e['seconds'] / f['seconds']:.2f}x   (target <= 2.5)")
    if "hta" in results:
        print(
            f"HTA / profsight:         {results['hta']['seconds'] / p['seconds']:.1f}x  "
            "(target >= 10)"
        )
    print(
        f"profsight peak memory: {p['peak_rss'] / size:.2f}x the file, its decoding worker "
        f"{p['child_rss'] / size:.2f}x (pages shared with the parent counted in both; "
        "target <= 3)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
