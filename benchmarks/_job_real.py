"""Per-worker cost on many ranks of real traces (issue 39, item 4): whole processes.

A job is `ranks` copies of one real trace (its ``distributedInfo`` rank and world size set
per copy), under ``benchmarks/out/``. On each job, ``profsight job DIR --format json -o ...``
runs serially, in a process pool of 2 and on a local Dask cluster of 2 workers, each a whole
process (`_measure`: warmed once, its memory sampled in that run, then `repeat` interleaved
rounds, medians). Reported per run: the wall time, the peak RSS of the largest worker (of
the one process, for the serial run) and the peak of all processes together.

Two fixed costs are measured beside them, as whole processes too:

* a worker's start-up: ``python -c "import profsight.job.summary"`` (what a spawned pool
  worker or a Dask worker imports before its first rank) against ``import numpy, msgspec``;
* Dask's: the same job command on two 3-event traces, ``--executor dask`` against
  ``serial`` (starting the cluster, its workers' imports, the round trips, the shut-down).

From those, `break_even` says from which total of trace bytes a local Dask cluster pays off
against the serial run, and `projection` what a 1,000-rank job of 1 GB traces needs.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from _rounds import Result, Task, measure
from bench_load import OUT, PY
from bench_real import plain

#: (label, trace under tests/data, ranks): issue 39's 16 ranks of 10 MB and 8 of 55 MB.
_DF_INDEX = "shared/traces/hta/df_index_resolver/df_index_resolver.json.gz"
CASES = [
    ("HTA `nccl_data`, 10 MB", "real/nccl_data.json.gz", 16),
    ("HTA `df_index_resolver`, 54 MB", _DF_INDEX, 8),
]

#: (executor, workers) of each timed run.
RUNS = [("serial", 1), ("process", 2), ("dask", 2)]

_RANK = re.compile(rb'"rank"\s*:\s*-?\d+')
_WORLD = re.compile(rb'"world_size"\s*:\s*\d+')


def job_of(trace: Path, ranks: int) -> Path:
    """`ranks` copies of `trace` in a folder of their own, rank and world size set in each
    copy's ``distributedInfo`` (without one, the names say the ranks)."""
    job = OUT / f"job_{trace.name.split('.')[0]}_{ranks}"
    if job.is_dir() and len(list(job.glob("rank-*.json"))) == ranks:
        return job
    shutil.rmtree(job, ignore_errors=True)
    job.mkdir(parents=True)
    data = trace.read_bytes()
    at = data.find(b'"distributedInfo"')
    end = data.index(b"}", at) + 1 if at >= 0 else -1
    for rank in range(ranks):
        target = job / f"rank-{rank}.pt.trace.json"
        if at < 0:
            target.write_bytes(data)
            continue
        info = _RANK.sub(b'"rank": %d' % rank, data[at:end])
        info = _WORLD.sub(b'"world_size": %d' % ranks, info)
        with target.open("wb") as fh:
            fh.write(data[:at])
            fh.write(info)
            fh.write(data[end:])
    return job


@dataclass
class JobRow:
    label: str
    ranks: int
    rank_bytes: int
    results: dict[str, Result]


def job_tasks(job: Path, profsight: list[str], env: dict[str, str], scratch: Path) -> list[Task]:
    out = str(scratch / "job.json")
    return [
        Task(
            f"{executor} {workers}",
            [*profsight, "job", str(job), "--executor", executor, "--workers", str(workers),
             "--format", "json", "-o", out, "--force", "--no-progress"],
            env,
        )
        for executor, workers in RUNS
    ]  # fmt: skip


def fixed_tasks(tiny: Path, profsight: list[str], env: dict[str, str], scratch: Path) -> list[Task]:
    """The worker's start-up and Dask's own cost (module docstring)."""
    job = OUT / "job_tiny_2"
    if not job.is_dir():
        job.mkdir(parents=True)
        for rank in range(2):
            shutil.copyfile(tiny, job / f"rank-{rank}.pt.trace.json")
    out = str(scratch / "tiny.json")
    common = ["job", str(job), "--format", "json", "-o", out, "--force", "--no-progress"]
    return [
        Task("imports", [PY, "-c", "import numpy, msgspec"], env),
        Task("worker imports", [PY, "-c", "import profsight.job.summary"], env),
        Task("tiny serial", [*profsight, *common, "--executor", "serial"], env),
        Task("tiny dask 2", [*profsight, *common, "--executor", "dask", "--workers", "2"], env),
    ]


def run_jobs(
    data: Path, tiny: Path, profsight: list[str], env: dict[str, str], scratch: Path, repeat: int
) -> tuple[dict[str, Result], list[JobRow]]:
    print("fixed costs ...", flush=True)
    fixed = measure(fixed_tasks(tiny, profsight, env, scratch), repeat, float("inf"))
    rows = []
    for label, path, ranks in CASES:
        trace = plain(data / path)
        job = job_of(trace, ranks)
        print(f"{label} x {ranks} ranks ...", flush=True)
        results = measure(job_tasks(job, profsight, env, scratch), repeat, float("inf"))
        rows.append(JobRow(label, ranks, trace.stat().st_size, results))
    return fixed, rows


def _mb(n: float) -> str:
    return f"{n / 1e6:,.0f} MB"


def report(fixed: dict[str, Result], rows: list[JobRow], head: str) -> str:
    """The Markdown table of the runs, the fixed costs, the break-even and the projection."""
    lines = [head, ""]
    imports, worker = fixed["imports"].seconds, fixed["worker imports"].seconds
    tiny_s, tiny_d = fixed["tiny serial"].seconds, fixed["tiny dask 2"].seconds
    if imports and worker:
        lines.append(
            f"- A worker's start-up (`import profsight.job.summary`): {worker:.2f} s and "
            f"{_mb(fixed['worker imports'].peak)}, against {imports:.2f} s and "
            f"{_mb(fixed['imports'].peak)} for `import numpy, msgspec` ({worker / imports:.2f}x)."
        )
    if tiny_s and tiny_d:
        lines.append(
            f"- Dask's own cost: a job of two 3-event traces takes {tiny_d:.2f} s on a local "
            f"cluster of 2 workers, {tiny_s:.2f} s serially: {tiny_d - tiny_s:.2f} s more."
        )
    lines += [
        "",
        "| job | serial | process pool, 2 | Dask, 2 workers | one worker's peak, x a rank's "
        "trace (serial ¹ / pool / Dask) | all processes' peak (serial / pool / Dask) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        r = [row.results[f"{e} {w}"] for e, w in RUNS]
        times = [f"{x.seconds:.2f} s" if x.seconds else "failed" for x in r]
        base = r[0].seconds
        for i in (1, 2):
            if base and r[i].seconds:
                times[i] += f" ({base / r[i].seconds:.2f}x)"
        one = [r[0].warm.peak, r[1].warm.descendant_peak, r[2].warm.descendant_peak]
        per = " / ".join(f"{_mb(m)} ({m / row.rank_bytes:.2f}x)" for m in one)
        every = " / ".join(_mb(x.peak) for x in r)
        lines.append(
            f"| {row.label} x {row.ranks} ({_mb(row.rank_bytes * row.ranks)}) | "
            f"{' | '.join(times)} | {per} | {every} |"
        )
    lines += [
        "",
        "Times are whole `profsight job DIR --format json` processes, ratios the serial run's "
        "over each; a worker's peak is the largest RSS of one of the run's processes (¹ the "
        "serial run's: its one process, with its forked decoding worker's private pages).",
        "",
        *break_even(fixed, rows),
        "",
        *projection(fixed, rows),
    ]
    return "\n".join(lines) + "\n"


def _rate(row: JobRow, tiny_serial: float) -> float | None:
    """Serial seconds of analysis per byte of trace (the start-up taken out)."""
    serial = row.results["serial 1"].seconds
    if not serial:
        return None
    return (serial - tiny_serial) / (row.rank_bytes * row.ranks)


def break_even(fixed: dict[str, Result], rows: list[JobRow]) -> list[str]:
    """From which total of trace bytes the local Dask cluster of 2 is faster than serial:
    Dask's own cost over what its 2 workers save per byte (both measured)."""
    tiny_s, tiny_d = fixed["tiny serial"].seconds, fixed["tiny dask 2"].seconds
    if not tiny_s or not tiny_d:
        return ["Break-even: not known (a fixed-cost run failed)."]
    out = ["Break-even of a local Dask cluster of 2 workers against the serial run:"]
    for row in rows:
        serial, dask = row.results["serial 1"].seconds, row.results["dask 2"].seconds
        rate = _rate(row, tiny_s)
        if not serial or not dask or not rate:
            out.append(f"- {row.label}: not known (a run failed)")
            continue
        work = serial - tiny_s
        saved = 1.0 - (dask - tiny_d) / work  # the share of the serial work Dask saves
        if saved <= 0:
            out.append(f"- {row.label}: Dask saved nothing of the work here; it does not pay off")
            continue
        need = (tiny_d - tiny_s) / saved / rate
        out.append(
            f"- {row.label}: analysis {rate * 1e6 * 1e3:.1f} ms per MB serially; the 2 "
            f"workers save {saved:.0%} of it; Dask's {tiny_d - tiny_s:.2f} s are paid off "
            f"from about {_mb(need)} of traces"
        )
    return out


#: The projected job (issue 39): 1,000 ranks of 1 GB, on nodes like the device machine
#: (16 cores, 128 GiB), finished within an hour.
PROJECT_RANKS, PROJECT_BYTES = 1000, 1e9
NODE_CORES, NODE_BYTES, WITHIN_S = 16, 128 * 2**30, 3600.0


def projection(fixed: dict[str, Result], rows: list[JobRow]) -> list[str]:
    """A 1,000-rank x 1 GB job, scaled linearly from the largest case: its serial analysis
    time per byte (start-up taken out), and its largest pool worker's peak above a worker's
    start-up per byte (pool workers decode in one process each)."""
    if not rows:
        return []
    row = max(rows, key=lambda r: r.rank_bytes)
    tiny, base = fixed["tiny serial"].seconds, fixed["worker imports"].peak
    rate = _rate(row, tiny) if tiny else None
    peak = row.results["process 2"].warm.descendant_peak
    if not rate or not peak:
        return ["Projection: not known (a run failed)."]
    per_byte = (peak - base) / row.rank_bytes
    per_rank = rate * PROJECT_BYTES
    memory = base + per_byte * PROJECT_BYTES
    total = per_rank * PROJECT_RANKS
    workers = -(-total // WITHIN_S)
    per_node = max(1, min(NODE_CORES, int(NODE_BYTES * 0.8 // memory)))
    return [
        f"Projection, scaled linearly from {row.label} (analysis {rate * 1e9:.1f} s per GB "
        f"serially; a pool worker's peak {_mb(base)} at start-up plus {per_byte:.2f}x its "
        f"trace): a 1 GB rank takes about {per_rank:.0f} s and {memory / 2**30:.1f} GiB in "
        f"one worker; {PROJECT_RANKS:,} of them are {total / 3600:.1f} worker-hours: "
        f"{workers:.0f} workers to finish within an hour, {per_node} to a node of "
        f"{NODE_CORES} cores and {NODE_BYTES / 2**30:.0f} GiB (80% of its memory), so "
        f"{-(-workers // per_node):.0f} such node(s)."
    ]
