"""Time series for charts: device busy share, memory allocated and the launch queues' depth
over the profiled window (the device's work included, however long it runs after the host),
downsampled to a fixed number of buckets so that a page stays small for any trace size."""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np

from profsight.analyses.step import intervals
from profsight.analyses.step.launch_queue import launch_queue
from profsight.knowledge.trace_schema import (
    CPU_MEMORY_DEVICE_TYPES,
    DEVICE_MEMORY_DEVICE_TYPES,
    DEVICE_WORK_KINDS,
    EventKind,
)
from profsight.model.profile import Profile
from profsight.model.step_windows import Breakdown

BUCKETS = 400


class Timelines(msgspec.Struct, frozen=True):
    start_us: float
    bucket_us: float
    device_busy: list[float] = msgspec.field(default_factory=list)
    """Share (0..1) of each bucket in which the device ran work; empty without device work."""
    memory: dict[str, list[float]] = msgspec.field(default_factory=dict)
    """``cpu``/``device`` -> bytes allocated at the end of each bucket (from ``[memory]``)."""
    steps: list[tuple[str, float, float, float, float]] = msgspec.field(default_factory=list)
    """(name, start µs, end µs, host start µs, host end µs) of each profiled step, relative
    to `start_us`: its window on the slower clock (`analyses.clocks`) and its host range."""
    queue_depth: list[float] = msgspec.field(default_factory=list)
    """Deepest launch queue of a stream at a launch in each bucket (empty: none counted)."""
    queue_limit: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "start_us": self.start_us,
            "bucket_us": self.bucket_us,
            "device_busy": self.device_busy,
            "memory": self.memory,
            "steps": [list(s) for s in self.steps],
            "queue_depth": self.queue_depth,
            "queue_limit": self.queue_limit,
        }


def timelines(
    profile: Profile, breakdown: Breakdown | None = None, buckets: int = BUCKETS
) -> Timelines:
    """The charts' series over the profiled window: from the first host row to the later of
    the last host row's end and the last device item's (the device can run on after the
    host), with the steps of `breakdown` as bands (else the ``ProfilerStep`` ranges)."""
    ev = profile.events
    at = profile.attribution
    rows = np.flatnonzero(at.is_row)
    if len(rows) == 0:
        return Timelines(0.0, 0.0)
    work = np.flatnonzero(ev.mask(DEVICE_WORK_KINDS))
    lo, hi = int(ev.start[rows].min()), int(ev.end_of(rows).max())
    if len(work):
        hi = max(hi, int(ev.end_of(work).max()))
    width = max((hi - lo) / buckets, 1.0)
    edges = lo + np.arange(buckets + 1) * width
    busy: list[float] = []
    if len(work):
        s, e = intervals.union(ev.start[work], ev.end_of(work))
        cum = _covered_before(s, e, edges)
        busy = [round(float(x), 4) for x in np.diff(cum) / width]
    memory: dict[str, list[float]] = {}
    mem = np.flatnonzero((ev.kind == EventKind.MEMORY) & (ev.allocated >= 0))
    for label, types in (("cpu", CPU_MEMORY_DEVICE_TYPES), ("device", DEVICE_MEMORY_DEVICE_TYPES)):
        sel = mem[np.isin(ev.mem_device_type[mem], list(types))]
        if len(sel):
            sel = sel[np.argsort(ev.start[sel], kind="stable")]
            pos = np.searchsorted(ev.start[sel], edges[1:], side="right") - 1
            values = np.where(pos >= 0, ev.allocated[sel][np.maximum(pos, 0)], 0)
            memory[label] = [float(v) for v in values]
    queue = launch_queue(profile) if len(work) else None
    depth: list[float] = []
    if queue is not None and len(queue.calls) and queue.max_depth > 1:
        bucket = np.clip(((ev.start[queue.calls] - lo) / width).astype(np.int64), 0, buckets - 1)
        deepest = np.zeros(buckets)
        np.maximum.at(deepest, bucket, queue.depth.astype(np.float64))
        depth = [float(d) for d in deepest]
    return Timelines(
        start_us=lo / 1000.0,
        bucket_us=width / 1000.0,
        device_busy=busy,
        memory=memory,
        steps=_steps(profile, breakdown, lo, rows),
        queue_depth=depth,
        queue_limit=queue.limit if queue is not None and depth else 0,
    )


def _steps(
    profile: Profile, breakdown: Breakdown | None, lo: int, rows: np.ndarray[Any, Any]
) -> list[tuple[str, float, float, float, float]]:
    """Each step's window and host range (µs after `lo`)."""
    origin = lo / 1000.0
    if breakdown is not None and breakdown.windows == "profiler steps":
        return [
            (
                s.name,
                s.interval_start - origin,  # the device's clock: intervals never overlap
                s.start_us + s.wall_us - origin,
                s.host_start - origin,
                s.host_start + s.host_range_us - origin,
            )
            for s in breakdown.steps
        ]
    ev = profile.events
    step_ids = [i for i, n in enumerate(ev.strings) if n.startswith("ProfilerStep#")]
    steps = rows[np.isin(ev.name[rows], step_ids)]
    out = []
    for s in steps[np.argsort(ev.start[steps])].tolist():
        a, b = (ev.start[s] - lo) / 1000.0, (ev.end_of(s) - lo) / 1000.0
        out.append((ev.strings[ev.name[s]], a, b, a, b))
    return out


def _covered_before(
    s: np.ndarray[Any, Any], e: np.ndarray[Any, Any], points: np.ndarray[Any, Any]
) -> np.ndarray[Any, Any]:
    """Measure of the disjoint sorted intervals [s, e) before each point."""
    if len(s) == 0:
        return np.zeros(len(points))
    full = np.concatenate([[0], np.cumsum(e - s)])
    k = np.searchsorted(s, points, side="right")  # intervals starting before each point
    partial = np.where(
        k > 0, np.minimum(points, e[np.maximum(k - 1, 0)]) - s[np.maximum(k - 1, 0)], 0
    )
    return full[np.maximum(k - 1, 0)] * (k > 0) + np.maximum(partial, 0)
