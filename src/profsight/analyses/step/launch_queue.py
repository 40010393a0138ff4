"""The device's launch queues: how many launched items wait on each stream, and when the
host blocked because a queue was full.

A launch call returns as soon as its item is queued; a stream's queue holds a fixed number
of items (`LAUNCH_QUEUE_DEPTH`, unless the trace's own depth plateaus near it: then that
plateau is the limit). A launch made with its stream's queue full returns only when an item
completes: the host then runs at the device's pace, whatever it has to do. Such calls are
waits for the device (`analyses.replay` frees them when the device gets faster) and their
time is the host's time blocked on a full queue, as HTA reports it.

Depth at a launch call's start = the launches queued on its stream by then (their call
ended, or they were queued before the trace began: no launch call in it) less those whose
work has ended. A launch is one entry however many items it starts (a CUDA graph's
``cudaGraphLaunch`` starts all of its kernels). The queue was full when its depth
plateaued: the deepest depth, within `QUEUE_PLATEAU_FRACTION` of the driver's, reached by
more than one launch.
"""

from __future__ import annotations

import msgspec
import numpy as np

from profsight.knowledge.hardware import LAUNCH_QUEUE_DEPTH, QUEUE_PLATEAU_FRACTION
from profsight.knowledge.trace_schema import DEVICE_WORK_KINDS
from profsight.model.events import I64
from profsight.model.profile import Profile
from profsight.model.step_windows import QueueSummary
from profsight.stats import unique

#: Below this share of a stream's items linked to a launch call, its depth cannot be
#: counted (a trace without correlation ids): its queue is not judged.
_LINKED_SHARE = 0.5
#: Launches at the deepest depth that make it a plateau, not one deep moment.
_PLATEAU_LAUNCHES = 2


class LaunchQueue(msgspec.Struct, frozen=True):
    calls: I64
    """Launch calls of device items (event indices, a call once per item it queued)."""
    depth: I64
    """Their stream's queue depth when each started."""
    limit: int
    measured: bool
    """Whether `limit` is the trace's own plateau, not the driver's default."""
    blocked: I64
    """Launch calls made with their stream's queue full (event indices, sorted, unique)."""
    blocked_us: float
    """Host time in those calls."""

    @property
    def max_depth(self) -> int:
        return int(self.depth.max()) if len(self.depth) else 0

    def summary(self) -> QueueSummary:
        return QueueSummary(self.limit, self.measured, self.max_depth, self.blocked_us)


def launch_queue(profile: Profile) -> LaunchQueue:
    ev = profile.events
    launcher = profile.attribution.launcher
    work = np.flatnonzero(ev.mask(DEVICE_WORK_KINDS))
    lane = ev.lane(work)
    calls: list[I64] = []
    depths: list[I64] = []
    for key in unique(lane).tolist():
        items = work[lane == key]
        call = launcher[items].astype(np.int64)
        linked = call >= 0
        if not linked.any() or linked.mean() < _LINKED_SHARE:
            continue
        # one entry per launch: queued when its call returned, gone when its last item ended
        mine = unique(call[linked])
        done = np.full(len(mine), np.iinfo(np.int64).min)
        np.maximum.at(done, np.searchsorted(mine, call[linked]), ev.end_of(items[linked]))
        before = ev.end_of(items[~linked])  # queued before the trace began
        queued = np.sort(np.concatenate([ev.end_of(mine), np.full(len(before), -(2**62))]))
        ended = np.sort(np.concatenate([done, before]))
        at = ev.start[mine]
        depth = np.searchsorted(queued, at, side="right") - np.searchsorted(ended, at, "right")
        calls.append(mine)
        depths.append(np.maximum(depth, 0))
    empty = np.zeros(0, np.int64)
    if not calls:
        return LaunchQueue(empty, empty, LAUNCH_QUEUE_DEPTH, False, empty, 0.0)
    all_calls, depth = np.concatenate(calls), np.concatenate(depths)
    order = np.argsort(ev.start[all_calls], kind="stable")
    all_calls, depth = all_calls[order], depth[order]
    deepest = int(depth.max())
    held = int((depth >= deepest - 1).sum())
    measured = abs(deepest - LAUNCH_QUEUE_DEPTH) <= QUEUE_PLATEAU_FRACTION * LAUNCH_QUEUE_DEPTH
    measured &= held >= _PLATEAU_LAUNCHES
    limit = deepest if measured else LAUNCH_QUEUE_DEPTH
    # at the limit less one: an item that completes in the microsecond the next launch starts
    blocked = unique(all_calls[depth >= limit - 1]) if measured else empty
    blocked_us = float(ev.dur[blocked].sum()) / 1000.0
    return LaunchQueue(all_calls, depth, limit, measured, blocked, blocked_us)


__all__ = ["LaunchQueue", "QueueSummary", "launch_queue"]
