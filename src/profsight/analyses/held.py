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

from typing import TYPE_CHECKING

import numpy as np

from profsight.analyses import intervals
from profsight.analyses.startup import startup_events
from profsight.findings import Evidence, Finding, severity_for
from profsight.knowledge.advice import (
    HELD_ADVICE,
    HELD_BACK_US,
    HELD_BASIS,
    HELD_EXPLANATION,
    HELD_PCT,
)
from profsight.knowledge.rows import HOST_READ_NAME
from profsight.knowledge.trace_schema import DEVICE_WORK_KINDS
from profsight.model.events import I64
from profsight.model.profile import Profile
from profsight.units import short_time

if TYPE_CHECKING:
    from profsight.analyses.context import Context


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
    for d in np.unique(device).tolist():
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


def run(ctx: Context) -> list[Finding]:
    """The held-back finding: how long the device idled while launched work waited."""
    held_us = ctx.held_us
    share = held_us * 100 / ctx.step_us if ctx.step_us else 0.0
    if share < HELD_PCT:
        return []
    profile = ctx.profile
    ev = profile.events
    items, lo, hi = held_items(profile, startup_events(profile))
    first, last = ctx.breakdown.span_ns
    inside = (hi > first) & (lo < last)
    items, lo, hi = items[inside], lo[inside], hi[inside]
    launcher = profile.attribution.launcher
    evidence = [
        Evidence(
            "device idle while launched work waited",
            f"{short_time(held_us)} per step ({share:.0f}% of the step)",
        )
    ]
    if len(items):
        k = int(np.argmax(hi - lo))
        item, call = int(items[k]), int(launcher[items[k]])
        evidence.append(
            Evidence(
                f"items waiting >= {short_time(HELD_BACK_US)} with the device free",
                f"{len(items) / ctx.steps:.0f} per step; the longest "
                f"{short_time((hi[k] - lo[k]) / 1000.0)} after {ev.strings[ev.name[call]]}",
                (ev.strings[ev.name[item]],),
            )
        )
        firsts = _first_runs(profile, items)
        if firsts:
            evidence.append(
                Evidence(
                    "first run of their kernel or copy",
                    f"{firsts} of {len(items)} (GPU code still loading lazily is one cause)",
                )
            )
    return [
        Finding(
            category="gpu_held",
            severity=severity_for(share),
            title=f"Launched work waited {share:.0f}% of the step with the GPU free",
            evidence=tuple(evidence),
            explanation=HELD_EXPLANATION,
            recommendation=HELD_ADVICE,
            at_stake_pct=share,
            trigger=f"launched work waiting >= {short_time(HELD_BACK_US)} with its device "
            f"free, >= {HELD_PCT:g}% of the step ({HELD_BASIS})",
        )
    ]


def _first_runs(profile: Profile, items: I64) -> int:
    """How many of `items` are the first of their name on the device."""
    ev = profile.events
    work = np.flatnonzero(ev.mask(DEVICE_WORK_KINDS))
    order = work[np.argsort(ev.start[work], kind="stable")]
    _, first = np.unique(ev.name[order], return_index=True)
    return int(np.isin(items, order[first]).sum())


def held_intervals(profile: Profile, startup: I64) -> tuple[I64, I64]:
    """The union of the held intervals (ns)."""
    _, lo, hi = held_items(profile, startup)
    return intervals.union(lo, hi)


__all__ = ["held_intervals", "held_items", "ready_waits", "run"]
