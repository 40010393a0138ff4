"""Running `summarize` over the ranks of a job: in this process, a process pool, or Dask.

* ``serial``: one after another, here (what a single trace or ``--workers 1`` gets).
* ``process`` (the default): a local process pool; each worker loads and analyses whole
  traces and sends back a `RankSummary`. Workers are forked where that is safe (Linux, this
  process single-threaded), else spawned.
* ``dask``: the traces are analysed on a Dask distributed cluster: the scheduler at
  ``--scheduler ADDRESS`` (every worker must see the traces at the same paths and have
  profsight installed), or a local cluster of worker processes when no address is given.
  Only the summaries travel back to this process.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

from profsight.errors import UsageError
from profsight.loaders.parallel import can_fork

T = TypeVar("T")

EXECUTORS = ("process", "serial", "dask")


def default_workers(tasks: int) -> int:
    return max(1, min(tasks, os.cpu_count() or 1))


def run_all(
    work: Callable[[str], T],
    paths: Sequence[str],
    executor: str = "process",
    workers: int | None = None,
    scheduler: str | None = None,
) -> list[T]:
    """`work` applied to each path, results in the order of `paths`."""
    if executor not in EXECUTORS:
        raise UsageError(f"unknown executor {executor!r} (choose from {', '.join(EXECUTORS)})")
    if workers is not None and workers < 1:
        raise UsageError(f"--workers must be 1 or more, not {workers}")
    if scheduler is not None and executor != "dask":
        raise UsageError("--scheduler needs --executor dask")
    n = workers or default_workers(len(paths))
    if executor == "dask":
        return _dask(work, paths, n if workers else None, scheduler)
    if executor == "serial" or n == 1 or len(paths) == 1:
        return [work(p) for p in paths]
    return _pool(work, paths, n)


def _pool(work: Callable[[str], T], paths: Sequence[str], n: int) -> list[T]:
    method = "fork" if can_fork() else "spawn"
    context = multiprocessing.get_context(method)
    with ProcessPoolExecutor(max_workers=min(n, len(paths)), mp_context=context) as pool:
        return list(pool.map(work, paths))


def _dask(
    work: Callable[[str], T], paths: Sequence[str], n: int | None, scheduler: str | None
) -> list[T]:
    try:
        import distributed
    except ImportError as exc:
        raise UsageError(
            "--executor dask needs Dask distributed: pip install 'profsight[dask]'"
        ) from exc
    dask: Any = distributed  # its constructors are untyped
    if scheduler is not None:
        try:
            client = dask.Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as exc:
            raise UsageError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from exc
        with client:
            return _gather(client, work, paths)
    cluster_args: dict[str, Any] = {
        "n_workers": n or default_workers(len(paths)),
        "threads_per_worker": 1,
        "processes": True,
        "dashboard_address": None,
    }
    with dask.LocalCluster(**cluster_args) as cluster, dask.Client(cluster) as client:
        return _gather(client, work, paths)


def _gather(client: Any, work: Callable[[str], T], paths: Sequence[str]) -> list[T]:
    futures = client.map(work, list(paths), pure=False)
    return list(client.gather(futures))


__all__ = ["EXECUTORS", "default_workers", "run_all"]
