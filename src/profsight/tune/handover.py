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

import contextlib
import os
import statistics
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec

#: Batches a worker keeps ready (``prefetch_factor``, as the workers' fix sets it).
PREFETCH = 2
#: Ready batches timed one at a time, their median the take's cost.
TAKES = 5
#: Batches per worker timed back to back for the workers' pace (and their CPU time, read
#: in clock ticks of 10 ms: a longer window reads it closer).
PACED_PER_WORKER = 8
#: A batch the probe waits longer for is a worker hung in the loader's code: no figure.
TIMEOUT_S = 60.0


class HandOver(msgspec.Struct, frozen=True):
    workers: int
    take_s: float
    """The main process's time to receive one batch a worker already has ready."""
    interval_s: float
    """Time per batch when the main process does nothing but receive them: the workers'
    own pace, loading and sending included."""
    cpu_s: float | None = None
    """The workers' CPU time per batch (None: not measurable here). Loading that waits
    (a disk, a sleep) costs little CPU; decoding costs its whole time, and shares the
    cores with the training."""


def probe(make_loader: Callable[..., Iterable[Any]], workers: int) -> HandOver | None:
    """The loader built with `workers` background workers, measured; None where it cannot
    be (too few batches, or the loader refuses the settings)."""
    try:
        loader = make_loader(num_workers=workers, persistent_workers=True, prefetch_factor=PREFETCH)
        length = len(loader) if hasattr(loader, "__len__") else None  # type: ignore[arg-type]
    except Exception:  # the user's factory refuses workers: the trial will say so
        return None
    drain, paced = 1 + workers * PREFETCH, PACED_PER_WORKER * workers
    if length is not None and length < drain + paced + TAKES:
        return None
    if hasattr(loader, "timeout"):
        loader.timeout = TIMEOUT_S  # a hung worker is an error the probe catches, not a hang
    try:
        batches = iter(loader)
    except Exception:  # the workers did not start: no figure, the trial tells
        return None
    try:
        return _measure(batches, workers, drain, paced)
    except Exception:  # a worker died or the loader ran out: no figure, the trial tells
        return None
    finally:
        with contextlib.suppress(Exception):  # a dead worker is reported by the stop too
            _shut_down(batches)


def _measure(batches: Iterator[Any], workers: int, drain: int, paced: int) -> HandOver:
    for _ in range(drain):  # start-up, then the batches prefetched while it started
        next(batches)
    pids = [w.pid for w in getattr(batches, "_workers", ())]
    if len(pids) != workers:
        raise ValueError("the loader did not start the workers asked for")
    cpu_before = _cpu_of(pids)
    start = time.perf_counter()
    for _ in range(paced):
        next(batches)
    interval = (time.perf_counter() - start) / paced
    # (read here: the queue was as empty at the window's start as at its end, so the workers
    # made about as many batches as were taken)
    cpu_after = _cpu_of(pids)
    takes = []
    for _ in range(TAKES):
        _busy(3.0 * interval + 0.001)  # the main process at work (not asleep) meanwhile
        start = time.perf_counter()
        next(batches)
        takes.append(time.perf_counter() - start)
    cpu = None
    if cpu_before is not None and cpu_after is not None:
        cpu = (cpu_after - cpu_before) / paced
    return HandOver(workers, statistics.median(takes), interval, cpu)


def _cpu_of(pids: list[int | None]) -> float | None:
    """The CPU seconds the processes `pids` have used so far, from ``/proc`` (None where
    there is no ``/proc``, or a process is gone). Their start-up (a spawned worker imports
    torch again) is before the window this is read over."""
    if not pids or any(pid is None for pid in pids):
        return None
    try:
        ticks = os.sysconf("SC_CLK_TCK")
        total = 0
        for pid in pids:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (after the name)
        return total / ticks
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def _busy(seconds: float) -> None:
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        pass


def _shut_down(batches: Iterator[Any]) -> None:
    shutdown = getattr(batches, "_shutdown_workers", None)
    if callable(shutdown):
        shutdown()


def pipelined_step(
    step_s: float, load_share: float, handover: HandOver, cores: int, cpu_s: float | None
) -> float:
    """The step with the loading moved to the workers: the rest of the step plus receiving
    the batch; or the workers' pace, where they are the slower; or, where the workers' CPU
    and the training's need more than the cores give, the time the cores take to supply
    both. `cpu_s`: the training process's CPU per step in the baseline, all its threads
    (the loading's own CPU, as the workers spend it, taken off)."""
    rest = step_s * max(1.0 - load_share, 0.0)
    step = max(rest + handover.take_s, handover.interval_s)
    if handover.cpu_s is not None and cpu_s is not None:
        training = max(cpu_s - handover.cpu_s, 0.0)
        step = max(step, (training + handover.take_s + handover.cpu_s) / max(cores, 1))
    return step
