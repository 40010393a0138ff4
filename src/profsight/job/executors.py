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

import concurrent.futures
import contextlib
import ctypes
import multiprocessing
import os
import socket
import sys
import threading
import warnings
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import Any, TypeVar

from profsight.errors import UsageError
from profsight.lazy import regex
from profsight.loaders.parallel import can_fork
from profsight.units import short_bytes

T = TypeVar("T")

EXECUTORS = ("process", "serial", "dask")


def default_workers(tasks: int) -> int:
    return max(1, min(tasks, os.cpu_count() or 1))


#: A worker's peak memory for one rank: RANK_PEAK_PER_BYTE times the trace's decompressed
#: size, plus RANK_BASE_BYTES for the process itself. Measured with one process decoding
#: (resource.getrusage, scripts in docs/NOTES.md) on four real traces of 9 to 54 MB: 2.2 to
#: 3.0 times the size above a 35 MB interpreter; the larger the file, the lower the ratio.
RANK_PEAK_PER_BYTE = 3.0
RANK_BASE_BYTES = 100 << 20
#: The share of the memory the system calls available that the workers may take together.
MEMORY_SHARE = 0.8
#: Where a gzip member's size field cannot hold the decompressed size (>= 4 GiB, wrapped).
GZIP_RATIO = 20


def planned_workers(
    paths: Sequence[str],
    executor: str,
    workers: int | None,
    worker_memory: int | None = None,
    scheduler: str | None = None,
) -> tuple[int, str]:
    """How many workers the local pool (or local Dask cluster) runs, and why fewer than
    asked ("" when not): no more than the cores (unless asked), the traces, and the memory
    available allows, each worker taking `worker_memory` bytes when given, else what the
    largest trace may need. A scheduler's cluster sizes itself."""
    if executor == "serial":
        return 1, ""
    n = min(workers or default_workers(len(paths)), max(len(paths), 1))
    if scheduler is not None or n == 1:
        return n, ""
    largest = max((_decoded_bytes(p) for p in paths), default=0)
    need = RANK_PEAK_PER_BYTE * largest + RANK_BASE_BYTES
    warning = (
        f"the largest trace may need ~{short_bytes(need)}, more than --worker-memory "
        f"{short_bytes(worker_memory)}"
        if worker_memory is not None and need > worker_memory
        else ""
    )
    available = _available_bytes()
    if available is None:
        return n, warning
    per_worker = worker_memory or need
    fits = max(1, int(available * MEMORY_SHARE // per_worker))
    if fits >= n:
        return n, warning
    why = (
        f"{fits} worker(s), not {n}: each may take ~{short_bytes(per_worker)}"
        + (" (--worker-memory)" if worker_memory else " for the largest trace")
        + f", and {short_bytes(available)} of memory is available"
    )
    return fits, "; ".join(w for w in (why, warning) if w)


def _available_bytes() -> int | None:
    """MemAvailable of /proc/meminfo (None where there is none)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def _decoded_bytes(path: str) -> int:
    """A trace's size once decompressed: a gzip member says it in its last four bytes."""
    try:
        size = os.path.getsize(path)
        if not path.endswith(".gz") or size < 18:
            return size
        with open(path, "rb") as fh:
            fh.seek(-4, os.SEEK_END)
            stated = int.from_bytes(fh.read(4), "little")
    except OSError:
        return 0
    return stated if stated >= size else size * GZIP_RATIO


def run_all(
    work: Callable[[str], T],
    paths: Sequence[str],
    executor: str = "process",
    workers: int | None = None,
    scheduler: str | None = None,
    worker_memory: int | None = None,
    on_done: Callable[[int, T], None] | None = None,
) -> list[T]:
    """`work` applied to each path, results in the order of `paths`; `worker_memory`: the
    bytes each worker may take (it sizes the local pool, and a local Dask cluster's workers
    are held to it by Dask). `on_done(i, result)` is called as each path's work finishes,
    in the order they finish (partial results, a progress bar)."""
    if executor not in EXECUTORS:
        raise UsageError(f"unknown executor {executor!r} (choose from {', '.join(EXECUTORS)})")
    if workers is not None and workers < 1:
        raise UsageError(f"--workers must be 1 or more, not {workers}")
    if scheduler is not None and executor != "dask":
        raise UsageError("--scheduler needs --executor dask")
    done = on_done or _ignore
    if executor == "dask":
        if scheduler is None:
            workers, _ = planned_workers(paths, executor, workers, worker_memory)
        return _dask(work, paths, workers, scheduler, worker_memory, done)
    n, _ = planned_workers(paths, executor, workers, worker_memory)
    if n == 1 or len(paths) == 1:
        results = []
        for i, path in enumerate(paths):
            results.append(work(path))
            done(i, results[-1])
        return results
    return _pool(work, paths, n, done)


def _ignore(i: int, result: object) -> None:
    """No one listens for results as they come."""


def _pool(
    work: Callable[[str], T], paths: Sequence[str], n: int, done: Callable[[int, T], None]
) -> list[T]:
    method = "fork" if can_fork() else "spawn"
    context = multiprocessing.get_context(method)
    with ProcessPoolExecutor(
        max_workers=min(n, len(paths)), mp_context=context, initializer=_one_decoder
    ) as pool:
        futures = {pool.submit(work, path): i for i, path in enumerate(paths)}
        return _collect(futures, concurrent.futures.as_completed(futures), done)


def _collect(
    futures: dict[Any, int], finished: Iterable[Any], done: Callable[[int, T], None]
) -> list[T]:
    """The futures' results in the order of their indices, told to `done` as they finish."""
    results: dict[int, T] = {}
    for future in finished:
        i = futures[future]
        results[i] = future.result()
        done(i, results[i])
    return [results[i] for i in range(len(futures))]


def _one_decoder() -> None:
    """A pool worker decodes in one process: its memory is what `planned_workers` counted."""
    os.environ["PROFSIGHT_SEQUENTIAL"] = "1"


def _dask(
    work: Callable[[str], T],
    paths: Sequence[str],
    n: int | None,
    scheduler: str | None,
    worker_memory: int | None = None,
    done: Callable[[int, T], None] = _ignore,
) -> list[T]:
    try:
        import distributed
    except ImportError as exc:
        raise UsageError(
            "--executor dask needs Dask distributed: pip install 'profsight[dask]'"
        ) from exc
    dask: Any = distributed  # its constructors are untyped
    if scheduler is not None:  # a cluster shared with other work: its workers stay as they are
        with _connect(dask, scheduler) as client:
            return _gather(dask, client, work, paths, False, done)
    cluster_args: dict[str, Any] = {
        "n_workers": n or default_workers(len(paths)),
        "threads_per_worker": 1,
        "processes": True,
        "dashboard_address": None,
        "host": "127.0.0.1",
    }
    if worker_memory is not None:
        cluster_args["memory_limit"] = worker_memory
    with warnings.catch_warnings():  # port notes of Dask's own servers: not the user's concern
        warnings.simplefilter("ignore", UserWarning)
        cluster = dask.LocalCluster(**cluster_args)
    with cluster, dask.Client(cluster) as client:
        return _gather(dask, client, work, paths, True, done)


#: A scheduler address: ``tcp://host:port`` (or another Dask protocol), or ``host:port``.
_ADDRESS = regex(r"^(?:(?:tcp|tls|ws|wss|ucx|inproc)://)?[^\s/:]+(?::\d{1,5})$")
#: Seconds to reach the scheduler and to find a worker behind it.
CONNECT_SECONDS = 10.0


def _reachable(scheduler: str) -> None:
    """Fail at once where nothing listens (Dask itself retries until its timeout)."""
    if "://" in scheduler and not scheduler.startswith(("tcp://", "tls://")):
        return
    host, _, port = scheduler.split("://")[-1].rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_SECONDS).close()
    except OSError as exc:
        raise UsageError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from exc


def _connect(dask: Any, scheduler: str) -> Any:
    """A client of the scheduler at `scheduler`, or a one-line `UsageError` within
    `CONNECT_SECONDS`: a wrong port (an HTTP server, the dashboard) can leave Dask's
    handshake waiting forever, so it runs in a daemon thread that is abandoned on timeout."""
    if not _ADDRESS.match(scheduler):
        raise UsageError(
            f"--scheduler {scheduler!r} is not a Dask scheduler address (tcp://HOST:PORT)"
        )
    _reachable(scheduler)
    outcome: list[Any] = []

    def attempt() -> None:
        try:
            client = dask.Client(scheduler, timeout=CONNECT_SECONDS)
            try:
                client.wait_for_workers(1, timeout=CONNECT_SECONDS)
            except Exception:
                client.close()
                raise
            outcome.append(client)
        except Exception as exc:  # whatever the far end made Dask raise
            outcome.append(exc)

    thread = threading.Thread(target=attempt, name="profsight-dask-connect", daemon=True)
    thread.start()
    thread.join(2 * CONNECT_SECONDS + 5)
    if not outcome:
        raise UsageError(
            f"no Dask scheduler answered at {scheduler} within {2 * CONNECT_SECONDS + 5:.0f} s "
            "(the scheduler's port is 8786 by default; 8787 is its dashboard)"
        )
    if isinstance(outcome[0], BaseException):
        exc = outcome[0]
        why = (
            "it has no workers" if "worker" in str(exc).lower() else f"{type(exc).__name__}: {exc}"
        )
        raise UsageError(f"cannot use the Dask scheduler at {scheduler}: {why}")
    return outcome[0]


def _gather(
    dask: Any,
    client: Any,
    work: Callable[[str], T],
    paths: Sequence[str],
    tune: bool,
    done: Callable[[int, T], None],
) -> list[T]:
    task = partial(in_dask_worker, work) if tune else work
    futures = client.map(task, list(paths), pure=False)
    index = {future: i for i, future in enumerate(futures)}
    return _collect(index, dask.as_completed(futures), done)


#: glibc's ``mallopt`` parameter, and the threshold profsight sets in Dask workers.
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD_BYTES = 64 << 20
_tuned = False


def in_dask_worker(work: Callable[[str], T], path: str) -> T:
    """`work` on a Dask worker of the local cluster profsight started, with the allocator set
    for it (once per worker process); never on a scheduler's workers, shared with other work.

    Dask's nanny starts workers with ``MALLOC_TRIM_THRESHOLD_=65536``, which also fixes
    glibc's mmap threshold at 128 KiB: every numpy column above it is then mapped and unmapped
    anew, which made a rank's analysis 1.75x slower (benchmarks/bench_job.py). Raising the
    mmap threshold to 64 MiB gives the speed back; trimming stays as Dask set it.
    """
    global _tuned
    if not _tuned and os.environ.get("MALLOC_TRIM_THRESHOLD_") and sys.platform == "linux":
        with contextlib.suppress(OSError, AttributeError):  # not glibc: nothing to tune
            ctypes.CDLL("libc.so.6").mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_BYTES)
        _tuned = True
    return work(path)


__all__ = ["EXECUTORS", "default_workers", "planned_workers", "run_all"]
