"""The what-if replay: the profiled steps as what depends on what, replayed with one change.

**The graph** (`step_graph`), over the profiled steps' span:

- *Host time* is one clock shared by the process's threads; an edit removes or scales
  stretches of it (a phase's segments of the step thread, one-time start-up).
- *Launches*: each kernel, copy or memset launched by a host call in the span is ready a
  fixed latency after its call (the latency measured for that item; queued items keep
  their place in the queue).
- *Streams*: each item runs after the one before it on its stream. An item whose launch is
  not in the span follows its predecessor by the measured gap (or stays where it ran).
- *Held items*: launched work that waited milliseconds with its device free
  (`analyses.held`) waited for something the trace does not show: like every launched item
  it keeps its measured latency; one edit releases it.
- *Waits*: a synchronising call (``cudaStreamSynchronize``, ``cudaDeviceSynchronize``, a
  blocking or device-to-host copy, ``cudaFree``) during which device work finished waited
  for the last such item; the host resumes when that item is done, plus the measured tail.

**Replaying** is one pass in time order: host times follow the clock (minus what an edit
removes, plus what each wait adds); each stream's items are computed, vectorised, up to the
item the next wait needs. The window ends when both the host and the device are done.

Every latency, gap and tail is measured on the item it belongs to, so replaying with no
change reproduces the measured span exactly; an edit moves only what depends on it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from profsight.analyses import intervals
from profsight.analyses.held import held_items
from profsight.analyses.startup import startup_events
from profsight.knowledge.rows import (
    BLOCKING_COPY_CALLS,
    IMPLICIT_SYNC_CALLS,
    STAGED_COPY_NAME,
    RowKind,
    classify,
)
from profsight.knowledge.trace_schema import DEVICE_WORK_KINDS, LAUNCH_KINDS
from profsight.model.events import F64, I64, Bool
from profsight.model.profile import Profile

_NEVER = -1e30


@dataclass(frozen=True)
class Edit:
    """One change to replay."""

    label: str
    host: tuple[tuple[I64, I64, F64], ...] = ()
    """Stretches of host time (each set sorted and disjoint, ns; the sets disjoint too) and
    the factor each one's time is scaled by (0: removed)."""
    drop_removed_work: bool = False
    """Device work launched from host time an edit removes goes too (a metric computed less
    often takes its kernels with it; data that is ready still has to be copied)."""
    device: tuple[I64, F64] | None = None
    """Device items (event indices) and the factor their duration is scaled by."""
    free_waits: I64 | None = None
    """Wait calls (event indices) that no longer wait for the device."""
    no_latency: Bool | None = None
    """Per device item (in `StepGraph` order): launched without latency (CUDA graphs)."""
    per: float = 1.0
    """The replayed span is divided by this (per sample, when an edit changes the batch)."""
    release_held: bool = False
    """Held items (`StepGraph.held`) start the typical latency after their launch."""


@dataclass(frozen=True)
class StepGraph:
    lo: int
    hi: int
    """The profiled steps' span on the host (ns)."""
    items: I64
    """Device items (event indices), grouped by stream, in order on it."""
    lane_start: I64
    """Index into `items` where each stream's items begin (and `len(items)` at the end)."""
    dur: F64
    gap: F64
    """What an item adds after its predecessor beyond its duration: the measured gap for an
    item not launched in the span, the overlap (<= 0) for one that was queued."""
    launched: Bool
    launch: F64
    """End of the launching call (ns; launched items only): the item is ready a measured
    latency after its call returns, so time an edit removes from the call moves it too (a
    blocking copy call, which returns when its copy is done: its start)."""
    latency: F64
    anchored: Bool
    """First items of a stream not launched in the span: they stay where they ran."""
    held: Bool
    """Items held back by something the trace does not show (`analyses.held`): they keep
    their measured latency (the hold moves with their launch) unless an edit releases them."""
    typical: float
    """The launch latency of items launched to a free stream (their median, ns)."""
    end: F64
    """Measured end of each item."""
    waits: I64
    """Wait calls (event indices), in order of start."""
    wait_start: F64
    wait_end: F64
    wait_target: I64
    """Position (into `items`) of the item each wait waited for."""
    busy_ns: float = 0.0
    """How long the device was busy with the items (their union)."""

    @property
    def measured_us(self) -> float:
        """The span until both the host and the device were done (µs)."""
        last = float(self.end.max()) if len(self.end) else float(self.hi)
        return (max(float(self.hi), last) - self.lo) / 1000.0


def step_graph(profile: Profile, lo: int, hi: int) -> StepGraph:
    """The graph of everything the host and the device did in [lo, hi)."""
    ev = profile.events
    launcher = profile.attribution.launcher
    work = np.flatnonzero(ev.mask(DEVICE_WORK_KINDS))
    lstart = np.where(launcher[work] >= 0, ev.start[np.maximum(launcher[work], 0)], -1)
    lend = np.where(launcher[work] >= 0, ev.end_of(np.maximum(launcher[work], 0)), -1)
    launched = (launcher[work] >= 0) & (lstart >= lo) & (lstart < hi)
    overlaps = (ev.end_of(work) > lo) & (ev.start[work] < hi)
    keep = launched | (overlaps & (launcher[work] < 0)) | (overlaps & (lstart < lo))
    work, launched, lstart, lend = work[keep], launched[keep], lstart[keep], lend[keep]
    lane = ev.device[work].astype(np.int64) * (1 << 32) + ev.stream[work]
    order = np.lexsort((ev.start[work], lane))
    work, launched, lane = work[order], launched[order], lane[order]
    lstart, lend = lstart[order], lend[order]
    start = ev.start[work].astype(np.float64)
    end = ev.end_of(work).astype(np.float64)
    dur = end - start
    waits, wait_target = _waits(profile, work, end, lo, hi)
    # a copy call that blocked until its own copy was done ends with it: its copy is ready
    # from the call's start
    own = launched & np.isin(launcher[work], waits)
    lend = np.where(own, lstart, lend)
    first = np.ones(len(work), bool)
    first[1:] = lane[1:] != lane[:-1]
    prev_end = np.concatenate([[_NEVER], end[:-1]])
    q = np.where(first, 0.0, start - prev_end)
    latency = np.where(launched, start - lend, 0.0)
    queued = launched & ~first & (q <= 0)
    free = launched & ~queued
    # the launch latency: of items launched after their stream was free (nothing held them)
    bound = free & (first | (lend > prev_end))
    typical = float(np.median(latency[bound if bound.any() else free])) if free.any() else 0.0
    typical = max(typical, 0.0)  # a graph's kernels start before its launch call returns
    # an item launched before its predecessor ended, that started a gap after it, keeps that
    # gap after its predecessor: it waited in the queue, or for another stream (an event, a
    # collective). A held item (`analyses.held`: milliseconds with the whole device free)
    # waited for something the trace does not show: its delay stays tied to its launch.
    held = np.isin(work, held_items(profile, startup_events(profile))[0])
    delayed = free & ~first & (lend + typical <= prev_end)
    busy = intervals.union(ev.start[work], ev.end_of(work))
    gap_s = np.where(first, start, np.minimum(prev_end, start)).astype(np.int64)
    others = intervals.overlaps(gap_s, start.astype(np.int64), busy)
    delayed &= others | ~held
    latency = np.where(queued | delayed, np.minimum(latency, typical), latency)
    gap = np.where(launched & ~delayed, np.minimum(q, 0.0), q)
    return StepGraph(
        lo=lo,
        hi=hi,
        items=work,
        lane_start=np.concatenate([np.flatnonzero(first), [len(work)]]).astype(np.int64),
        dur=dur,
        gap=gap,
        launched=launched,
        launch=lend.astype(np.float64),
        latency=latency,
        anchored=first & ~launched,
        held=held,
        typical=typical,
        end=end,
        waits=waits,
        wait_start=ev.start[waits].astype(np.float64),
        wait_end=ev.end_of(waits).astype(np.float64),
        wait_target=wait_target,
        busy_ns=float(intervals.length(*busy)),
    )


def wait_calls(profile: Profile) -> I64:
    """Host calls that can block until the device is done: synchronisations, copies (blocking,
    device-to-host, from pageable memory) and implicitly synchronising calls (``cudaFree``)."""
    ev = profile.events
    host = ev.mask(LAUNCH_KINDS)
    names = {
        i
        for i, s in enumerate(ev.strings)
        if s in BLOCKING_COPY_CALLS
        or s in IMPLICIT_SYNC_CALLS
        or classify(s, "runtime") is RowKind.SYNC
    }
    return np.flatnonzero(host & np.isin(ev.name, list(names)))


def _waits(profile: Profile, items: I64, end: F64, lo: int, hi: int) -> tuple[I64, I64]:
    """The wait calls in [lo, hi) that waited, and the item each waited for. A copy call
    waited for its own copy when that finished inside it (the copy ran after everything
    queued before it), or, for a copy from pageable memory (`STAGED_COPY_NAME`), when the
    copy ran while the call staged it (the call returns as the last chunk is staged, just
    before the copy ends); a synchronising call for the last item to finish inside it, of
    those launched before it ended."""
    ev = profile.events
    calls = wait_calls(profile)
    calls = calls[(ev.start[calls] >= lo) & (ev.start[calls] < hi)]
    calls = calls[np.argsort(ev.start[calls], kind="stable")]
    if len(calls) == 0 or len(items) == 0:
        return calls[:0], np.zeros(0, np.int64)
    launcher = profile.attribution.launcher[items]
    launch_at = np.where(launcher >= 0, ev.start[np.maximum(launcher, 0)], np.iinfo(np.int64).min)
    own = {int(c): k for k, c in enumerate(launcher.tolist()) if c >= 0}
    copies = {i for i, s in enumerate(ev.strings) if s in BLOCKING_COPY_CALLS}
    staged_names = [i for i, s in enumerate(ev.strings) if STAGED_COPY_NAME.search(s)]
    staged = np.isin(ev.name[items], staged_names)
    by_end = np.argsort(end, kind="stable")
    sorted_end = end[by_end]
    kept, target = [], []
    busy_until = -np.inf
    for c in calls.tolist():
        s, e = float(ev.start[c]), float(ev.end_of(c))
        if s < busy_until:
            continue  # one host clock: a wait inside another thread's wait is that wait
        if int(ev.name[c]) in copies:
            k = own.get(c, -1)
            # (a staged copy ran inside its call: the call returns just before it ends)
            if k >= 0 and s < end[k] and (end[k] <= e or (staged[k] and ev.start[items[k]] < e)):
                kept.append(c)
                target.append(k)
                busy_until = e
            continue
        a, b = np.searchsorted(sorted_end, [s, e], side="right")
        for k in range(int(b) - 1, int(a) - 1, -1):
            item = int(by_end[k])
            if launch_at[item] <= e:
                kept.append(c)
                target.append(item)
                busy_until = e
                break
    return np.array(kept, np.int64), np.array(target, np.int64)


def replay(graph: StepGraph, edit: Edit | None = None) -> float:
    """The span (µs) with `edit` applied (none: the measured span)."""
    edit = edit or Edit("no change")
    g = graph
    lo = float(g.lo)

    cuts = [intervals.Weighted(s, e, factor, complement=True) for s, e, factor in edit.host]
    origin = np.array([g.lo], np.int64)
    cut_before = [float(c.below(origin)[0]) for c in cuts]

    def mapped(t: F64) -> F64:
        """Host time t after the edit's removals (without the waits' changes)."""
        out: F64 = t.astype(np.float64).copy()
        x = np.maximum(t, lo).astype(np.int64)
        for cut, before in zip(cuts, cut_before, strict=True):
            out -= cut.below(x) - before
        return out

    dur = g.dur.copy()
    if edit.device is not None:
        events, factor = edit.device
        pos = np.flatnonzero(np.isin(g.items, events))
        lookup = dict(zip(events.tolist(), factor.tolist(), strict=True))
        dur[pos] *= np.array([lookup[int(e)] for e in g.items[pos].tolist()])
    launch = np.where(g.launched, mapped(g.launch), _NEVER)
    if edit.drop_removed_work:
        removed = g.launched & (mapped(g.launch + 1.0) - mapped(g.launch) < 0.5)
        dur[removed] = 0.0
    latency = g.latency.copy()
    if edit.release_held:
        latency[g.held] = np.minimum(latency[g.held], g.typical)
    if edit.no_latency is not None:
        latency[edit.no_latency] = 0.0
    ready = np.where(g.launched, launch + latency + dur, _NEVER)
    ready = np.where(g.anchored, g.end - g.dur + dur, ready)
    inc = dur + g.gap
    out_end = np.full(len(dur), np.nan)
    done = g.lane_start[:-1].copy()  # next item to compute, per stream
    lane_of = np.repeat(np.arange(len(done)), np.diff(g.lane_start))
    last = np.full(len(done), _NEVER)
    wait_end_in = g.wait_end
    shifts = np.zeros(len(g.waits) + 1)  # cumulative shift of host time after each wait

    def run_lane(lane: int, upto: int) -> None:
        a = int(done[lane])
        if upto < a:
            return
        idx = np.arange(a, upto + 1)
        r = ready[idx] + np.where(g.launched[idx], shift_for(g.launch[idx]), 0.0)
        c = np.cumsum(inc[idx])
        base = np.maximum(last[lane], np.maximum.accumulate(r - c))
        out_end[idx] = c + base
        last[lane] = out_end[upto]
        done[lane] = upto + 1

    processed = 0

    def shift_for(idx_launch: F64) -> F64:
        """What the waits so far moved host time by, at each launch."""
        k = np.searchsorted(wait_end_in, idx_launch, side="right")
        return shifts[np.minimum(k, processed)]

    free = set() if edit.free_waits is None else set(edit.free_waits.tolist())
    w_start, w_end = mapped(g.wait_start), mapped(g.wait_end)
    for k in range(len(g.waits)):
        target = int(g.wait_target[k])
        start = w_start[k] + shifts[k]
        base_len = w_end[k] - w_start[k]
        waited = max(0.0, float(g.end[target]) - float(g.wait_start[k]))
        own = max(base_len - waited, 0.0)
        tail = float(g.wait_end[k]) - float(g.end[target])
        if base_len < 0.5:  # the call itself was removed
            new_end = start + base_len
        elif int(g.waits[k]) in free:
            new_end = start + own
        else:
            lane = int(lane_of[target])
            run_lane(lane, target)
            new_end = max(start + own, float(out_end[target]) + tail)
        shifts[k + 1] = shifts[k] + new_end - (start + base_len)
        processed = k + 1
    for lane in range(len(done)):
        run_lane(lane, int(g.lane_start[lane + 1]) - 1)
    host_end = float(mapped(np.array([g.hi], np.int64))[0]) + shifts[-1]
    device_end = float(np.nanmax(out_end)) if len(out_end) else _NEVER
    span = float(max(host_end, device_end) - lo)
    if edit.device is None and not edit.drop_removed_work:
        # the replay does not model waits between streams: with the device's work unchanged,
        # the span cannot be shorter than the time the device was busy
        span = max(span, g.busy_ns)
    return span / 1000.0 / edit.per


__all__ = ["Edit", "StepGraph", "replay", "step_graph", "wait_calls"]
