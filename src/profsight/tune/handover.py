"""What loader workers would cost and give, measured on the user's own loader in the
baseline's process: the time the main process takes to receive a batch a worker has ready
(its tensors handed over through shared memory, unpickled), and how often the workers have
one ready when nothing else runs.

Neither is in the baseline's trace: its loader ran in the main process and handed nothing
over. On a batch that costs nothing to load, the hand-over is the larger cost (4 rows of an
in-memory tensor: 30 µs to load, 740 µs to receive from a worker, on this repository's
2-core machine), and workers make the step slower; `plan` prices workers with both.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import msgspec

#: Batches a worker keeps ready (``prefetch_factor``, as the workers' fix sets it).
PREFETCH = 2
#: Ready batches timed one at a time, their median the take's cost.
TAKES = 5


class HandOver(msgspec.Struct, frozen=True):
    workers: int
    take_s: float
    """The main process's time to receive one batch a worker already has ready."""
    interval_s: float
    """Time per batch when the main process does nothing but receive them: the workers'
    own pace, loading and sending included."""


def probe(make_loader: Callable[..., Iterable[Any]], workers: int) -> HandOver | None:
    """The loader built with `workers` background workers, measured; None where it cannot
    be (too few batches, or the loader refuses the settings)."""
    try:
        loader = make_loader(num_workers=workers, persistent_workers=True, prefetch_factor=PREFETCH)
        length = len(loader) if hasattr(loader, "__len__") else None  # type: ignore[arg-type]
    except Exception:  # the user's factory refuses workers: the trial will say so
        return None
    drain, paced = 1 + workers * PREFETCH, 2 * workers
    if length is not None and length < drain + paced + TAKES:
        return None
    batches = iter(loader)
    try:
        return _measure(batches, workers, drain, paced)
    except Exception:  # a worker died or the loader ran out: no figure, the trial tells
        return None
    finally:
        _shut_down(batches)


def _measure(batches: Iterator[Any], workers: int, drain: int, paced: int) -> HandOver:
    for _ in range(drain):  # start-up, then the batches prefetched while it started
        next(batches)
    start = time.perf_counter()
    for _ in range(paced):
        next(batches)
    interval = (time.perf_counter() - start) / paced
    takes = []
    for _ in range(TAKES):
        _busy(2.0 * interval + 0.001)  # the main process at work (not asleep) meanwhile
        start = time.perf_counter()
        next(batches)
        takes.append(time.perf_counter() - start)
    return HandOver(workers, statistics.median(takes), interval)


def _busy(seconds: float) -> None:
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        pass


def _shut_down(batches: Iterator[Any]) -> None:
    shutdown = getattr(batches, "_shutdown_workers", None)
    if callable(shutdown):
        shutdown()


def pipelined_step(step_s: float, load_share: float, handover: HandOver) -> float:
    """The step with the loading moved to the workers: the rest of the step plus receiving
    the batch, or the workers' pace where they are the slower."""
    rest = step_s * max(1.0 - load_share, 0.0)
    return max(rest + handover.take_s, handover.interval_s)
