"""Analysing a job of 16 ranks: serially, in a process pool of 2 and 4, and on a local Dask
cluster; with ``--big``, 64 ranks of 500 MB each within a memory budget per worker; with
``--real``, real GPU traces as whole processes (`_job_real`, issue 39: 16 ranks of 10 MB and
8 of 54 MB, each worker's peak memory, Dask's break-even, a 1,000-rank x 1 GB projection).

    python benchmarks/bench_job.py [--ranks 16] [--steps 150] [--repeat 2]
    python benchmarks/bench_job.py --big [--ranks 64] [--worker-memory 2GB]
    python benchmarks/bench_job.py --real [--repeat 3]

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
    parser.add_argument("--ranks", type=int, default=None)
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--big", action="store_true")
    parser.add_argument("--worker-memory", default="2GB")
    parser.add_argument("--real", action="store_true")
    args = parser.parse_args()
    if args.real:
        real_jobs(args.repeat)
        return
    if args.big:
        big_job(args.ranks or 64, args.worker_memory)
        return
    args.ranks = args.ranks or 16
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


def real_jobs(repeat: int) -> None:
    """`_job_real`'s runs; the Markdown to benchmarks/out/bench_job.md."""
    import tempfile

    sys.path.insert(0, str(HERE))
    from _job_real import report, run_jobs
    from _report import header
    from bench_real import DATA, TINY, profsight_command, task_env

    with tempfile.TemporaryDirectory() as scratch:
        fixed, rows = run_jobs(DATA, TINY, profsight_command(), task_env(), Path(scratch), repeat)
    text = report(fixed, rows, header(REPO, repeat))
    (OUT / "bench_job.md").write_text(text)
    print("\n" + text)


def big_ranks(ranks: int) -> Path:
    """`ranks` traces of 500 MB: the 258 MB trace of bench_load.py written twice over (two
    process ids), linked under each rank's name (no copy on disk: every rank reads its own
    file through its own name; ranks come from the names, as for traces without
    ``distributedInfo``)."""
    sys.path.insert(0, str(HERE))
    from bench_large import build_large
    from bench_load import ensure_trace

    job = OUT / f"job{ranks}x500mb"
    if job.is_dir() and len(list(job.glob("rank-*.json"))) == ranks:
        return job
    source = build_large(ensure_trace(250.0), 2)
    shutil.rmtree(job, ignore_errors=True)
    job.mkdir(parents=True)
    for rank in range(ranks):
        os.link(source, job / f"rank-{rank}.pt.trace.json")
    return job


def measured(path: str) -> tuple[object, int]:
    """One rank's summary and the peak memory of the process that made it (so far)."""
    import resource

    from profsight.job.summary import summarize

    summary = summarize(path)
    return summary, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def big_job(ranks: int, worker_memory: str) -> None:
    from profsight.cli.common import byte_size
    from profsight.job.executors import planned_workers, run_all

    budget = byte_size(worker_memory)
    job = big_ranks(ranks)
    paths = sorted(str(p) for p in job.glob("rank-*.json"))
    size = os.path.getsize(paths[0])
    print(
        f"job: {len(paths)} ranks of {size / 1e6:.0f} MB ({len(paths) * size / 1e9:.1f} GB), "
        f"{os.cpu_count()} cores, --worker-memory {budget / 1e9:.1f} GB",
        flush=True,
    )
    print(f"\n{'run':<34} {'workers':>7} {'seconds':>8} {'ranks/min':>9} {'worker peak':>12}")

    def row(label: str, executor: str, some: list[str], workers: int | None) -> float:
        used, _ = planned_workers(some, executor, workers, budget)
        began = time.perf_counter()
        results = run_all(measured, some, executor, workers, None, budget)
        seconds = time.perf_counter() - began
        peak = max(rss for _, rss in results)  # type: ignore[misc]
        print(
            f"{label:<34} {used:>7} {seconds:>8.1f} {len(some) / seconds * 60:>9.1f} "
            f"{peak / 1e9:>10.2f} GB{'' if peak <= budget else '  OVER BUDGET'}",
            flush=True,
        )
        return seconds

    few = paths[:8]
    one = row("process pool, 8 ranks", "process", few, 1)
    two = row("process pool, 8 ranks", "process", few, 2)
    print(f"throughput, 2 workers / 1: {one / two:.2f}x ({os.cpu_count()} cores)")
    row(f"process pool, {len(paths)} ranks", "process", paths, None)
    try:
        import distributed  # noqa: F401
    except ImportError:
        print("(Dask distributed is not installed: no Dask run)")
        return
    row(f"Dask LocalCluster, {len(paths)} ranks", "dask", paths, None)


if __name__ == "__main__":
    main()
