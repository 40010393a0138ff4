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
from profsight.model.events import F64, I64
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

    def last_before(self, lane: int, t: float) -> int:
        """The last item of `lane` queued before `t` (-1: none)."""
        a, b = self.span(lane)
        k = int(np.searchsorted(self.key[a:b], t, side="left")) - 1
        return a + k if k >= 0 else -1

    def first_after(self, lane: int, t: float) -> int:
        """The first item of `lane` queued after `t` (-1: none)."""
        a, b = self.span(lane)
        k = int(np.searchsorted(self.key[a:b], t, side="right"))
        return a + k if a + k < b else -1


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

    def next_after(self, track: int, t: float) -> int:
        a, b = self.around(track)
        k = a + int(np.searchsorted(self.at[a:b], t, side="right"))
        return int(self.pos[k]) if k < b else -1

    def before(self, track: int, t: float) -> I64:
        """Positions of the items `track` launched before `t`, latest first."""
        a, b = self.around(track)
        k = a + int(np.searchsorted(self.at[a:b], t, side="left"))
        found: I64 = self.pos[a:k][::-1]
        return found


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
    by_corr = dict(zip(ev.correlation[calls].tolist(), calls.tolist(), strict=True))
    xs, ys = [], []
    for w in waits.tolist():
        record = by_corr.get(int(ev.wait_record[w]))
        call = by_corr.get(int(ev.correlation[w]))
        if record is None:
            continue
        device = int(ev.device[w]) << 32
        t_wait = float(ev.start[call] if call is not None else ev.start[w])
        ys.append(lanes.last_before(device + int(ev.wait_stream[w]), float(ev.start[record])))
        xs.append(lanes.first_after(device + int(ev.stream[w]), t_wait))
    return np.array(xs, np.int64), np.array(ys, np.int64)


def _from_calls(profile: Profile, calls: I64, by_thread: _ByThread, lane: I64) -> tuple[I64, I64]:
    """Edges from ``cudaStreamWaitEvent`` calls whose waits the device did not record."""
    ev = profile.events
    records = np.flatnonzero(
        ev.mask(LAUNCH_KINDS) & np.isin(ev.name, _name_ids(ev.strings, EVENT_RECORD_CALLS))
    )
    track = np.asarray(ev.track)
    xs, ys = [], []
    for c in calls.tolist():
        t, th = float(ev.start[c]), int(track[c])
        x = by_thread.next_after(th, t)
        if x < 0:
            continue
        mine = records[(track[records] == th) & (ev.start[records] < t)]
        t_record = float(ev.start[mine].max()) if len(mine) else t
        # the event is recorded on the stream the thread launched to last before recording
        # it: that item, unless it is on the waiting stream itself (then nothing waits)
        latest = by_thread.before(th, t_record)
        y = int(latest[0]) if len(latest) else -1
        ys.append(y if y >= 0 and lane[y] != lane[x] else -1)
        xs.append(x)
    return np.array(xs, np.int64), np.array(ys, np.int64)


def _collectives(
    profile: Profile, items: I64, by_thread: _ByThread, lane: I64, launch_at: I64
) -> tuple[I64, I64]:
    """Each collective kernel waits for the item its thread launched last to another stream."""
    ev = profile.events
    launcher = profile.attribution.launcher[items]
    comm = np.flatnonzero(
        (ev.kind[items] == EventKind.KERNEL)
        & (launcher >= 0)
        & is_communication(profile, items)
    )
    track = np.asarray(ev.track)
    xs, ys = [], []
    for x in comm.tolist():
        th = int(track[launcher[x]])
        ys.append(_other_lane(by_thread.before(th, float(launch_at[x])), lane, int(lane[x])))
        xs.append(x)
    return np.array(xs, np.int64), np.array(ys, np.int64)


def _other_lane(latest_first: I64, lane: I64, own: int) -> int:
    """The first of the positions (latest first) on a stream of `own`'s device other than
    `own` (-1: none)."""
    device = own >> 32
    for p in latest_first[:64].tolist():  # the record follows its launches closely
        if lane[p] != own and int(lane[p]) >> 32 == device:
            return int(p)
    return -1


def _name_ids(strings: list[str], names: set[str] | frozenset[str]) -> list[int]:
    return [i for i, s in enumerate(strings) if s in names]


__all__ = ["stream_waits"]
