"""What was profiled, in a few numbers: the header of every report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from profsight.knowledge.trace_schema import DEVICE_WORK_KINDS, PROFILER_STEP_PREFIX, torch_era
from profsight.model.profile import LoadStats

if TYPE_CHECKING:
    from profsight.model.profile import Profile


@dataclass(frozen=True)
class Overview:
    source: str
    format: str
    events: int
    threads: int
    """Host threads that hold rows."""
    steps: int
    """``ProfilerStep#N`` ranges in the trace."""
    window_us: float
    """From the first to the last host row."""
    devices: tuple[str, ...]
    """Device names from ``deviceProperties``."""
    device_events: int
    device_busy_us: float
    """Sum of kernel, memcpy and memset durations."""
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
    window = float(ev.end_of(rows).max() - ev.start[rows].min()) / 1000.0 if len(rows) else 0.0
    work = ev.mask(DEVICE_WORK_KINDS)
    categories = {ev.strings[c] for c in np.unique(ev.category).tolist()}
    names = tuple(str(d.get("name", "?")) for d in profile.meta.devices)
    dist = profile.meta.distributed
    rank = dist.get("rank")
    world = dist.get("world_size")
    return Overview(
        source=profile.source,
        format=profile.format,
        events=len(ev),
        threads=len(np.unique(ev.track[rows])),
        steps=steps,
        window_us=window,
        devices=names,
        device_events=int(work.sum()),
        device_busy_us=float(ev.dur[work].sum()) / 1000.0,
        rank=rank if isinstance(rank, int) else None,
        world_size=world if isinstance(world, int) else None,
        load=profile.load_stats,
        torch_era=torch_era(set(profile.meta.header), categories),
        lightning=profile.meta.header.get("Framework") == "pytorch-lightning"
        or any(s.startswith("[pl]") for s in ev.strings),
    )
