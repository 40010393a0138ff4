"""Where the time of each profiled step goes.

**The step** is what the host launched inside its ``ProfilerStep#N`` range (the whole
profiled span when there are none), wherever that work runs: its window on the slower of
the two clocks (`analyses.clocks`). Without a lagging device it is the host range exactly;
when the device runs behind, the step ends when the device finishes the work launched in
it, and steps are the intervals between those completions.

**Host side.** The thread that holds the steps is the step's thread; its rows (steps
excluded) are nested again into a forest, and each row's *self segments* (its interval
minus its children) are given the row's phase (`knowledge.phases`: declared by the row or
its nearest declaring ancestor). Clipped to a step's host range, the segments' lengths per
phase add up, with the time in no row ("other"), to the host range exactly; the rest of the
step's window, when the device runs behind, is ``device_lag``: the host ran ahead, and in
steady state waits for the device there. Work on other threads (autograd's backward thread
on GPU runs) runs in parallel and is reported by the device view and the table.

**Device side.** Busy = the union of kernels, copies and memsets inside the step's window
(never more than the window), less the work queued ahead of the steps (`clocks.queued_ahead`:
launched before the first, or by no call in the trace ahead of its own work on its stream),
which no step launched; the rest is split by cause: the device running that earlier work
(``ahead``), then what the host did meanwhile: waiting in a synchronisation call, fetching
data, anything else (the device waits for the host to launch work).
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec
import numpy as np

from profsight.analyses.step import intervals
from profsight.analyses.step.clocks import step_clocks, step_track, whole_trace
from profsight.analyses.step.comm_names import host_collective_intervals
from profsight.analyses.step.held import held_intervals
from profsight.analyses.step.launch_queue import launch_queue
from profsight.analyses.step.startup import startup_events
from profsight.knowledge.phases import FALLBACK_PHASES, Phase, declared_phase
from profsight.knowledge.rows import HOST_READ_NAME, RowKind, classify
from profsight.knowledge.trace_schema import (
    DEVICE_WORK_KINDS,
    PROFILER_STEP_PREFIX,
    EventKind,
)
from profsight.malloc_trim import release_grown_memory
from profsight.model.events import I8, I32, I64, Bool
from profsight.model.nesting import nest
from profsight.model.profile import Profile
from profsight.model.step_windows import PHASES, Breakdown, StepBreakdown, phase_code
from profsight.model.table import kind_label
from profsight.stats import union, unique


def breakdown(profile: Profile) -> Breakdown:
    # one function: the windows, segments and device sets are vectorised arrays each stage
    # refines in turn; split, the stages would pass them all along
    ev = profile.events
    at = profile.attribution
    rows = np.flatnonzero(at.is_row & ~at.is_async)
    step_ids = [i for i, s in enumerate(ev.strings) if s.startswith(PROFILER_STEP_PREFIX)]
    is_step = np.isin(ev.name, step_ids) & at.is_row & ~at.is_async
    steps = np.flatnonzero(is_step)
    if len(steps):
        track = int(np.bincount(ev.track[steps]).argmax())
        steps = steps[ev.track[steps] == track]
        steps = steps[np.argsort(ev.start[steps], kind="stable")]
        windows = [(int(ev.start[s]), int(ev.end_of(s)), ev.strings[ev.name[s]]) for s in steps]
        label = "profiler steps"
    elif len(rows):
        track = step_track(profile, rows)
        windows = [(*whole_trace(profile, rows), "whole trace")]
        label = "whole trace"
    else:
        return Breakdown((), "", "none")
    main = rows[(ev.track[rows] == track) & ~is_step[rows]]
    seg_s, seg_e, seg_phase, row_phase, seg_owner = _host_segments(profile, main)
    release_grown_memory()  # the nesting's and the sort's temporaries (`heap`)
    # self time of ranges (not ops): where the thread can sit waiting for a collective
    in_range = (ev.kind[main] != EventKind.CPU_OP)[seg_owner]
    host_lo = np.array([w[0] for w in windows], np.int64)
    host_hi = np.array([w[1] for w in windows], np.int64)
    clocks = step_clocks(profile, host_lo, host_hi)
    device = _device_sets(profile, clocks.ahead)
    covered = intervals.union(ev.start[main], ev.end_of(main))
    elsewhere = _backward_elsewhere(profile, rows[ev.track[rows] != track])
    collectives = host_collective_intervals(profile)
    # gaps in which backward runs elsewhere were counted as backward: not a collective wait
    covered_or_backward = intervals.union(*_concat(covered, elsewhere))
    events = startup_events(profile)
    startup = intervals.union(ev.start[events], ev.end_of(events))
    queue = None
    if device is not None:
        held = held_intervals(profile, events)
        queues = launch_queue(profile)
        queue = queues.summary()
        calls = queues.blocked
        del queues
        blocked = intervals.union(ev.start[calls], ev.end_of(calls))
        device = _DeviceSets(
            device.busy,
            device.sync,
            device.copy,
            device.data,
            startup,
            held,
            blocked,
            device.running,
        )
    out = []
    collective_waits: list[tuple[int, int]] = []
    # each window reads only what lies near it (found by bisection): a trace of thousands of
    # steps is not scanned whole once per step
    by_time = intervals.Bisected(seg_s, seg_e)
    for k, (lo, hi, name) in enumerate(windows):
        near = by_time.around(lo, hi)
        s, e, phase, ranges = seg_s[near], seg_e[near], seg_phase[near], in_range[near]
        host = _phase_times(s, e, phase, lo, hi)
        _move_startup(host, (s, e, phase), intervals.near(*startup, lo, hi), lo, hi)
        # the step thread's wait, in no range, while start-up runs on another thread (a
        # backward's first launch loading its module on autograd's thread) is the start-up's
        _move_waiting(
            host,
            intervals.near(*covered, lo, hi),
            intervals.near(*startup, lo, hi),
            lo,
            hi,
            Phase.STARTUP,
        )
        _move_waiting(
            host,
            intervals.near(*covered, lo, hi),
            intervals.near(*elsewhere, lo, hi),
            lo,
            hi,
            Phase.BACKWARD,
        )
        collective_waits += _move_collective_waits(
            host,
            (s[ranges], e[ranges], phase[ranges]),
            intervals.near(*covered_or_backward, lo, hi),
            intervals.near(*collectives, lo, hi),
            lo,
            hi,
        )
        # the step's interval on the device's clock; its figure is the longer of that and
        # its host range, ending at its completion
        w_lo, w_hi = int(clocks.lo[k]), int(clocks.hi[k])
        interval = (w_hi - w_lo) / 1000.0
        lag = interval - (hi - lo) / 1000.0
        if lag > 0:
            host[Phase.DEVICE_LAG.value] = lag
        wall = max(interval, (hi - lo) / 1000.0)
        waited, blocked_us = (
            _host_waits(_near_sets(device, lo, hi), lo, hi) if device is not None else (0.0, 0.0)
        )
        busy_us, idle = (
            _device_times(_near_sets(device, w_lo, w_hi), w_lo, w_hi)
            if device is not None
            else (None, {})
        )
        if device is not None and lag < 0:  # the device waited for a host slower than it
            idle["host"] = idle.get("host", 0.0) - lag
        end = float(clocks.device_hi[k])
        out.append(
            StepBreakdown(
                name,
                w_hi / 1000.0 - wall,
                wall,
                host,
                busy_us,
                idle,
                host_start_us=lo / 1000.0,
                host_wall_us=(hi - lo) / 1000.0,
                device_end_us=None if np.isnan(end) else end / 1000.0,
                waited_us=waited + max(lag, 0.0),
                blocked_us=blocked_us,
                interval_us=interval,
            )
        )
    del by_time
    del in_range
    return Breakdown(
        tuple(out),
        ev.tracks[track].label,
        label,
        main.astype(np.int32),
        np.where(row_phase >= 0, row_phase, phase_code(Phase.OTHER)).astype(np.int8),
        segments=(seg_s, seg_e, seg_phase, main[seg_owner].astype(np.int32)),
        backward_elsewhere=elsewhere,
        queue=queue,
        ahead=clocks.ahead,
        collective_waits=intervals.union(
            np.array([a for a, _ in collective_waits], np.int64),
            np.array([b for _, b in collective_waits], np.int64),
        ),
    )


def phase_intervals(breakdown: Breakdown, *phases: Phase) -> tuple[I64, I64]:
    """Where the step thread spent its time in `phases` (sorted disjoint ns intervals)."""
    if breakdown.segments is None:
        empty = np.zeros(0, np.int64)
        return empty, empty
    seg_s, seg_e, seg_phase, _ = breakdown.segments
    keep = np.isin(seg_phase, [phase_code(p) for p in phases])
    return intervals.union(seg_s[keep], seg_e[keep])


def work_intervals(breakdown: Breakdown, *phases: Phase) -> tuple[I64, I64]:
    """`phase_intervals`, with backward run on autograd's own thread when `phases` has
    backward (GPU runs: the step thread waits in ``loss.backward()`` meanwhile)."""
    spans = phase_intervals(breakdown, *phases)
    elsewhere = breakdown.backward_elsewhere
    if Phase.BACKWARD in phases and elsewhere is not None and len(elsewhere[0]):
        spans = intervals.union(*_concat(spans, elsewhere))
    return spans


def _move_startup(
    host: dict[str, float],
    segments: tuple[I64, I64, I8],
    startup: tuple[I64, I64],
    lo: int,
    hi: int,
) -> None:
    """The step thread's time inside one-time start-up calls, taken from the phases it was
    counted in (the forward of a first convolution, ...) into the ``startup`` phase."""
    spans = intervals.clip(*startup, lo, hi)
    if len(spans[0]) == 0:
        return
    seg_s, seg_e, phase = segments
    for a, b in zip(*spans, strict=True):
        overlap = np.minimum(seg_e, b) - np.maximum(seg_s, a)
        hit = overlap > 0
        for k, ns in zip(phase[hit].tolist(), overlap[hit].tolist(), strict=True):
            name = PHASES[k].value if k >= 0 else Phase.OTHER.value
            us = min(ns / 1000.0, host.get(name, 0.0))
            host[name] = host.get(name, 0.0) - us
            host[Phase.STARTUP.value] = host.get(Phase.STARTUP.value, 0.0) + us


def _backward_elsewhere(profile: Profile, others: I64) -> tuple[I64, I64]:
    """When autograd's own thread runs backward (GPU runs): the union of its ranges."""
    ev = profile.events
    kinds = _RowKinds(profile, others)
    backward = others[kinds.of(RowKind.BACKWARD)]
    return intervals.union(ev.start[backward], ev.end_of(backward))


def _move_waiting(
    host: dict[str, float],
    covered: tuple[I64, I64],
    elsewhere: tuple[I64, I64],
    lo: int,
    hi: int,
    phase: Phase,
) -> None:
    """Time the step's thread spends in no range while work it waits for runs on another
    thread is that wait, not "other": backward on autograd's thread (``loss.backward()``
    blocks), a collective on gloo's worker thread (DDP waits for the gradient all-reduce),
    one-time start-up on another thread."""
    if len(elsewhere[0]) == 0:
        return
    gaps = intervals.complement(*intervals.clip(*covered, lo, hi), lo, hi)
    moved = intervals.overlap(gaps, intervals.clip(*elsewhere, lo, hi)) / 1000.0
    moved = min(moved, host.get(Phase.OTHER.value, 0.0))
    if moved > 0:
        host[Phase.OTHER.value] -= moved
        host[phase.value] = host.get(phase.value, 0.0) + moved


def _most_overlapped(seg_s: I64, seg_e: I64, lo: I64, hi: I64) -> I64:
    """For each span [lo, hi), the segment (sorted by start; they may overlap) it overlaps
    most, the first of equals (-1: none). All spans at once, one pass per position among
    the segments a span can reach: the work is the overlapping pairs, not spans x segments."""
    best = np.full(len(lo), -1, np.int64)
    if not len(seg_s) or not len(lo):
        return best
    reach = np.maximum.accumulate(seg_e)
    first = np.searchsorted(reach, lo, side="right")  # (those before end before the span)
    stop = np.searchsorted(seg_s, hi, side="left")  # (those from here start after it)
    top = np.zeros(len(lo), np.int64)
    at = np.flatnonzero(stop > first)
    k = first[at]
    while len(at):
        overlap = np.minimum(seg_e[k], hi[at]) - np.maximum(seg_s[k], lo[at])
        better = overlap > top[at]
        top[at[better]] = overlap[better]
        best[at[better]] = k[better]
        k = k + 1
        more = k < stop[at]
        at, k = at[more], k[more]
    return best


def _move_collective_waits(
    host: dict[str, float],
    range_segments: tuple[I64, I64, I8],
    covered: tuple[I64, I64],
    collectives: tuple[I64, I64],
    lo: int,
    hi: int,
) -> list[tuple[int, int]]:
    """A thread blocked until a collective on a worker thread (gloo) completes sits outside any
    op: in no range, or in a range's own time (Lightning's backward). For each collective, the
    stretch of such time it overlaps most is the wait for it (gloo closes its range a little
    after the waiting thread resumes, so the end alone does not tell). It is taken from the
    phase it was counted in. Returns the waits moved (ns spans)."""
    waits = intervals.clip(*collectives, lo, hi)
    if len(waits[0]) == 0:
        return []
    gaps = intervals.complement(*intervals.clip(*covered, lo, hi), lo, hi)
    other = PHASES.index(Phase.OTHER)
    seg_s = np.concatenate([gaps[0], np.maximum(range_segments[0], lo)])
    seg_e = np.concatenate([gaps[1], np.minimum(range_segments[1], hi)])
    phase = np.concatenate([np.full(len(gaps[0]), other), np.maximum(range_segments[2], 0)])
    keep = seg_e > seg_s
    seg_s, seg_e, phase = seg_s[keep], seg_e[keep], phase[keep]
    order = np.argsort(seg_s, kind="stable")
    seg_s, seg_e, phase = seg_s[order], seg_e[order], phase[order]
    waited: dict[int, list[tuple[int, int]]] = {}
    moved: list[tuple[int, int]] = []
    best = _most_overlapped(seg_s, seg_e, *waits)
    for cs, ce, k in zip(waits[0].tolist(), waits[1].tolist(), best.tolist(), strict=True):
        if k >= 0:
            waited.setdefault(k, []).append((max(int(seg_s[k]), cs), min(int(seg_e[k]), ce)))
    for k, spans in waited.items():
        starts = np.array([a for a, _ in spans], np.int64)
        ends = np.array([b for _, b in spans], np.int64)
        name = PHASES[int(phase[k])].value
        us = min(intervals.length(*intervals.union(starts, ends)) / 1000.0, host.get(name, 0.0))
        if us > 0:
            host[name] -= us
            host[Phase.COMMUNICATION.value] = host.get(Phase.COMMUNICATION.value, 0.0) + us
            moved += spans
    return moved


def _host_segments(profile: Profile, main: I64) -> tuple[I64, I64, I8, I8, I32]:
    """Self segments of the step thread's rows in order of start, the phase index of each,
    each row's phase, and the row (index into `main`) each segment belongs to. A row's
    segments are the gaps before each of its children (from the previous sibling's end, or
    its own start), the stretch after its last child, or, for a leaf, the whole row. Each
    temporary is freed once used: a row makes about two segments, and a huge trace has tens
    of millions of rows."""
    ev = profile.events
    if len(main) == 0:
        empty = np.zeros(0, np.int64)
        return empty, empty, np.zeros(0, np.int8), np.zeros(0, np.int8), np.zeros(0, np.int32)
    start, end = ev.start[main], ev.end_of(main)
    nesting = nest(np.zeros(len(main), np.int8), start, end)  # one thread
    parent = nesting.parent
    phase = _phases(profile, main, parent, nesting.depth)
    del nesting
    kids = np.flatnonzero(parent >= 0)
    # the children, grouped by parent, each group in order of start
    order = kids[np.lexsort((start[kids], parent[kids]))].astype(np.int32)
    leaves = np.flatnonzero(np.bincount(parent[kids], minlength=len(main)) == 0)
    del kids
    owner = parent[order]
    first = np.ones(len(order), bool)
    first[1:] = owner[1:] != owner[:-1]
    last = np.ones(len(order), bool)
    last[:-1] = first[1:]
    previous = np.empty_like(order)  # the sibling before each child (a first child: itself)
    previous[:1] = order[:1]
    previous[1:] = order[:-1]
    gap_s = end[previous]
    del previous
    gap_s[first] = start[owner[first]]
    del first
    tail = order[last]
    del last
    tail_owner = parent[tail]
    seg_s = np.concatenate([gap_s, end[tail], start[leaves]])
    del gap_s
    # in order of start: the analyses' unions and merges then need no sort of their own
    by_start = np.argsort(seg_s, kind="stable")
    seg_s = seg_s[by_start]
    seg_e = np.concatenate([start[order], end[tail_owner], end[leaves]])[by_start]
    del order, tail
    seg_owner = np.concatenate([owner, tail_owner, leaves.astype(np.int32)])[by_start]
    # a thread whose ranges overlap without nesting (nested the way torch does) has self
    # segments that overlap: each is cut where the next one starts, so that no instant is
    # counted twice and the phases never add up to more than the step
    if len(seg_s) > 1:
        np.minimum(seg_e[:-1], seg_s[1:], out=seg_e[:-1])
    return seg_s, seg_e, phase[seg_owner], phase, seg_owner


def _phases(profile: Profile, main: I64, parent: I32, depth: I32) -> I8:
    """Phase index of each row (a byte): declared, else its nearest declaring ancestor's, else
    its kind's. Each distinct (name, event kind) is classified once."""
    row_kinds = _RowKinds(profile, main)
    inverse, names, kinds = row_kinds.inverse, row_kinds.names, row_kinds.kinds
    declared = np.array(
        [phase_code(declared_phase(n, k)) for n, k in zip(names, kinds, strict=True)], np.int8
    )[inverse]
    fallback = np.array([phase_code(FALLBACK_PHASES.get(k, Phase.OTHER)) for k in kinds], np.int8)[
        inverse
    ]
    of_kind = row_kinds.of
    if any(n.startswith("[pl]") for n in names):
        # Lightning runs every op of a step inside one of its ranges; an op with none started
        # after the step window opened inside optimizer_step (Lightning steps the profiler when
        # training_step returns), so it is the optimizer's work whose range began earlier
        aten = of_kind(RowKind.ATEN) | of_kind(RowKind.RUNTIME)
        fallback[aten] = phase_code(Phase.OPTIMIZER)
    inherited = declared
    for d in unique(depth).tolist():
        level = np.flatnonzero((depth == d) & (inherited < 0) & (parent >= 0))
        inherited[level] = inherited[parent[level]]
    step = of_kind(RowKind.STEP)
    fallback[step] = -1
    unset = inherited < 0
    inherited[unset] = fallback[unset]
    return inherited


class _RowKinds:
    """The `RowKind` of each of `events`, classified once per distinct (name, event kind): a
    huge trace has tens of millions of rows and a few thousand names."""

    def __init__(self, profile: Profile, events: I64) -> None:
        ev = profile.events
        pair = ev.name[events].astype(np.int64)
        pair *= 64
        pair += ev.kind[events]
        unique, inverse = np.unique(pair, return_inverse=True)
        del pair
        self.inverse: I64 = inverse.reshape(-1)
        self.names = [ev.strings[int(u) // 64] for u in unique.tolist()]
        self.kinds = [
            classify(n, kind_label(int(u) % 64))
            for n, u in zip(self.names, unique.tolist(), strict=True)
        ]

    def where(self, test: Callable[[str, RowKind], bool]) -> Bool:
        """Which events pass `test` (of their name and kind)."""
        passed = np.array([test(n, k) for n, k in zip(self.names, self.kinds, strict=True)], bool)
        found: Bool = passed[self.inverse] if len(passed) else np.zeros(len(self.inverse), bool)
        return found

    def of(self, kind: RowKind) -> Bool:
        return self.where(lambda _, k: k is kind)


def _phase_times(seg_s: I64, seg_e: I64, seg_phase: I8, lo: int, hi: int) -> dict[str, float]:
    s, e = np.maximum(seg_s, lo), np.minimum(seg_e, hi)
    keep = e > s
    per = np.bincount(
        np.maximum(seg_phase[keep], 0), weights=(e - s)[keep] / 1000.0, minlength=len(PHASES)
    )
    times = {p.value: float(per[i]) for i, p in enumerate(PHASES) if per[i] > 0}
    covered = float(np.sum((e - s)[keep])) / 1000.0
    other = (hi - lo) / 1000.0 - covered
    times[Phase.OTHER.value] = times.get(Phase.OTHER.value, 0.0) + max(other, 0.0)
    return times


class _DeviceSets(msgspec.Struct, frozen=True):
    busy: tuple[I64, I64]
    sync: tuple[I64, I64]
    copy: tuple[I64, I64]
    data: tuple[I64, I64]
    startup: tuple[I64, I64]
    held: tuple[I64, I64]
    blocked: tuple[I64, I64]
    """Launch calls made with their stream's queue full."""
    running: tuple[I64, I64]
    """All device work, the steps' and what was queued ahead of them: what a host waits on."""


def _device_sets(profile: Profile, ahead: I64) -> _DeviceSets | None:
    """The device's busy time and the host's waits, as interval sets; busy is the steps'
    work, without the work queued `ahead` of them (the steps before the profiled ones)."""
    ev = profile.events
    work = np.flatnonzero(ev.mask(DEVICE_WORK_KINDS))
    if len(work) == 0:
        return None
    steps = work[~np.isin(work, ahead)]
    at = profile.attribution
    rows = np.flatnonzero(at.is_row)
    kinds = _RowKinds(profile, rows)
    sync = rows[kinds.of(RowKind.SYNC)]
    data = rows[kinds.of(RowKind.DATALOADER)]
    copies = rows[kinds.where(lambda name, kind: kind is RowKind.RUNTIME and "Memcpy" in name)]
    del kinds
    # a copy call that reads back to the host (.item(), .cpu()) is a sync
    blocking = host_read_calls(profile)
    copies = copies[~np.isin(copies, blocking)]
    sync = union(sync, blocking)
    return _DeviceSets(
        busy=intervals.union(ev.start[steps], ev.end_of(steps)),
        sync=intervals.union(ev.start[sync], ev.end_of(sync)),
        copy=intervals.union(ev.start[copies], ev.end_of(copies)),
        data=intervals.union(ev.start[data], ev.end_of(data)),
        startup=(np.zeros(0, np.int64), np.zeros(0, np.int64)),
        held=(np.zeros(0, np.int64), np.zeros(0, np.int64)),
        blocked=(np.zeros(0, np.int64), np.zeros(0, np.int64)),
        running=intervals.union(ev.start[work], ev.end_of(work)),
    )


def host_read_calls(profile: Profile) -> I64:
    """The host calls that launched device-to-host copies (`HOST_READ_NAME`): syncs."""
    ev = profile.events
    names = [i for i, s in enumerate(ev.strings) if HOST_READ_NAME.search(s)]
    copies = np.flatnonzero((ev.kind == EventKind.MEMCPY) & np.isin(ev.name, names))
    launchers = profile.attribution.launcher[copies]
    return unique(launchers[launchers >= 0])


def _device_times(sets: _DeviceSets, lo: int, hi: int) -> tuple[float, dict[str, float]]:
    """Busy time, and idle time by cause, in order of precedence: the device running the
    work queued ahead of the steps (`ahead`: busy, but with no step's work), one-time
    start-up, launched work held back (`held`), the host in a sync, in a copy call (a
    blocking cudaMemcpy), fetching data, anything else."""
    busy = intervals.clip(*sets.busy, lo, hi)
    seen = busy
    idle: dict[str, float] = {}
    causes = (
        ("ahead", sets.running),
        ("startup", sets.startup),
        ("held", sets.held),
        ("sync", sets.sync),
        ("copy", sets.copy),
        ("input", sets.data),
    )
    for cause, during in causes:
        rest = intervals.complement(*seen, lo, hi)
        clipped = intervals.clip(*during, lo, hi)
        idle[cause] = intervals.overlap(rest, clipped) / 1000.0
        seen = intervals.union(*_concat(seen, clipped))
    idle["host"] = intervals.length(*intervals.complement(*seen, lo, hi)) / 1000.0
    return intervals.length(*busy) / 1000.0, idle


def _near_sets(sets: _DeviceSets, lo: int, hi: int) -> _DeviceSets:
    """The device's interval sets cut to what overlaps [lo, hi) (by bisection)."""

    def cut(pair: tuple[I64, I64]) -> tuple[I64, I64]:
        return intervals.near(pair[0], pair[1], lo, hi)

    return _DeviceSets(
        cut(sets.busy),
        cut(sets.sync),
        cut(sets.copy),
        cut(sets.data),
        cut(sets.startup),
        cut(sets.held),
        cut(sets.blocked),
        cut(sets.running),
    )


def _host_waits(sets: _DeviceSets, lo: int, hi: int) -> tuple[float, float]:
    """Host time in [lo, hi) waiting for a busy device (in a sync, a blocking copy or a
    launch on a full queue while the device worked), and the part on a full queue (µs)."""
    blocked = intervals.clip(*sets.blocked, lo, hi)
    waits = intervals.union(
        *_concat(
            _concat(intervals.clip(*sets.sync, lo, hi), blocked), intervals.clip(*sets.copy, lo, hi)
        )
    )
    busy = intervals.clip(*sets.running, lo, hi)
    return intervals.overlap(waits, busy) / 1000.0, intervals.length(*blocked) / 1000.0


def _concat(a: tuple[I64, I64], b: tuple[I64, I64]) -> tuple[I64, I64]:
    return np.concatenate([a[0], b[0]]), np.concatenate([a[1], b[1]])
