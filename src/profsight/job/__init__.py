"""A distributed job: every rank's trace, explained as one (`explain_job`).

`discover` finds the traces and the ranks their names state; `executors` runs `summarize`
on each trace (a process pool by default, or a Dask cluster) so only small summaries come
back; `one_job` tells traces of separate runs from the ranks of one; `ranks` settles which
trace is which rank; `align` matches the ranks step by step and
collective by collective on one clock; `analysis` and `findings` compare them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence

from profsight.errors import InputError
from profsight.job.analysis import analyse
from profsight.job.discover import TraceFile, find_traces
from profsight.job.executors import planned_workers, run_all
from profsight.job.one_job import not_one_job, not_one_job_note
from profsight.job.rank_ids import assign_ranks
from profsight.job.summary import RankFailure, RankSummary, summarize, summarize_profile
from profsight.job.views import JobData
from profsight.loaders import load
from profsight.malloc_trim import release_free_memory
from profsight.model.profile import Profile
from profsight.model.rank_split import RankParts, rank_parts

RankListener = Callable[[RankSummary | RankFailure, int, int], None]
"""Told (a rank's summary or failure, ranks finished, ranks in all) as each rank is done."""


def explain_job(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    executor: str = "process",
    workers: int | None = None,
    scheduler: str | None = None,
    worker_memory: int | None = None,
    on_rank: RankListener | None = None,
) -> JobData:
    """Explain a job from a directory of per-rank traces, or the trace files themselves.

    `executor`: ``process`` (a local process pool, the default), ``serial`` or ``dask``
    (`scheduler`: a Dask scheduler's address; none starts a local cluster).
    `worker_memory`: the bytes each worker may take (``--worker-memory``).
    `on_rank(summary, finished, total)`: told each trace's summary (or failure) as soon as
    it is ready, in the order they finish.
    """
    began = time.perf_counter()
    given = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    files = find_traces([os.fspath(p) for p in given])
    if len(files) == 1:
        merged = _merged_ranks(files[0].path)
        if merged:
            return explain_ranks(merged, files[0].path, began)
    traces = [f.path for f in files]
    finished = 0

    def done(i: int, result: RankSummary | RankFailure) -> None:
        nonlocal finished
        finished += 1
        if on_rank is not None:
            on_rank(result, finished, len(traces))

    results = run_all(summarize, traces, executor, workers, scheduler, worker_memory, done)
    used, why = planned_workers(traces, executor, workers, worker_memory, scheduler)
    diagnostics: list[str] = [why] if why else []
    good: list[tuple[int, RankSummary]] = []
    for i, result in enumerate(results):
        if isinstance(result, RankFailure):
            diagnostics.append(f"{result.message} (left out of the job)")
        else:
            good.append((i, result))
    if not good:
        first = next(r for r in results if isinstance(r, RankFailure))
        raise InputError(first.path, first.message.split(": ", 1)[-1])
    apart = not_one_job([s for _, s in good])
    if apart:  # said first: the rest of the notes read differently once it is known
        diagnostics.insert(0, not_one_job_note(len(good), apart))
    ranks, world = assign_ranks([(files[i], s) for i, s in good], diagnostics, bool(apart))
    run = {
        "executor": executor,
        "workers": used if executor != "dask" or workers else None,
        "scheduler": scheduler,
        "traces": len(files),
        "seconds": round(time.perf_counter() - began, 3),
    }
    return analyse(ranks, world, diagnostics, run, apart)


def _merged_ranks(path: str) -> RankParts | None:
    """The ranks a single trace file holds, if it holds several (a merged job trace)."""
    try:
        profile = load(path)
    except InputError:
        return None  # summarize reports it, as for any other trace
    return rank_parts(profile) if isinstance(profile, Profile) else None


def explain_ranks(parts: RankParts, path: str, began: float | None = None) -> JobData:
    """A job from the ranks of one merged trace (`rank_parts`), analysed in this process one
    rank at a time: each rank's copy of its events, and what its analysis kept, is freed
    before the next rank is made."""
    began = time.perf_counter() if began is None else began
    diagnostics = [
        f"{os.path.basename(path)} holds {len(parts)} ranks ({parts.how}): explained as a job"
    ]
    summaries = []
    for k in range(len(parts)):
        part = parts[k]
        summaries.append(summarize_profile(part, part.source))
        del part
        release_free_memory()
    files = [TraceFile(source, None, 0.0) for source in parts.sources]
    ranks, world = assign_ranks(list(zip(files, summaries, strict=True)), diagnostics)
    run = {
        "executor": "serial",
        "workers": 1,
        "scheduler": None,
        "traces": 1,
        "seconds": round(time.perf_counter() - began, 3),
    }
    return analyse(ranks, world, diagnostics, run)


__all__ = ["JobData", "RankListener", "explain_job", "explain_ranks"]
