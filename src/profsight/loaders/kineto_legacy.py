"""The legacy Chrome exporter's traces (torch <= 1.7, or ``use_kineto=False``): their device
rows made device work and linked to their ops, as far as the file allows.

The exporter writes no ``cat`` and no ``args`` (`LEGACY_PROCESS_KINDS`): the columns give its
``CPU functions`` events as ops and its ``CUDA functions`` events as device items. Those are
not kernels: each is the time between the CUDA events recorded around one op on the device
(named as the op, ``tid`` = the device), nested as the ops are. So an innermost one is the
op's device work, and one that holds others spans them (a device-side label, as a
``gpu_user_annotation`` is) unless most of it lies after the last range it holds: then that
tail is the op's own work, launched after the ops inside it (``cudnn_convolution`` after its
``contiguous`` and ``empty``: torch >= 1.7 counts it as the op's self CUDA time, the range
less the ranges inside it; the tail leaves out only the µs between the op's first event and
its first inner op's). The flows join them: a ``cpu_to_cuda`` ``s`` at the op's start
on its thread, its ``f`` at the range's start on the device's row; the op and its range carry
the same name, which settles an op and its child starting at the same microsecond.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from msgspec.structs import replace

from profsight.knowledge.trace_schema import LEGACY_EXPORTER, LEGACY_PROCESS_KINDS, EventKind
from profsight.model.diagnostics import Diagnostic, Level
from profsight.model.events import EventStore, Flows


def legacy_tracks(store: EventStore) -> np.ndarray:
    """Whether each track is one of the legacy exporter's processes."""
    return np.array([str(t.pid).lower() in LEGACY_PROCESS_KINDS for t in store.tracks], bool)


def read_legacy(store: EventStore, flows: Flows, diagnostics: list[Diagnostic]) -> EventStore:
    """`store` with its legacy device ranges sorted into work and spans, on their device,
    and each linked to its op by an External id (unchanged when it holds none)."""
    on_legacy = legacy_tracks(store)
    if not len(store) or not on_legacy.any():
        return store
    legacy = on_legacy[store.track]
    ranges = np.flatnonzero(legacy & (store.kind == EventKind.KERNEL))
    ops = np.flatnonzero(legacy & (store.kind == EventKind.CPU_OP))
    kind = store.kind.copy()
    spans, held_end = _spans(store, ranges)
    tail = store.end_of(spans) - held_end
    own = tail > held_end - store.start[spans]  # most of the range after what it holds
    kind[spans[~own]] = EventKind.GPU_ANNOTATION
    device = np.array(store.device, np.int32)  # (a column may be one value broadcast)
    device[ranges] = [_device(store.tracks[t].tid) for t in store.track[ranges].tolist()]
    external = np.array(store.external_id, np.int64)
    linked = _link(store, flows, ops, ranges, external)
    linked += _link_by_name(store, ops, ranges, external)
    start, dur = store.start.copy(), store.dur.copy()
    start[spans[own]], dur[spans[own]] = held_end[own], tail[own]
    diagnostics.append(
        Diagnostic(
            "legacy_exporter",
            f"written by {LEGACY_EXPORTER}: {len(ops)} op(s)"
            + (
                f", {len(ranges)} device range(s) (each op's time between its CUDA events; "
                f"{linked} linked to their op"
                + (
                    f"; {int(own.sum())} read as their op's own work after the ops inside it)"
                    if own.any()
                    else ")"
                )
                if len(ranges)
                else ", no device rows (this exporter writes none from torch 1.8 on)"
            ),
            Level.INFO,
            remedy="for kernels, copies and launch calls, profile with torch.profiler.profile("
            "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) (torch >= 1.8)",
        )
    )
    return replace(store, kind=kind, device=device, external_id=external, start=start, dur=dur)


def _spans(store: EventStore, ranges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ranges that hold another range of their device's row (laminar, as ops nest), and
    where the last range each holds ends."""
    if len(ranges) < 2:
        return ranges[:0], np.zeros(0, np.int64)
    order = np.lexsort((-store.dur[ranges], store.start[ranges], store.track[ranges]))
    r = ranges[order]
    start, end, track = store.start[r], store.end_of(r), store.track[r]
    same = track[1:] == track[:-1]
    holds = np.flatnonzero(same & (start[1:] < end[:-1]) & (end[1:] <= end[:-1]))
    # the ranges each holds follow it in this order, up to the first on its row starting at
    # or past its end: found per row by a search, their latest end by one reduction
    stop = np.empty(len(holds), np.int64)
    rows = np.flatnonzero(np.diff(track, prepend=track[0] - 1, append=track[-1] + 1))
    for lo, hi in zip(rows[:-1].tolist(), rows[1:].tolist(), strict=True):
        mine = (holds >= lo) & (holds < hi)
        stop[mine] = lo + np.searchsorted(start[lo:hi], end[holds[mine]], side="left")
    bounds = np.column_stack((holds + 1, stop)).ravel()
    held_end = np.maximum.reduceat(np.append(end, 0), bounds)[::2]
    out: np.ndarray = r[holds]
    return out, held_end


def _device(tid: int | str) -> int:
    try:
        return int(tid)
    except ValueError:
        return -1


def _link(
    store: EventStore, flows: Flows, ops: np.ndarray, ranges: np.ndarray, external: np.ndarray
) -> int:
    """Give each op and the range its flow leads to one External id; how many were linked."""
    if not len(ops) or not len(ranges) or not len(flows.flow_id):
        return 0
    at_op: dict[tuple[int, int], list[int]] = defaultdict(list)
    for i, t, s in zip(
        ops.tolist(), store.track[ops].tolist(), store.start[ops].tolist(), strict=True
    ):
        at_op[(t, s)].append(i)
    at_range: dict[tuple[int, int], list[int]] = defaultdict(list)
    for i, t, s in zip(
        ranges.tolist(), store.track[ranges].tolist(), store.start[ranges].tolist(), strict=True
    ):
        at_range[(t, s)].append(i)
    ends: dict[int, dict[bool, tuple[int, int]]] = defaultdict(dict)
    for fid, start, track, s in zip(
        flows.flow_id.tolist(),
        flows.is_start.tolist(),
        flows.track.tolist(),
        flows.start.tolist(),
        strict=True,
    ):
        ends[fid][start] = (track, s)
    next_id = int(external.max()) + 1 if len(external) else 1
    next_id = max(next_id, 1)
    linked = 0
    for pair in ends.values():
        if True not in pair or False not in pair:
            continue
        op, work = _pair(store, at_op.get(pair[True], []), at_range.get(pair[False], []))
        if op < 0 or external[work] > 0:
            continue
        if external[op] <= 0:
            external[op] = next_id
            next_id += 1
        external[work] = external[op]
        linked += 1
    return linked


def _link_by_name(
    store: EventStore, ops: np.ndarray, ranges: np.ndarray, external: np.ndarray
) -> int:
    """Ranges no flow reached (a flow lost to a damaged file): the latest op of the same name
    that began before the range (its CUDA event is recorded as the op begins)."""
    left = ranges[external[ranges] <= 0]
    if not len(left) or not len(ops):
        return 0
    by_name: dict[str, list[int]] = defaultdict(list)
    for op in ops[np.argsort(store.start[ops], kind="stable")].tolist():
        by_name[store.strings[store.name[op]].strip()].append(op)
    next_id = max(int(external.max()) + 1, 1)
    linked = 0
    for work in left.tolist():
        same = by_name.get(store.strings[store.name[work]].strip(), [])
        before = [op for op in same if store.start[op] <= store.start[work]]
        if not before:
            continue
        op = before[-1]
        if external[op] <= 0:
            external[op] = next_id
            next_id += 1
        external[work] = external[op]
        linked += 1
    return linked


def _pair(store: EventStore, ops: list[int], ranges: list[int]) -> tuple[int, int]:
    """The op and the range a flow joins: the one pair with the same name, or the only ones."""
    for op in ops:
        for work in ranges:
            if store.strings[store.name[op]].strip() == store.strings[store.name[work]].strip():
                return op, work
    if len(ops) == 1 and len(ranges) == 1:
        return ops[0], ranges[0]
    return -1, -1


__all__ = ["legacy_tracks", "read_legacy"]
