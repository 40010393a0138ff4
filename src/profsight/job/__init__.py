"""A distributed job: every rank's trace, explained as one (`explain_job`).

`discover` finds the traces and the ranks their names state; `executors` runs `summarize`
on each trace (a process pool by default, or a Dask cluster) so only small summaries come
back; `ranks` settles which trace is which rank; `align` matches the ranks step by step and
collective by collective on one clock; `analysis` and `findings` compare them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

from profsight.errors import InputError
from profsight.job.analysis import JobReport, analyse
from profsight.job.discover import find_traces
from profsight.job.executors import default_workers, run_all
from profsight.job.ranks import assign_ranks
from profsight.job.summary import RankFailure, RankSummary, summarize


def explain_job(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    executor: str = "process",
    workers: int | None = None,
    scheduler: str | None = None,
) -> JobReport:
    """Explain a job from a directory of per-rank traces, or the trace files themselves.

    `executor`: ``process`` (a local process pool, the default), ``serial`` or ``dask``
    (`scheduler`: a Dask scheduler's address; none starts a local cluster).
    """
    began = time.perf_counter()
    given = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    files = find_traces([os.fspath(p) for p in given])
    results = run_all(summarize, [f.path for f in files], executor, workers, scheduler)
    diagnostics: list[str] = []
    good: list[tuple[int, RankSummary]] = []
    for i, result in enumerate(results):
        if isinstance(result, RankFailure):
            diagnostics.append(f"{result.message} (left out of the job)")
        else:
            good.append((i, result))
    if not good:
        first = next(r for r in results if isinstance(r, RankFailure))
        raise InputError(first.path, first.message.split(": ", 1)[-1])
    ranks, world = assign_ranks([(files[i], s) for i, s in good], diagnostics)
    used = 1 if executor == "serial" else min(workers or default_workers(len(files)), len(files))
    run = {
        "executor": executor,
        "workers": used if executor != "dask" or workers else None,
        "scheduler": scheduler,
        "traces": len(files),
        "seconds": round(time.perf_counter() - began, 3),
    }
    return analyse(ranks, world, diagnostics, run)


__all__ = ["JobReport", "explain_job"]
