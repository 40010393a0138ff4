"""Waits between streams: which device item could not start before an item of another
stream was done.

A stream waits for another when the host calls ``cudaStreamWaitEvent`` on it for an event
recorded (``cudaEventRecord``) on the other: the waiting stream's next item starts only once
everything queued on the other before the record is done. Found, in order of trust:

1. the device's own record of the wait (a ``cuda_sync`` ``Stream Wait Event``, torch >= 2.2):
   it names the waiting stream, the awaited stream and the record call's correlation;
2. a ``cudaStreamWaitEvent`` call without it: the waiting stream is the one its thread
   launches to next, the awaited one the stream its thread launched to last before the
   nearest earlier ``cudaEventRecord`` (the call itself when none was recorded), as
   PyTorch records an event on the current stream and makes another wait for it (when
   both are the same stream, nothing waits);
3. a trace that records no such call at all: each collective kernel waits for the item its
   thread launched last to another stream (ProcessGroupNCCL makes a collective's stream
   wait for the current stream before every collective).

An edge that the measured times contradict (its awaited item ended after the waiting one
started) is dropped: it is not how the device ran.
"""

from __future__ import annotations

import numpy as np

from profsight.analyses.step.comm_names import is_communication
from profsight.knowledge.rows import EVENT_RECORD_CALLS, STREAM_WAIT_CALLS, STREAM_WAIT_EVENT
from profsight.knowledge.trace_schema import LAUNCH_KINDS, EventKind
from profsight.model.events import F64, I32, I64
from profsight.model.profile import Profile


def stream_waits(
    profile: Profile, items: I64, lane: I64, start: F64, end: F64, launch_at: I64
) -> tuple[I64, I64]:
    """Pairs (waiting, awaited) of positions into `items` (device items in stream order:
    `lane` per item, sorted by lane then start; `launch_at`: each one's launch call start,
    -1 without one)."""
    ev = profile.events
    empty = np.zeros(0, np.int64)
    if len(items) == 0:
        return empty, empty
    lanes = _Lanes(lane, start, launch_at)
    by_thread = _ByThread(profile, items, launch_at)
    explicit = _recorded(profile, lanes)
    names = _name_ids(ev.strings, STREAM_WAIT_CALLS)
    calls = np.flatnonzero(ev.mask(LAUNCH_KINDS) & np.isin(ev.name, names))
    if len(explicit[0]):
        x, y = explicit
    elif len(calls):
        x, y = _from_calls(profile, calls, by_thread, lane)
    else:
        x, y = _collectives(profile, items, by_thread, lane, launch_at)
    if len(x) == 0:
        return empty, empty
    ok = (x >= 0) & (y >= 0)
    x, y = x[ok], y[ok]
    ok = (lane[x] != lane[y]) & (end[y] <= start[x])
    x, y = x[ok], y[ok]
    # one awaited item per waiting item: the one that ended last
    order = np.lexsort((end[y], x))
    x, y = x[order], y[order]
    last = np.ones(len(x), bool)
    last[:-1] = x[1:] != x[:-1]
    return x[last], y[last]


class _Lanes:
    """Each stream's items in order, with a non-decreasing launch key (the launch call's
    start; an item without one: its own start) to find items by when they were queued."""

    def __init__(self, lane: I64, start: F64, launch_at: I64) -> None:
        self.keys, first = np.unique(lane, return_index=True)
        self.first = np.append(first, len(lane)).astype(np.int64)
        key = np.where(launch_at >= 0, launch_at.astype(np.float64), start)
        self.key = np.empty(len(lane))
        for k in range(len(self.keys)):
            a, b = self.first[k], self.first[k + 1]
            self.key[a:b] = np.maximum.accumulate(key[a:b])

    def span(self, lane: int) -> tuple[int, int]:
        k = int(np.searchsorted(self.keys, lane))
        if k >= len(self.keys) or self.keys[k] != lane:
            return 0, 0
        return int(self.first[k]), int(self.first[k + 1])

    def last_before(self, lane: I64, t: F64) -> I64:
        """Per query, the last item of stream `lane` queued before `t` (-1: none)."""
        out = np.full(len(lane), -1, np.int64)
        for ln, sel in _groups(lane):
            a, b = self.span(ln)
            k = a + np.searchsorted(self.key[a:b], t[sel], side="left") - 1
            out[sel] = np.where(k >= a, k, -1)
        return out

    def first_after(self, lane: I64, t: F64) -> I64:
        """Per query, the first item of stream `lane` queued after `t` (-1: none)."""
        out = np.full(len(lane), -1, np.int64)
        for ln, sel in _groups(lane):
            a, b = self.span(ln)
            k = a + np.searchsorted(self.key[a:b], t[sel], side="right")
            out[sel] = np.where(k < b, k, -1)
        return out


class _ByThread:
    """The items each host thread launched, in order of their launch calls."""

    def __init__(self, profile: Profile, items: I64, launch_at: I64) -> None:
        ev = profile.events
        launcher = profile.attribution.launcher[items]
        linked = np.flatnonzero(launcher >= 0)
        self.track = np.asarray(ev.track)[launcher[linked]].astype(np.int64)
        order = np.lexsort((launch_at[linked], self.track))
        self.pos = linked[order]
        self.track = self.track[order]
        self.at = launch_at[self.pos]

    def around(self, track: int) -> tuple[int, int]:
        a = int(np.searchsorted(self.track, track, side="left"))
        b = int(np.searchsorted(self.track, track, side="right"))
        return a, b

    def next_after(self, track: I64, t: F64) -> I64:
        """Per query, the first item thread `track` launched after `t` (-1: none)."""
        out = np.full(len(track), -1, np.int64)
        for th, sel in _groups(track):
            a, b = self.around(th)
            k = a + np.searchsorted(self.at[a:b], t[sel], side="right")
            ok = k < b
            out[sel[ok]] = self.pos[k[ok]]
        return out

    def before(self, track: I64, t: F64, back: int = 0) -> I64:
        """Per query, the item thread `track` launched last before `t` (`back`: so many
        launches before that one; -1: none)."""
        out = np.full(len(track), -1, np.int64)
        for th, sel in _groups(track):
            a, b = self.around(th)
            k = a + np.searchsorted(self.at[a:b], t[sel], side="left") - 1 - back
            ok = k >= a
            out[sel[ok]] = self.pos[k[ok]]
        return out


def _groups(keys: I64) -> list[tuple[int, I64]]:
    """Each distinct key (a stream, a thread: a few) and the positions that hold it."""
    order = np.argsort(keys, kind="stable")
    distinct, first = np.unique(keys[order], return_index=True)
    bounds = np.append(first, len(keys))
    return [(int(k), order[bounds[i] : bounds[i + 1]]) for i, k in enumerate(distinct.tolist())]


def _recorded(profile: Profile, lanes: _Lanes) -> tuple[I64, I64]:
    """Edges from the device's own records of stream waits."""
    ev = profile.events
    empty = np.zeros(0, np.int64)
    if len(ev.wait_record) == 0:
        return empty, empty
    names = _name_ids(ev.strings, {STREAM_WAIT_EVENT})
    waits = np.flatnonzero(
        (ev.kind == EventKind.SYNC)
        & np.isin(ev.name, names)
        & (ev.wait_record >= 0)
        & (ev.wait_stream >= 0)
        & (ev.stream >= 0)
    )
    if len(waits) == 0:
        return empty, empty
    calls = np.flatnonzero(ev.mask(LAUNCH_KINDS) & (ev.correlation > 0))
    record = _by_correlation(ev.correlation[calls], calls, ev.wait_record[waits])
    call = _by_correlation(ev.correlation[calls], calls, ev.correlation[waits])
    found = record >= 0
    waits, record, call = waits[found], record[found], call[found]
    device = ev.device[waits].astype(np.int64) << 32
    t_wait = np.where(call >= 0, ev.start[np.maximum(call, 0)], ev.start[waits])
    ys = lanes.last_before(device + ev.wait_stream[waits], ev.start[record].astype(np.float64))
    xs = lanes.first_after(device + ev.stream[waits], t_wait.astype(np.float64))
    return xs, ys


def _by_correlation(corr: I32 | I64, calls: I64, wanted: I32 | I64) -> I64:
    """The call of each wanted correlation (the last one of the trace's calls that carries
    it; -1: none)."""
    if not len(corr):
        return np.full(len(wanted), -1, np.int64)
    order = np.argsort(corr, kind="stable")
    ordered = corr[order]
    k = np.maximum(np.searchsorted(ordered, wanted, side="right") - 1, 0)
    found: I64 = np.where(ordered[k] == wanted, calls[order[k]], -1)
    return found


def _from_calls(profile: Profile, calls: I64, by_thread: _ByThread, lane: I64) -> tuple[I64, I64]:
    """Edges from ``cudaStreamWaitEvent`` calls whose waits the device did not record."""
    ev = profile.events
    records = np.flatnonzero(
        ev.mask(LAUNCH_KINDS) & np.isin(ev.name, _name_ids(ev.strings, EVENT_RECORD_CALLS))
    )
    track = np.asarray(ev.track).astype(np.int64)
    t, th = ev.start[calls].astype(np.float64), track[calls]
    x = by_thread.next_after(th, t)
    keep = x >= 0
    x, t, th = x[keep], t[keep], th[keep]
    # the thread's last event record before the call (the call itself when none)
    t_record = t.copy()
    for thread, sel in _groups(th):
        mine = np.sort(ev.start[records[track[records] == thread]]).astype(np.float64)
        k = np.searchsorted(mine, t[sel], side="left") - 1
        if len(mine):
            t_record[sel] = np.where(k >= 0, mine[np.maximum(k, 0)], t[sel])
    # the event is recorded on the stream the thread launched to last before recording
    # it: that item, unless it is on the waiting stream itself (then nothing waits)
    y = by_thread.before(th, t_record)
    y = np.where((y >= 0) & (lane[np.maximum(y, 0)] != lane[x]), y, -1)
    return x, y


def _collectives(
    profile: Profile, items: I64, by_thread: _ByThread, lane: I64, launch_at: I64
) -> tuple[I64, I64]:
    """Each collective kernel waits for the item its thread launched last to another stream
    of its device (among its thread's last `_RECORD_WINDOW` launches)."""
    ev = profile.events
    launcher = profile.attribution.launcher[items]
    x = np.flatnonzero(
        (ev.kind[items] == EventKind.KERNEL) & (launcher >= 0) & is_communication(profile, items)
    )
    th = np.asarray(ev.track)[launcher[x]].astype(np.int64)
    t = launch_at[x].astype(np.float64)
    own = lane[x]
    y = np.full(len(x), -1, np.int64)
    pending = np.arange(len(x))
    for back in range(_RECORD_WINDOW):
        if not len(pending):
            break
        p = by_thread.before(th[pending], t[pending], back)
        there = p >= 0
        lane_p = lane[np.maximum(p, 0)]
        hit = there & (lane_p != own[pending]) & ((lane_p >> 32) == (own[pending] >> 32))
        y[pending[hit]] = p[hit]
        pending = pending[there & ~hit]
    return x, y


#: How many of its thread's launches before a collective are looked through for the item it
#: waits for (the record follows its launches closely).
_RECORD_WINDOW = 64


def _name_ids(strings: list[str], names: set[str] | frozenset[str]) -> list[int]:
    return [i for i, s in enumerate(strings) if s in names]


__all__ = ["stream_waits"]
