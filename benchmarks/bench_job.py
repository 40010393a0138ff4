"""Analysing a job of 16 ranks: serially, in a process pool of 2 and 4, and on a local Dask
cluster.

    python benchmarks/bench_job.py [--ranks 16] [--steps 150] [--repeat 2]

1. records a real 2-process DDP job on the CPU (gloo, tests/ddp_job.py, rank 1 slowed by
   20 ms) and replicates its two traces into a job of --ranks ranks, each copy with its
   ``distributedInfo`` rank and world size changed (kept in benchmarks/out/job16/);
2. times ``explain_job`` on it with each executor, in this process, best of --repeat;
3. prints the time per rank and the speed-up over the serial run, and how many bytes of
   summaries came back against the traces' size.

The machines are noisy and may have few cores: read the ratios of one run.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import pickle
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
REPO = HERE.parent


def record_job(ranks: int, steps: int) -> Path:
    job = OUT / f"job{ranks}"
    if job.is_dir() and len(list(job.glob("rank-*.json.gz"))) == ranks:
        return job
    source = OUT / "job-source"
    shutil.rmtree(source, ignore_errors=True)
    print(f"recording a 2-rank DDP job ({steps} steps) ...", flush=True)
    subprocess.run(
        [
            *(sys.executable, str(REPO / "tests/ddp_job.py"), "plain", str(source)),
            *("--steps", str(steps), "--delay-ms", "20", "--slow-rank", "1"),
        ],
        check=True,
        capture_output=True,
    )
    traces = {}
    for path in sorted(source.glob("*.json.gz")):
        with gzip.open(path, "rt") as fh:
            doc = json.load(fh)
        traces[doc["distributedInfo"]["rank"]] = doc
    shutil.rmtree(job, ignore_errors=True)
    job.mkdir(parents=True)
    for rank in range(ranks):
        doc = traces[rank % 2]
        doc["distributedInfo"] = {**doc["distributedInfo"], "rank": rank, "world_size": ranks}
        with gzip.open(job / f"rank-{rank}.pt.trace.json.gz", "wt", compresslevel=1) as fh:
            json.dump(doc, fh)
    return job


def timed(run: object, repeat: int) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        began = time.perf_counter()
        result = run()  # type: ignore[operator]
        best = min(best, time.perf_counter() - began)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=16)
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from profsight.job import explain_job
    from profsight.job.summary import summarize

    job = record_job(args.ranks, args.steps)
    traces = sorted(job.glob("*.json.gz"))
    size = sum(p.stat().st_size for p in traces)
    raw = 0
    for p in traces[:2]:
        with gzip.open(p, "rb") as fh:
            raw += len(fh.read())
    print(
        f"job: {len(traces)} traces, {size / 1e6:.1f} MB gzipped "
        f"(~{raw / 2 / 1e6:.1f} MB of JSON each), {os.cpu_count()} cores"
    )

    runs = [("serial", "serial", 1), ("process", "process", 2), ("process", "process", 4)]
    results = {}
    for label, executor, workers in runs:
        seconds, report = timed(lambda e=executor, w=workers: explain_job(job, e, w), args.repeat)
        results[(label, workers)] = (seconds, report)
    try:
        import distributed

        with distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            host="127.0.0.1",
        ) as cluster:
            address = cluster.scheduler_address
            seconds, report = timed(
                lambda: explain_job(job, "dask", scheduler=address), args.repeat
            )
            results[("dask (2 workers)", 2)] = (seconds, report)
    except ImportError:
        print("(Dask distributed is not installed: no Dask run)")

    base = results[("serial", 1)][0]
    print(f"\n{'executor':<18} {'workers':>7} {'total s':>8} {'s per rank':>10} {'speed-up':>9}")
    for (label, workers), (seconds, _) in results.items():
        print(
            f"{label:<18} {workers:>7} {seconds:>8.2f} {seconds / len(traces):>10.3f} "
            f"{base / seconds:>8.2f}x"
        )
    reports = [r for _, r in results.values()]
    stragglers = {r.straggler.rank if r.straggler else None for r in reports}  # type: ignore[attr-defined]
    print(f"\nsame straggler from every executor: {stragglers}")
    summary = summarize(str(traces[0]))
    sent = len(pickle.dumps(summary))
    print(
        f"one rank's summary: {sent / 1e3:.1f} KB pickled, "
        f"{raw / 2 / sent:.0f}x smaller than its trace's JSON"
    )


if __name__ == "__main__":
    main()
