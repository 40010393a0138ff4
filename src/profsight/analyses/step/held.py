"""Launched work the GPU held back: an item that starts long after its launch returned,
while nothing of this process ran on its device.

A launch that reaches an idle GPU starts within tens of microseconds (`HELD_BACK_US` gives
the measured basis). When it starts milliseconds later with the device idle, something the
trace does not show held it: another process on the GPU, work queued before the profiler
started, a driver that batches submissions, device events the profiler dropped. That time
is neither the model's nor a sync's: it is kept apart (the ``held`` idle cause), named by
its own finding, and the replay keeps held items where they ran.
"""

from __future__ import annotations

import numpy as np

from profsight.analyses.step import intervals
from profsight.knowledge.advice import HELD_BACK_US
from profsight.knowledge.rows import HOST_READ_NAME
from profsight.knowledge.trace_schema import DEVICE_WORK_KINDS
from profsight.model.events import I64
from profsight.model.profile import Profile
from profsight.stats import unique


def ready_waits(profile: Profile, startup: I64) -> tuple[I64, I64, I64]:
    """Every launched device item (event indices) and how long it waited with its device
    free: from the later of its launch (a read-back call that contains its copy: the call's
    start) and the end of its device's previous work, to its start (ns). Items
    launched by one-time start-up (`startup`, event indices) are that start-up's and left
    out."""
    ev = profile.events
    launcher = profile.attribution.launcher
    work = np.flatnonzero(ev.mask(DEVICE_WORK_KINDS))
    work = work[(launcher[work] >= 0) & ~np.isin(launcher[work], startup)]
    empty = np.zeros(0, np.int64)
    if len(work) == 0:
        return empty, empty, empty
    call = launcher[work]
    start = ev.start[work]
    # a call that returned before its item: ready when it returned. A read-back call that
    # holds the host until its copy is done (.item(), .cpu()): ready when it was called. Any
    # other call still running when its item started was busy itself (staging a pageable
    # copy, loading GPU code): the item was not ready before it started.
    reads = [i for i, s in enumerate(ev.strings) if HOST_READ_NAME.search(s)]
    read = np.isin(ev.name[work], reads)
    anchor = np.where(
        ev.end_of(call) <= start, ev.end_of(call), np.where(read, ev.start[call], start)
    )
    # the end of the device's work before each item (its start when work overlaps it)
    previous = np.full(len(work), np.iinfo(np.int64).min)
    device = ev.device[work]
    every = np.flatnonzero(ev.mask(DEVICE_WORK_KINDS))
    for d in unique(device).tolist():
        on = every[ev.device[every] == d]
        b_s, b_e = intervals.union(ev.start[on], ev.end_of(on))
        mine = device == d
        k = np.searchsorted(b_s, start[mine], side="left") - 1
        before = np.where(k >= 0, b_e[np.maximum(k, 0)], np.iinfo(np.int64).min)
        previous[mine] = np.minimum(before, start[mine])
    return work, np.maximum(anchor, previous), start


def held_items(profile: Profile, startup: I64) -> tuple[I64, I64, I64]:
    """The items held back (waited `HELD_BACK_US` or more with the device free) and the
    interval each was held (ns)."""
    work, ready, start = ready_waits(profile, startup)
    held = start - ready >= HELD_BACK_US * 1000
    return work[held], ready[held], start[held]


def held_intervals(profile: Profile, startup: I64) -> tuple[I64, I64]:
    """The union of the held intervals (ns)."""
    _, lo, hi = held_items(profile, startup)
    return intervals.union(lo, hi)


__all__ = ["held_intervals", "held_items", "ready_waits"]
