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
- *Waits between streams* (`analyses.stream_waits`): an item that waited for an event
  recorded on another stream starts after the awaited item, by the measured delay.
- *Waits*: a synchronising call (``cudaStreamSynchronize``, ``cudaDeviceSynchronize``, a
  blocking or device-to-host copy, ``cudaFree``) during which device work finished waited
  for the last such item; the host resumes when that item is done, plus the measured tail.
  So does a launch made with its stream's queue full (`analyses.launch_queue`): it returns
  when an item completes, so a faster device frees the host too.

**Replaying** is one pass in time order: host times follow the clock (minus what an edit
removes, plus what each wait adds); each stream's items are computed, vectorised, up to the
item the next wait needs (an item that waits for another stream, once that stream's item is
computed). Each step then completes when its host range and the device work launched in it
are done, and the replayed step time follows from those completions by the breakdown's own
rule (`analyses.clocks.step_time`): what a fix saves is in the currency of the steady-state
step.

Every latency, gap and tail is measured on the item it belongs to, so replaying with no
change reproduces the measured span exactly; an edit moves only what depends on it.
"""

from __future__ import annotations

import bisect

import msgspec
import numpy as np

from profsight.analyses.step import intervals
from profsight.analyses.step.clocks import backlog_end, device_ends, step_of, windows
from profsight.analyses.step.held import held_items
from profsight.analyses.step.launch_queue import launch_queue
from profsight.analyses.step.startup import startup_events
from profsight.analyses.step.stream_waits import stream_waits
from profsight.knowledge.rows import (
    BLOCKING_COPY_CALLS,
    IMPLICIT_SYNC_CALLS,
    STAGED_COPY_NAME,
    RowKind,
    classify,
)
from profsight.knowledge.trace_schema import DEVICE_WORK_KINDS, LAUNCH_KINDS
from profsight.model.events import F64, I64, Bool
from profsight.model.findings import REPLAYED
from profsight.model.profile import Profile
from profsight.model.step_windows import step_time
from profsight.stats import median, union

_NEVER = -1e30


class Edit(msgspec.Struct, frozen=True):
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
    basis: str = REPLAYED
    """How the replayed figure prices the fix (`findings.REPLAYED`, `PER_SAMPLE` when `per`
    changes the batch, `UPPER_BOUND` for a best case)."""


class StepGraph(msgspec.Struct, frozen=True):
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
    step_lo: I64 = msgspec.field(default_factory=lambda: np.zeros(0, np.int64))
    step_hi: I64 = msgspec.field(default_factory=lambda: np.zeros(0, np.int64))
    """The steps' host ranges (ns; none: [lo, hi) is one step)."""
    item_step: I64 = msgspec.field(default_factory=lambda: np.zeros(0, np.int64))
    """The step each item was launched in (-1: none)."""
    dep: I64 = msgspec.field(default_factory=lambda: np.zeros(0, np.int64))
    """Per item, the item of another stream it waited for (`stream_waits`; -1: none)..."""
    dep_lag: F64 = msgspec.field(default_factory=lambda: np.zeros(0))
    """... and how long after that item's end it started (ns)."""
    queue_waits: Bool = msgspec.field(default_factory=lambda: np.zeros(0, bool))
    """Which waits are launches made with their stream's queue full (no sync to remove)."""
    backlog: float = float("nan")
    """When the work queued ahead of the first step's ended (`clocks.backlog_end`)."""

    @property
    def measured_us(self) -> float:
        """The steady-state step time as measured (µs): the mean step window."""
        return _step_time(self, self.step_lo, self.step_hi, self.end)


def step_graph(
    profile: Profile, lo: int, hi: int, steps: tuple[I64, I64] | None = None
) -> StepGraph:
    """The graph of everything the host and the device did in [lo, hi); `steps`: the host
    ranges of the steps in it (none: [lo, hi) is one)."""
    # one function: the graph's arrays are built from each other in one vectorised pass; split,
    # each part would take and return a dozen of them
    ev = profile.events
    launcher = profile.attribution.launcher
    work = np.flatnonzero(ev.mask(DEVICE_WORK_KINDS))
    lstart = np.where(launcher[work] >= 0, ev.start[np.maximum(launcher[work], 0)], -1)
    lend = np.where(launcher[work] >= 0, ev.end_of(np.maximum(launcher[work], 0)), -1)
    launched = (launcher[work] >= 0) & (lstart >= lo) & (lstart < hi)
    overlaps = (ev.end_of(work) > lo) & (ev.start[work] < hi)
    keep = launched | (overlaps & (launcher[work] < 0)) | (overlaps & (lstart < lo))
    work, launched, lstart, lend = work[keep], launched[keep], lstart[keep], lend[keep]
    lane = ev.lane(work)
    order = np.lexsort((ev.start[work], lane))
    work, launched, lane = work[order], launched[order], lane[order]
    lstart, lend = lstart[order], lend[order]
    start = ev.start[work].astype(np.float64)
    end = ev.end_of(work).astype(np.float64)
    dur = end - start
    waits, wait_target, queue_waits = _waits(profile, work, end, lo, hi)
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
    typical = float(median(latency[bound if bound.any() else free])) if free.any() else 0.0
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
    # an item that waited for another stream's item, when that item's end was the last of
    # what it waited for: the wait explains its delay (its own stream's gap and its latency
    # do not); else the edge keeps it no later than it ran
    dep = np.full(len(work), -1, np.int64)
    dep_lag = np.zeros(len(work))
    x, y = stream_waits(profile, work, lane, start, end, np.where(launched, lstart, -1))
    if len(x):
        ready_at = np.where(launched, lend + typical, _NEVER)
        own = np.maximum(np.where(first[x], _NEVER, prev_end[x]), ready_at[x])
        binding = end[y] >= own
        dep[x], dep_lag[x] = y, np.where(binding, start[x] - end[y], 0.0)
        bound_x = x[binding]
        latency[bound_x] = np.where(launched[bound_x], np.minimum(latency[bound_x], typical), 0.0)
        gap[bound_x] = np.minimum(q[bound_x], 0.0)
    if steps is None:
        steps = (np.array([lo], np.int64), np.array([hi], np.int64))
    step_lo, step_hi = steps
    item_step = np.where(launched, step_of(step_lo, step_hi, lstart), -1)
    # the backlog ahead of the first step, as measured: pre-window work is not the steps'
    # own, and no edit moves it (`clocks.backlog_end`)
    backlog = backlog_end(start, end, lstart, lane, item_step == 0, int(step_lo[0]))
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
        step_lo=step_lo,
        step_hi=step_hi,
        item_step=item_step,
        dep=dep,
        dep_lag=dep_lag,
        queue_waits=queue_waits,
        backlog=backlog,
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


def _waits(profile: Profile, items: I64, end: F64, lo: int, hi: int) -> tuple[I64, I64, Bool]:
    """The wait calls in [lo, hi) that waited, and the item each waited for. A copy call
    waited for its own copy when that finished inside it (the copy ran after everything
    queued before it), or, for a copy from pageable memory (`STAGED_COPY_NAME`), when the
    copy ran while the call staged it (the call returns as the last chunk is staged, just
    before the copy ends); a synchronising call for the last item to finish inside it, of
    those launched before it ended."""
    ev = profile.events
    blocked = launch_queue(profile).blocked
    calls = union(wait_calls(profile), blocked)
    calls = calls[(ev.start[calls] >= lo) & (ev.start[calls] < hi)]
    calls = calls[np.argsort(ev.start[calls], kind="stable")]
    if len(calls) == 0 or len(items) == 0:
        return calls[:0], np.zeros(0, np.int64), np.zeros(0, bool)
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
    waits = np.array(kept, np.int64)
    return waits, np.array(target, np.int64), np.isin(waits, blocked)


def replay(graph: StepGraph, edit: Edit | None = None) -> float:
    """The steady-state step time (µs) with `edit` applied (none: as measured)."""
    return replay_steps(graph, edit)[0]


def replay_steps(graph: StepGraph, edit: Edit | None = None) -> tuple[float, F64]:
    """`replay`'s figure, and each profiled step's part of it (µs; their mean is the
    figure): the steps' windows on the slower clock, or their host ranges where those are
    longer on average, or the busiest stream's work per step where that is the floor.
    Compared step by step with the measured ones, they say how much of a saving the steps
    agree on (`saving_spread`)."""
    parts, floor, per = _replayed(graph, edit or Edit("no change"))
    step = float(np.mean(parts)) / 1000.0
    if step < floor:
        return floor / per, np.full(len(parts), floor / per)
    out: F64 = parts / 1000.0 / per
    return step / per, out


def _replayed(graph: StepGraph, edit: Edit) -> tuple[F64, float, float]:
    """The steps' parts of the steady step (ns, `_step_parts`), the busiest stream's work
    per step (µs: no steady step is shorter) and the edit's divisor (per sample)."""
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
    if edit.no_latency is not None:  # (a graph's kernel that started before its launch
        # call returned keeps its negative latency)
        latency[edit.no_latency] = np.minimum(latency[edit.no_latency], 0.0)
    ready = np.where(g.launched, launch + latency + dur, _NEVER)
    ready = np.where(g.anchored, g.end - g.dur + dur, ready)
    lanes = _LaneRun(g, dur, ready)
    free = set() if edit.free_waits is None else set(edit.free_waits.tolist())
    w_start, w_end = mapped(g.wait_start), mapped(g.wait_end)
    for k in range(len(g.waits)):
        target = int(g.wait_target[k])
        start = w_start[k] + lanes.shifts[k]
        base_len = w_end[k] - w_start[k]
        waited = max(0.0, float(g.end[target]) - float(g.wait_start[k]))
        own = max(base_len - waited, 0.0)
        tail = float(g.wait_end[k]) - float(g.end[target])
        if base_len < 0.5:  # the call itself was removed
            new_end = start + base_len
        elif int(g.waits[k]) in free:
            new_end = start + own
        else:
            lanes.ensure(int(lanes.lane_of[target]), target)
            new_end = max(start + own, float(lanes.out_end[target]) + tail)
        lanes.shifts[k + 1] = lanes.shifts[k] + new_end - (start + base_len)
        lanes.processed = k + 1
    for lane in range(len(lanes.done)):
        lanes.ensure(lane, int(g.lane_start[lane + 1]) - 1)
    host_lo = mapped(g.step_lo.astype(np.float64)) + lanes.shift_for(g.step_lo.astype(np.float64))
    host_hi = mapped(g.step_hi.astype(np.float64)) + lanes.shift_for(g.step_hi.astype(np.float64))
    # a floor of physics, not a clamp: a stream runs its items one after another, so no
    # steady step is shorter than the busiest stream's work per step. As measured the
    # intervals always hold it; an edit that takes the host's time away can leave steps of
    # uneven device work (all of it launched in one) with intervals shorter than that work
    floor = _busiest_stream_per_step(g, dur)
    return _step_parts(g, host_lo, host_hi, lanes.out_end, dur), floor, edit.per


def saving_spread(measured: F64, after: F64) -> float | None:
    """The replay's resolution of a saving (µs per step): what the steps lengthened by under
    the edit, in all, per step. Every edit removes or shortens work, and no step of a steady
    state gets longer for that; a profiled step's window does when its edge moves with the
    step before it (a device lag that shrinks more in one step than in the next lengthens
    the next window by as much), so the saving, read from a few such steps, is uncertain by
    as much. None when the steps cannot be compared."""
    if not len(measured) or len(measured) != len(after):
        return None
    change = measured - after
    return float(-np.minimum(change, 0.0).sum() / len(change))


def _busiest_stream_per_step(g: StepGraph, dur: F64) -> float:
    """The device work (µs, durations as edited) of the busiest stream, per profiled step:
    items launched in the steps only."""
    n = len(g.step_lo)
    inside = g.item_step >= 0
    if n == 0 or not inside.any():
        return 0.0
    lane = np.repeat(np.arange(len(g.lane_start) - 1), np.diff(g.lane_start))
    per_lane = np.bincount(lane[inside], weights=dur[inside], minlength=len(g.lane_start) - 1)
    return float(per_lane.max()) / n / 1000.0


def _step_time(g: StepGraph, host_lo: F64 | I64, host_hi: F64 | I64, item_end: F64) -> float:
    """The steady step (µs) of host ranges and the items' ends (`clocks.step_time`)."""
    return float(np.mean(_step_parts(g, host_lo, host_hi, item_end, g.dur))) / 1000.0


def _step_parts(
    g: StepGraph, host_lo: F64 | I64, host_hi: F64 | I64, item_end: F64, dur: F64
) -> F64:
    """Each step's part of the steady step (ns): its window, or its host range where the
    host ranges are the longer on average (`clocks.step_time`: the longer mean wins)."""
    n = len(g.step_lo)
    if n == 0:
        return np.zeros(1)
    device_hi = device_ends(g.item_step, item_end, n)
    h_lo, h_hi = np.rint(host_lo).astype(np.int64), np.rint(host_hi).astype(np.int64)
    # the first step's own work begins its interval (`clocks.windows`), durations as edited
    first = g.item_step == 0
    began = float((item_end[first] - dur[first]).min()) if first.any() else float("nan")
    w_lo, w_hi = windows(h_lo, h_hi, device_hi, g.backlog, began)
    host, interval = h_hi - h_lo, w_hi - w_lo
    longer = interval if step_time(host, interval) == float(np.mean(interval)) else host
    out: F64 = longer.astype(np.float64)
    return out


class _LaneRun:
    """Each stream's replayed item ends, computed on demand up to the item a wait needs:
    vectorised between the items that wait for another stream, whose awaited item is
    computed first (an explicit stack, not recursion: a lagging trace can chain thousands).

    Two streams that wait on each other in turn (a collective's stream and the compute
    stream) are computed an item or two at a time: such short stretches take a scalar
    path (`_SHORT`), the same sums in the same order as the vectorised one."""

    def __init__(self, g: StepGraph, dur: F64, ready: F64) -> None:
        self.g = g
        self.ready = ready
        self.inc = dur + g.gap
        self.dur = dur
        self.out_end = np.full(len(dur), np.nan)
        self.done = g.lane_start[:-1].copy()  # next item to compute, per stream
        self.lane_of = np.repeat(np.arange(len(self.done)), np.diff(g.lane_start))
        self.last = np.full(len(self.done), _NEVER)
        self.shifts = np.zeros(len(g.waits) + 1)  # host time shift after each wait
        self.processed = 0
        self.edges: list[int] = np.flatnonzero(g.dep >= 0).tolist() if len(g.dep) else []
        """The items that wait for another stream, in order."""
        self.after_dep = np.full(len(dur), _NEVER)
        """Per item that waits for another stream: the earliest end that wait allows."""
        self._wait_end: list[float] = g.wait_end.tolist()

    def shift_for(self, t: F64) -> F64:
        """What the waits so far moved host time by, at each time `t` (measured clock)."""
        k = np.searchsorted(self.g.wait_end, t, side="right")
        shifted: F64 = self.shifts[np.minimum(k, self.processed)]
        return shifted

    def _compute(self, lane: int, upto: int) -> None:
        a = int(self.done[lane])
        if upto < a:
            return
        if upto - a < _SHORT:
            self._compute_short(lane, a, upto)
            return
        g = self.g
        idx = np.arange(a, upto + 1)
        r = self.ready[idx] + np.where(g.launched[idx], self.shift_for(g.launch[idx]), 0.0)
        # (an item that waited for another stream: that item's replayed end, already on the
        # replayed clock, so no shift is added to it)
        np.maximum(r, self.after_dep[idx], out=r)
        c = np.cumsum(self.inc[idx])
        base = np.maximum(self.last[lane], np.maximum.accumulate(r - c))
        self.out_end[idx] = c + base
        self.last[lane] = self.out_end[upto]
        self.done[lane] = upto + 1

    def _compute_short(self, lane: int, a: int, upto: int) -> None:
        """`_compute` of a few items, one by one: the same cumulative sum and running
        maximum, so the same floating-point result."""
        g = self.g
        last = float(self.last[lane])
        c, peak, end = 0.0, -np.inf, last
        for i in range(a, upto + 1):
            r = float(self.ready[i])
            if g.launched[i]:
                k = bisect.bisect_right(self._wait_end, float(g.launch[i]))
                r += float(self.shifts[min(k, self.processed)])
            r = max(r, float(self.after_dep[i]))
            c += float(self.inc[i])
            peak = max(peak, r - c)
            end = c + max(last, peak)
            self.out_end[i] = end
        self.last[lane] = end
        self.done[lane] = upto + 1

    def ensure(self, lane: int, upto: int) -> None:
        """Compute `lane` up to item `upto`, and first every awaited item before it. The
        waits whose awaited item is already computed are resolved together, and the stream
        is computed in one pass up to the first wait whose awaited item is not."""
        stack = [(lane, upto)]
        stacked = [0] * len(self.done)  # entries of each stream on the stack
        stacked[lane] = 1
        while stack:
            ln, u = stack[-1]
            a = int(self.done[ln])
            if u < a:
                stack.pop()
                stacked[ln] -= 1
                continue
            k0 = bisect.bisect_left(self.edges, a)
            k1 = bisect.bisect_right(self.edges, u)
            ready, x, y = self._resolve(k0, k1)
            if x < 0:
                self._compute(ln, u)
                stack.pop()
                stacked[ln] -= 1
                continue
            if x > a:
                self._compute(ln, x - 1)
            ly = int(self.lane_of[y])
            if stacked[ly]:
                # that stream is blocked further down the stack at a wait of its own, which
                # `y` comes after: the two wait on each other, which is not how it ran, so
                # this edge goes
                del self.edges[k0 + ready]
                continue
            stack.append((ly, y))
            stacked[ly] += 1

    def _resolve(self, k0: int, k1: int) -> tuple[int, int, int]:
        """Edges `k0`..`k1`: the earliest end each allows, up to the first whose awaited
        item is not computed yet. Returns how many were resolved and that edge's waiting
        and awaited items (-1, -1: all were).

        Two streams that wait on each other in turn leave one or two edges resolvable per
        call, of thousands ahead: the edges are looked at a few first, one by one, then in
        chunks that double, so a call costs what it resolves, not what is left."""
        g = self.g
        first = min(k1, k0 + _SHORT)
        for k in range(k0, first):
            x = self.edges[k]
            y = int(g.dep[x])
            if self.done[self.lane_of[y]] <= y:
                return k - k0, x, y
            self.after_dep[x] = float(self.out_end[y]) + float(g.dep_lag[x]) + float(self.dur[x])
        k, size = first, 2 * _SHORT
        while k < k1:
            xs = np.array(self.edges[k : min(k1, k + size)], np.int64)
            ys = g.dep[xs]
            blocked = np.flatnonzero(self.done[self.lane_of[ys]] <= ys)
            ready = int(blocked[0]) if len(blocked) else len(xs)
            x_ok = xs[:ready]
            self.after_dep[x_ok] = self.out_end[ys[:ready]] + g.dep_lag[x_ok] + self.dur[x_ok]
            if ready < len(xs):
                return k - k0 + ready, int(xs[ready]), int(ys[ready])
            k, size = k + len(xs), 2 * size
        return k1 - k0, -1, -1


#: Stretches of at most this many items (or edges) take the scalar path: numpy's cost per
#: call is that of a few dozen items in Python.
_SHORT = 8


__all__ = [
    "Edit",
    "StepGraph",
    "replay",
    "replay_steps",
    "saving_spread",
    "step_graph",
    "wait_calls",
]
