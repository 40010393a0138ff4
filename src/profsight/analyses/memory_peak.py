"""Memory at the peak: when each memory (the host's, each device's) was fullest, and which
ops' allocations it held then.

From ``profile_memory=True`` traces: each ``[memory]`` record allocates (bytes above 0) or
frees a block (its ``Addr``), and says what the allocator holds after it (``Total
Allocated``). The peak is the largest of those. A block allocated in the window is live at
the peak when its allocation came at or before it and its free (the next record of its
block) after it, or never. It is charged to the innermost op around its record on the
record's thread, less the ops that only allocate for the op around them
(`knowledge.memory_blocks.ALLOCATION_OPS`). What the peak holds beyond those blocks was
allocated before the window (parameters, optimizer state, a cached input). A live
profiler's peak also carries torch's own categories (`loaders.live.memory_categories`).
"""

from __future__ import annotations

import msgspec
import numpy as np
from msgspec.structs import replace

from profsight.analyses.step.breakdown import work_intervals
from profsight.knowledge.memory_blocks import (
    ALLOCATION_OPS,
    BEFORE_WINDOW_HOLDER,
    PASS_HOLDERS,
    PEAK_OPS_SHOWN,
    TRACE_HOLDERS,
)
from profsight.knowledge.phases import Phase
from profsight.knowledge.trace_schema import (
    CPU_MEMORY_DEVICE_TYPES,
    DEVICE_MEMORY_DEVICE_TYPES,
    MEMORY_EVENT_NAME,
    EventKind,
)
from profsight.model.events import I64
from profsight.model.profile import Profile
from profsight.model.step_windows import Breakdown


class HeldBy(msgspec.Struct, frozen=True):
    op: str
    bytes: int
    blocks: int


class MemoryPeak(msgspec.Struct, frozen=True):
    memory: str
    """``cpu`` or ``device``."""
    peak_bytes: int
    """The most the allocator held (``Total Allocated``)."""
    at_us: float
    """When, from the trace's start."""
    held_bytes: int
    """Of the peak: blocks allocated in the window and not yet freed."""
    held_by: tuple[HeldBy, ...]
    """The ops those blocks are charged to, most bytes first (at most `PEAK_OPS_SHOWN`)."""
    blocks_known: bool
    """Whether the records say their block (``Addr``): without, nothing is held by name."""
    categories: dict[str, int] | None = None
    """A live profiler's: torch's memory profiler's categories at its own peak (bytes)."""
    holders: dict[str, int] | None = None
    """The peak's bytes by where and when they were allocated, every one of
    `TRACE_HOLDERS` (`_holders`); None without block ids or step phases."""

    @property
    def before_window_bytes(self) -> int:
        return max(self.peak_bytes - self.held_bytes, 0)


def memory_peaks(profile: Profile, phases: Breakdown | None = None) -> tuple[MemoryPeak, ...]:
    """The peak of each memory with ``[memory]`` records, host first; with the step's
    `phases`, each peak's holders too."""
    ev = profile.events
    if MEMORY_EVENT_NAME not in ev.strings or not len(ev.allocated):
        return ()
    name = ev.strings.index(MEMORY_EVENT_NAME)
    records = np.flatnonzero((ev.kind == EventKind.MEMORY) & (ev.name == name))
    out = []
    for memory, types in (("cpu", CPU_MEMORY_DEVICE_TYPES), ("device", DEVICE_MEMORY_DEVICE_TYPES)):
        mine = records[np.isin(ev.mem_device_type[records], list(types))]
        mine = mine[np.argsort(ev.start[mine], kind="stable")]
        allocated = ev.allocated[mine]
        if not len(mine) or not (allocated >= 0).any():
            continue
        peak = int(np.argmax(np.where(allocated >= 0, allocated, -1)))
        found = _peak(profile, memory, mine, peak, phases)
        categories = (profile.memory_categories or {}).get(memory)
        out.append(replace(found, categories=categories) if categories else found)
    return tuple(out)


def _peak(
    profile: Profile, memory: str, records: I64, peak: int, phases: Breakdown | None
) -> MemoryPeak:
    ev = profile.events
    t = ev.start[records]
    block = ev.block[records].astype(np.int64) if len(ev.block) else np.full(len(records), -1)
    known = bool((block >= 0).any())
    live = np.zeros(len(records), bool)
    if known:
        # each record's next record of the same block, in time: a free after the peak (or
        # none) leaves an allocation at or before it live
        order = np.lexsort((np.arange(len(records)), block))
        nxt = np.full(len(records), -1, np.int64)
        same = block[order][1:] == block[order][:-1]
        nxt[order[:-1][same]] = order[1:][same]
        later = np.maximum(nxt, 0)
        freed = (nxt >= 0) & (ev.nbytes[records][later] < 0)
        freed_at = np.where(freed, t[later], np.iinfo(np.int64).max)
        live = (ev.nbytes[records] > 0) & (np.arange(len(records)) <= peak) & (block >= 0)
        live &= freed_at > t[peak]
    held = records[live]
    nbytes = ev.nbytes[held]
    found = MemoryPeak(
        memory=memory,
        peak_bytes=int(ev.allocated[records[peak]]),
        at_us=float(t[peak]) / 1000.0,
        held_bytes=int(nbytes.sum()),
        held_by=(),
        blocks_known=known,
    )
    holders = None
    if known and phases is not None and phases.segments is not None:
        holders = _holders(phases, t[live], freed_at[live], nbytes)
        holders[BEFORE_WINDOW_HOLDER] = found.before_window_bytes
    owner = _owners(profile, held)
    names = [
        profile.attribution.key_names[profile.attribution.key[o]] if o >= 0 else ""
        for o in owner.tolist()
    ]
    by: dict[str, list[int]] = {}
    for n, b in zip(names, nbytes.tolist(), strict=True):
        entry = by.setdefault(n, [0, 0])
        entry[0] += b
        entry[1] += 1
    ranked = sorted(by.items(), key=lambda kv: -kv[1][0])[:PEAK_OPS_SHOWN]
    return replace(found, held_by=tuple(HeldBy(n, b, k) for n, (b, k) in ranked), holders=holders)


def _holders(phases: Breakdown, alloc_at: I64, freed_at: I64, nbytes: I64) -> dict[str, int]:
    """The live blocks' bytes by the phase the step thread was in when each was allocated
    (backward run on autograd's own thread counts as backward), and whether the phase's
    pass was over before it was freed: a gradient outlives its backward, optimizer state its
    step; what dies inside is a temporary."""
    out = dict.fromkeys(TRACE_HOLDERS, 0)
    passes = {
        p: work_intervals(phases, p) for p in (Phase.BACKWARD, Phase.OPTIMIZER, Phase.FORWARD)
    }
    left = np.ones(len(alloc_at), bool)
    for phase, (starts, ends) in passes.items():
        if not len(starts):
            continue
        k = np.searchsorted(starts, alloc_at, side="right") - 1
        inside = left & (k >= 0) & (alloc_at < ends[np.maximum(k, 0)])
        outlives = freed_at > ends[np.maximum(k, 0)]
        kept, temp = PASS_HOLDERS[phase.value]
        out[kept] += int(nbytes[inside & outlives].sum())
        out[temp] += int(nbytes[inside & ~outlives].sum())
        left &= ~inside
    out["other"] += int(nbytes[left].sum())
    return out


def _owners(profile: Profile, records: I64) -> I64:
    """The innermost op around each record on its thread, past the allocation ops (-1:
    none)."""
    ev = profile.events
    at = profile.attribution
    rows = np.flatnonzero(at.is_row & (ev.kind == EventKind.CPU_OP))
    if not len(rows) or not len(records):
        return np.full(len(records), -1, np.int64)
    key = ev.track[rows].astype(np.int64) * (1 << 40) + ev.start[rows]
    order = np.argsort(key, kind="stable")
    rows, key = rows[order], key[order]
    wanted = ev.track[records].astype(np.int64) * (1 << 40) + ev.start[records]
    pos = np.searchsorted(key, wanted, side="right") - 1
    cand = np.where(pos >= 0, rows[np.maximum(pos, 0)], -1).astype(np.int64)
    cand[(pos >= 0) & (ev.track[np.maximum(cand, 0)] != ev.track[records])] = -1
    skip_ids = [i for i, s in enumerate(ev.strings) if s in ALLOCATION_OPS]
    t = ev.start[records]
    found = np.full(len(records), -1, np.int64)
    todo = np.flatnonzero(cand >= 0)
    up = cand[todo]
    while len(todo):
        ends = ev.end_of(up)
        ok = (ends >= t[todo]) & ~np.isin(ev.name[up], skip_ids)
        found[todo[ok]] = up[ok]
        todo, up = todo[~ok], up[~ok]
        up = at.parent[up].astype(np.int64)
        live = up >= 0
        todo, up = todo[live], up[live]
    return found
