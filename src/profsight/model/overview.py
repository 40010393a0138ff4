"""What was profiled, in a few numbers: the header of every report."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
import numpy as np

from profsight.knowledge.trace_schema import (
    DEVICE_WORK_KINDS,
    PROFILER_STEP_PREFIX,
    EventKind,
    torch_era,
)
from profsight.model.trace_meta import LoadStats
from profsight.stats import unique

if TYPE_CHECKING:
    from profsight.model.profile import Profile


class Overview(msgspec.Struct, frozen=True):
    source: str
    format: str
    events: int
    threads: int
    """Host threads that hold rows."""
    steps: int
    """``ProfilerStep#N`` ranges in the trace."""
    window_us: float
    """From the first host row to the later of the last host row's end and the last device
    item's (the device can run after the host is done)."""
    host_window_us: float
    """From the first to the last host row."""
    devices: tuple[str, ...]
    """Device names from ``deviceProperties``."""
    device_events: int
    counted_kernels: int
    """Kernels measured by CUPTI's range profiler (counters, no run times)."""
    device_busy_us: float
    """Time with at least one kernel, memcpy or memset running (the union of their
    intervals: never more than the time they span)."""
    rank: int | None
    world_size: int | None
    load: LoadStats
    torch_era: str
    """The torch version that wrote the trace, as far as its schema tells."""
    lightning: bool
    """Recorded by Lightning's PyTorchProfiler ([pl] ranges, or its metadata)."""


def overview(profile: Profile) -> Overview:
    ev = profile.events
    at = profile.attribution
    rows = np.flatnonzero(at.is_row)
    step_ids = [i for i, s in enumerate(ev.strings) if s.startswith(PROFILER_STEP_PREFIX)]
    steps = int(np.isin(ev.name[rows], step_ids).sum()) if step_ids else 0
    work = ev.mask(DEVICE_WORK_KINDS)
    host_window = window = 0.0
    spans = []
    if len(rows):
        spans.append((int(ev.start[rows].min()), int(ev.end_of(rows).max())))
        host_window = (spans[0][1] - spans[0][0]) / 1000.0
    if work.any():
        # the device's work can begin before the host's first recorded event (work launched
        # before the window, a device clock ahead of the host's) and end after its last, or
        # be all a trace holds (a merged file of kernels): the window holds both, so that
        # the device's busy time fits in it
        spans.append((int(ev.start[work].min()), int(ev.end_of(work).max())))
    if spans:
        window = (max(e for _, e in spans) - min(s for s, _ in spans)) / 1000.0
    categories = {ev.strings[c] for c in unique(ev.category).tolist()}
    names = tuple(str(d.get("name", "?")) for d in profile.meta.devices)
    dist = profile.meta.distributed
    rank = dist.get("rank")
    world = dist.get("world_size")
    return Overview(
        source=profile.source,
        format=profile.format,
        events=len(ev),
        threads=len(unique(ev.track[rows])),
        steps=steps,
        window_us=window,
        host_window_us=host_window,
        devices=names,
        device_events=int(work.sum()),
        counted_kernels=int((ev.kind == EventKind.COUNTERS).sum()),
        device_busy_us=_covered(ev.start[work], ev.end_of(work)) / 1000.0,
        rank=rank if isinstance(rank, int) else None,
        world_size=world if isinstance(world, int) else None,
        load=profile.load_stats,
        torch_era=torch_era(set(profile.meta.header), categories, {str(t.pid) for t in ev.tracks}),
        lightning=profile.meta.header.get("Framework") == "pytorch-lightning"
        or any(s.startswith("[pl]") for s in ev.strings),
    )


def _covered(start: np.ndarray, end: np.ndarray) -> float:
    """Measure of the union of intervals [start, end) (ns)."""
    if len(start) == 0:
        return 0.0
    order = np.argsort(start, kind="stable")
    s, e = start[order], np.maximum.accumulate(end[order])
    # each interval adds what it reaches past everything before it
    before = np.concatenate([[s[0]], e[:-1]])
    return float(np.sum(np.maximum(e - np.maximum(s, before), 0)))
