"""Who owns which time: nesting, CPU -> device links, and self/total times of every event.

The rules are torch's (``torch.autograd.profiler._parse_kineto_results`` and
``profiler_util.FunctionEvent``), so that the table built on top equals ``key_averages()``:

* host rows nest per thread (`nesting`); torch's filtered names take no part, nor do ranges
  still open when the profiler stopped (``"finished": false``): torch calls them async, gives
  them no children, no self time and no device time;
* a child with its parent's name that is the parent's only child is dropped and its
  children and device work move up (``EventList._remove_dup_nodes``);
* device work (kernels, memcpy, memset) belongs to the CPU op or ``record_function`` whose
  ``External id`` it carries; work without one is attributed through its launch call's
  correlation to the op around that call (torch leaves such work unattributed);
* self CPU = duration - children's durations; device total = own device work + children's
  device totals; self device = own device work;
* memory: a host event's memory is the sum of the ``[memory]`` records that fall inside its
  interval (any thread, bounds included); records inside no host event become ``[memory]`` rows.

All arrays are indexed by event (`EventStore` position) and hold microseconds or bytes.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

import msgspec
import numpy as np

from profsight.knowledge.trace_schema import (
    CPU_MEMORY_DEVICE_TYPES,
    DEVICE_MEMORY_DEVICE_TYPES,
    DEVICE_ROW_KINDS,
    DEVICE_WORK_KINDS,
    FILTERED_NAMES,
    HOST_KINDS,
    LAUNCH_KINDS,
    MEMORY_EVENT_NAME,
    OWNER_KINDS,
    PROFILER_SPAN_CATEGORY,
    PROFILER_SPAN_PREFIX,
    TABLE_DEVICE_KINDS,
    EventKind,
    table_key,
)
from profsight.malloc_trim import release_grown_memory
from profsight.model.diagnostics import Diagnostic, Level
from profsight.model.events import F64, I32, I64, Bool, EventStore
from profsight.model.nesting import NO_PARENT, nest
from profsight.model.trace_meta import TraceMeta
from profsight.stats import setdiff, unique

#: Host events taken at once where each needs many temporaries.
CHUNK = 1 << 20

T = TypeVar("T", bound=np.ndarray[Any, Any])


class Attribution(msgspec.Struct):
    is_row: Bool
    """Host events that are rows of torch's table (not filtered, not dropped as duplicates)."""
    is_async: Bool
    """Rows torch calls async (unfinished ranges): outside the nesting, no self time."""
    is_device_row: Bool
    """Device events that are rows (kernels, memcpy, memset, device-side annotations)."""
    parent: I32
    """Parent row of each host row (after duplicate removal), or -1."""
    depth: I32
    owner: I32
    """For device work: the host row it is attributed to, or -1."""
    launcher: I32
    """For device work: the runtime/driver call that launched it, or -1."""
    key: I32
    """Per event: the name torch aggregates it under (``ProfilerStep*``), an index into
    `key_names`."""
    key_names: list[str]
    """The store's strings, and the aggregation names only the table uses."""
    dur_ns: I64
    """The store's durations (the same array, not a copy), for `cpu_total_of`."""
    clipped: tuple[I64, I64]
    """Ranges left open (sorted event indices) and their durations cut where the profiler
    stopped (ns)."""
    cpu_self: F64
    device_total: F64
    device_self: F64
    """Device time of each row: its device work, credited to the op its External id names,
    else to the op around its launch call (what the analyses read)."""
    is_table_device_row: Bool
    table_device_total: F64
    table_device_self: F64
    """As torch's table counts device time: work and syncs credited by External id only
    (none without one), sync rows included."""
    cpu_mem: I64
    cpu_mem_self: I64
    device_mem: I64
    device_mem_self: I64
    memory_rows: I64
    """``[memory]`` events covered by no host event: they are rows of their own."""
    order: I32
    """Host rows in torch's order (thread, start, -end)."""
    diagnostics: list[Diagnostic] = msgspec.field(default_factory=list)

    def cpu_total_of(self, index: I32 | I64 | Bool) -> F64:
        """CPU total (µs) of the events at `index` (positions or a mask): a row's duration
        (a range left open: cut where the profiler stopped), 0 for an event that is no row.
        Not kept as a column: on a huge trace it would take 8 bytes per event through every
        stage."""
        if index.dtype == np.bool_:
            index = np.flatnonzero(index)
        ns = self.dur_ns[index]
        opened, cut = self.clipped
        if len(opened):
            pos = np.minimum(np.searchsorted(opened, index), len(opened) - 1)
            hit = opened[pos] == index
            ns[hit] = cut[pos[hit]]
        total: F64 = ns / 1000.0
        total[~self.is_row[index]] = 0.0
        return total


def attribute(events: EventStore) -> Attribution:
    """Written for memory: a trace can hold tens of millions of events, so indices are int32,
    a column no event needs is one value broadcast (`_constant`), and every temporary is freed
    as soon as it was used."""
    # one function: self and total times from one pass over the nested events' arrays; split,
    # each step would pass the arrays along
    ev = events
    n = len(ev)
    diagnostics: list[Diagnostic] = []
    key, key_names = _table_keys(ev)
    host = ev.mask(HOST_KINDS)
    host &= ~_filtered(ev)
    is_async = host & ev.unfinished
    dur_ns = _clipped_durations(ev, host, is_async)
    opened = np.flatnonzero(is_async)
    clipped = (opened, dur_ns[opened])
    dur_us = dur_ns / 1000.0
    del dur_ns, opened
    host_idx = np.flatnonzero(host & ~is_async)
    parent, depth, order, overlapping = _nested(ev, host_idx, n)
    release_grown_memory()  # the nesting's per-thread temporaries
    if overlapping:
        diagnostics.append(
            Diagnostic(
                "partial_overlap",
                f"{overlapping} thread(s) hold ranges that overlap without "
                "nesting; they were nested the way torch does (an overlapping range is not "
                "a child)",
                Level.INFO,
                count=overlapping,
            )
        )
    removed = _remove_duplicates(parent, key, host_idx)
    del host_idx
    survivor = _surviving_ancestor(parent, removed) if removed.any() else None
    is_row = host & ~removed
    del removed
    nests = is_row & ~is_async
    parent = _lifted(parent, survivor)
    parent[~is_row] = NO_PARENT

    device_work = ev.mask(DEVICE_WORK_KINDS)
    launcher = _constant(_launchers(ev, device_work))
    owner = _owners(ev, device_work, launcher, parent, host, diagnostics)
    owner = _constant(_lifted(owner, survivor))
    tree = (parent, depth, is_row)

    cpu_total: F64 = np.where(is_row, dur_us, 0.0)
    kids = is_row & (parent >= 0)
    cpu_self: F64 = np.bincount(parent[kids], weights=cpu_total[kids], minlength=n).astype(
        np.float64, copy=False
    )
    del kids
    np.subtract(cpu_total, cpu_self, out=cpu_self)  # self = total - the children's totals
    del cpu_total
    cpu_self[~nests] = 0.0

    is_device_row = ev.mask(DEVICE_ROW_KINDS)
    device_self, device_total = _device_times(owner, device_work, is_device_row, dur_us, tree)
    # torch's table: device work and syncs count for the op their External id names, and
    # for no op without one (`table_device_self`); the analyses keep the launch's op
    table_items = ev.mask(DEVICE_WORK_KINDS | {EventKind.SYNC})
    linked = _constant(_lifted(_linked(ev, table_items, host), survivor))
    del survivor
    is_table_device_row = ev.mask(TABLE_DEVICE_KINDS)
    table_device_self, table_device_total = _device_times(
        linked, table_items, is_table_device_row, dur_us, tree
    )
    del table_items
    _by_launch_diagnostic(ev, device_work & (owner >= 0) & (linked < 0), device_work, diagnostics)
    del linked, device_work

    cpu_mem, device_mem, memory_rows = _memory(ev, host, is_row, dur_us)
    del dur_us, host
    cpu_mem_self = _self_of(cpu_mem, parent, nests)
    device_mem_self = _self_of(device_mem, parent, nests)
    return Attribution(
        is_row=is_row,
        is_async=is_async,
        is_device_row=is_device_row,
        parent=parent,
        depth=depth,
        owner=owner,
        launcher=launcher,
        key=key,
        key_names=key_names,
        dur_ns=ev.dur,
        clipped=clipped,
        cpu_self=cpu_self,
        device_total=device_total,
        device_self=device_self,
        is_table_device_row=is_table_device_row,
        table_device_total=table_device_total,
        table_device_self=table_device_self,
        cpu_mem=cpu_mem,
        cpu_mem_self=cpu_mem_self,
        device_mem=device_mem,
        device_mem_self=device_mem_self,
        memory_rows=memory_rows,
        order=order[is_row[order]],
        diagnostics=diagnostics,
    )


def _nested(ev: EventStore, host_idx: I64, n: int) -> tuple[I32, I32, I32, int]:
    """Parent and depth of every event (the nesting of `host_idx`, the finished host
    events), the host events in torch's order, and how many threads overlapped."""
    nesting = nest(ev.track[host_idx], ev.start[host_idx], ev.end_of(host_idx))
    parent = np.full(n, NO_PARENT, np.int32)
    has_parent = nesting.parent >= 0
    parent[host_idx[has_parent]] = host_idx[nesting.parent[has_parent]]
    del has_parent
    depth = np.zeros(n, np.int32)
    depth[host_idx] = nesting.depth
    order: I32 = host_idx[nesting.order].astype(np.int32)
    return parent, depth, order, nesting.overlapping_threads


def _lifted(index: I32, survivor: I32 | None) -> I32:
    """Event indices (-1: none) with each event torch drops as a duplicate replaced by its
    surviving ancestor."""
    if survivor is None:
        return index
    lifted: I32 = np.where(index >= 0, survivor[np.maximum(index, 0)], -1).astype(np.int32)
    return lifted


def _zeros(n: int, dtype: Any = np.float64) -> Any:
    """A column of zeros that takes no memory per event (read-only)."""
    return np.broadcast_to(np.zeros(1, dtype), (n,))


def _constant(column: T) -> T:
    """`column`, or its one value broadcast where every event has the same (device times
    of a CPU trace, memory without ``profile_memory``): no memory per event, read-only."""
    if len(column) < 2 or not (column == column[0]).all():
        return column
    return np.broadcast_to(column[:1].copy(), column.shape)  # type: ignore[return-value]


def _clipped_durations(ev: EventStore, host: Bool, is_async: Bool) -> I64:
    """Durations, with ranges left open cut where the profiler stopped.

    The exporter stretches an open range to when it exported; torch's own events end it when
    collection stopped: the end of Kineto's ``PyTorch Profiler (N)`` span (a trace without
    one: the end of the last completed host range).
    """
    dur = ev.dur.copy()
    finished = host & ~is_async
    if is_async.any() and finished.any():
        spans = _profiler_spans(ev)
        stop = int(ev.end_of(spans).max() if len(spans) else ev.end_of(finished).max())
        dur[is_async] = np.clip(stop - ev.start[is_async], 0, ev.dur[is_async])
    clipped: I64 = dur.astype(np.int64)
    return clipped


def _device_times(
    owner: I32, items: Bool, device_rows: Bool, dur_us: F64, tree: tuple[I32, I32, Bool]
) -> tuple[F64, F64]:
    """Self and total device time of each row from the items credited to it (`owner`); a
    device row's own duration for itself."""
    parent, depth, is_row = tree
    credited = items & (owner >= 0)
    if not credited.any() and not device_rows.any():  # a CPU trace
        return _zeros(len(owner)), _zeros(len(owner))
    self_time: F64 = np.bincount(
        owner[credited], weights=dur_us[credited], minlength=len(owner)
    ).astype(np.float64)
    self_time[~is_row] = 0.0
    total = _subtree_sums(self_time, parent, depth, is_row)
    return (
        _constant(np.where(device_rows, dur_us, self_time).astype(np.float64)),
        _constant(np.where(device_rows, dur_us, total).astype(np.float64)),
    )


def _by_launch_diagnostic(
    ev: EventStore, by_launch: Bool, device_work: Bool, diagnostics: list[Diagnostic]
) -> None:
    """Device work that no External id links to an op: torch's table credits it to no op."""
    n = int(by_launch.sum())
    if not n:
        return
    share = float(ev.dur[by_launch].sum()) * 100 / max(float(ev.dur[device_work].sum()), 1.0)
    diagnostics.append(
        Diagnostic(
            "linked_by_launch",
            f"{n} kernels/copies ({share:.1f}% of device time) carry no External id of an op: "
            "torch's table, and profsight's, credit them to no op; the analyses credit each "
            "to the op around its launch call",
            Level.INFO,
            count=n,
        )
    )


def _profiler_spans(ev: EventStore) -> I64:
    """Kineto's spans of the collection (``PyTorch Profiler (N)``, category ``Trace``)."""
    cats = [i for i, s in enumerate(ev.strings) if s.lower() == PROFILER_SPAN_CATEGORY]
    names = [i for i, s in enumerate(ev.strings) if s.startswith(PROFILER_SPAN_PREFIX)]
    found: I64 = np.flatnonzero(np.isin(ev.category, cats) & np.isin(ev.name, names))
    return found


def _table_keys(ev: EventStore) -> tuple[I32, list[str]]:
    """Each event's aggregation name, as an index into the returned names: the store's
    strings, plus the names only the table uses (``ProfilerStep*``). The store is not
    changed (stores of a merged trace's ranks share their strings)."""
    names = ev.strings
    lut = np.arange(len(names), dtype=np.int32)
    index = {s: i for i, s in enumerate(names)}
    extra: list[str] = []
    for i, s in enumerate(names):
        k = table_key(s)
        if k != s:
            if k not in index:
                index[k] = len(names) + len(extra)
                extra.append(k)
            lut[i] = index[k]
    keys = lut[ev.name] if len(ev) else np.zeros(0, np.int32)
    return keys, [*names, *extra] if extra else names


def _filtered(ev: EventStore) -> Bool:
    ids = [i for i, s in enumerate(ev.strings) if s in FILTERED_NAMES]
    return np.isin(ev.name, ids)


def _remove_duplicates(parent: I32, key: I32, host_idx: I64) -> Bool:
    """torch's ``_remove_dup_nodes``: an only child named like its parent is not a row."""
    n = len(parent)
    removed = np.zeros(n, bool)
    child = host_idx[parent[host_idx] >= 0]
    n_children = np.bincount(parent[child], minlength=n)
    dup = child[(key[child] == key[parent[child]]) & (n_children[parent[child]] == 1)]
    removed[dup] = True
    return removed


def _surviving_ancestor(parent: I32, removed: Bool) -> I32:
    """Each event itself if kept, else its nearest kept ancestor (pointer jumping)."""
    up = np.arange(len(parent), dtype=np.int32)
    up[removed] = parent[removed]
    while True:
        nxt = np.where(up >= 0, up, 0)
        step = removed[nxt] & (up >= 0)
        if not step.any():
            return up
        up = np.where(step, parent[nxt], up)


def _launchers(ev: EventStore, device_work: Bool) -> I32:
    """The host launch call (same ``correlation``) of each device event, or -1."""
    n = len(ev)
    launcher = np.full(n, -1, np.int32)
    launch = np.flatnonzero(ev.mask(LAUNCH_KINDS) & (ev.correlation > 0))
    work = np.flatnonzero(device_work & (ev.correlation > 0))
    if len(launch) == 0 or len(work) == 0:
        return launcher
    corr = ev.correlation[launch]
    by_corr = np.argsort(corr, kind="stable")
    sorted_corr = corr[by_corr]
    pos = np.searchsorted(sorted_corr, ev.correlation[work])
    pos_ok = pos < len(sorted_corr)
    hit = pos_ok & (sorted_corr[np.minimum(pos, len(sorted_corr) - 1)] == ev.correlation[work])
    launcher[work[hit]] = launch[by_corr[pos[hit]]]
    return launcher


def _linked(ev: EventStore, items: Bool, host: Bool) -> I32:
    """For each of `items`: the op or range (finished) whose External id it carries, as
    torch links device activity to ops (-1: none). An op torch drops as its parent's
    duplicate still takes it; the caller lifts it to the parent, as torch does."""
    n = len(ev)
    owner = np.full(n, -1, np.int32)
    owners = np.flatnonzero(ev.mask(OWNER_KINDS) & host & ~ev.unfinished & (ev.external_id > 0))
    work = np.flatnonzero(items)
    if len(owners) and len(work):
        ext = ev.external_id[owners]
        by_ext = np.argsort(ext, kind="stable")
        sorted_ext = ext[by_ext]
        wext = ev.external_id[work]
        pos = np.minimum(np.searchsorted(sorted_ext, wext), len(sorted_ext) - 1)
        hit = (wext > 0) & (sorted_ext[pos] == wext)
        owner[work[hit]] = owners[by_ext[pos[hit]]]
    return owner


def _owners(
    ev: EventStore,
    device_work: Bool,
    launcher: I32,
    parent: I32,
    host: Bool,
    diagnostics: list[Diagnostic],
) -> I32:
    owner = _linked(ev, device_work, host)
    work = np.flatnonzero(device_work)
    # fallback: the row around the launch call
    lost = work[(owner[work] < 0) & (launcher[work] >= 0)]
    if len(lost):
        owner[lost] = parent[launcher[lost]]
    unlinked = work[owner[work] < 0]
    if len(unlinked):
        launches = ev.correlation[ev.mask(LAUNCH_KINDS)]
        first_launch = int(launches[launches > 0].min()) if np.any(launches > 0) else None
        early = (
            unlinked[(ev.correlation[unlinked] > 0) & (ev.correlation[unlinked] < first_launch)]
            if first_launch is not None
            else unlinked[:0]
        )
        _unlinked_diagnostic(ev, early, unlinked, diagnostics)
    return owner


def _unlinked_diagnostic(
    ev: EventStore, early: I64, unlinked: I64, diagnostics: list[Diagnostic]
) -> None:
    def busy(idx: I64) -> str:
        return f"{float(ev.dur[idx].sum()) / 1000.0:.1f} µs"

    if len(early):
        diagnostics.append(
            Diagnostic(
                "launched_before_window",
                f"{len(early)} device events ({busy(early)}) ran inside the profiled window but "
                "were launched before it: they count as device time, but belong to no CPU op",
                Level.INFO,
                count=len(early),
                remedy="a warm-up step in the profiler schedule (warmup>=1) keeps them out",
            )
        )
    rest = setdiff(unlinked, early)
    if len(rest):
        diagnostics.append(
            Diagnostic(
                "unlinked_device",
                f"{len(rest)} device events ({busy(rest)}) are linked to no CPU op (no External "
                "id and no launch call around them in the trace); they count as device time "
                "but belong to no row of the call tree",
                Level.INFO,
                count=len(rest),
            )
        )


def _subtree_sums(own: F64, parent: I32, depth: I32, is_row: Bool) -> F64:
    """own + the sums of all descendants, accumulated bottom-up one depth level at a time."""
    total = own.copy()
    rows = np.flatnonzero(is_row & (parent >= 0))
    if len(rows) == 0:
        result: F64 = total.astype(np.float64)
        return result
    row_depth = depth[rows]
    for d in unique(row_depth)[::-1]:
        at = rows[row_depth == d]
        np.add.at(total, parent[at], total[at])
    summed: F64 = total.astype(np.float64)
    return summed


def _self_of(value: I64, parent: I32, is_row: Bool) -> I64:
    if not value.any():  # no memory recorded on that side: the same zeros, no copy
        return value
    kids = np.flatnonzero(is_row & (parent >= 0))
    own = np.zeros(len(value), np.int64)  # the children's sum, in int64: no float column
    np.add.at(own, parent[kids], value[kids])
    del kids
    np.subtract(value, own, out=own)  # in place: a column of tens of millions of events
    own *= is_row
    return own


def _memory(ev: EventStore, host: Bool, is_row: Bool, dur_us: F64) -> tuple[I64, I64, I64]:
    """Bytes of the ``[memory]`` records inside each host row's interval (its duration as
    clipped, `dur_us`), CPU and device; and the records inside none. A side with no
    record is one zero broadcast. Host events are taken `CHUNK` at a time: each needs a
    dozen temporaries, and a huge trace has tens of millions."""
    n = len(ev)
    none = _zeros(n, np.int64)
    mem_name = ev.strings.index(MEMORY_EVENT_NAME) if MEMORY_EVENT_NAME in ev.strings else -1
    records = np.flatnonzero((ev.kind == EventKind.MEMORY) & (ev.name == mem_name))
    if len(records) == 0:
        return none, none, records.astype(np.int64)
    t = ev.start[records]
    by_time = np.argsort(t, kind="stable")
    t_sorted = t[by_time]
    del t
    dtype = ev.mem_device_type[records][by_time]
    nbytes = ev.nbytes[records][by_time]
    cums: list[I64 | None] = []
    for types in (CPU_MEMORY_DEVICE_TYPES, DEVICE_MEMORY_DEVICE_TYPES):
        side_bytes = np.where(np.isin(dtype, list(types)), nbytes, 0)
        cums.append(np.concatenate(([0], np.cumsum(side_bytes))) if side_bytes.any() else None)
    del dtype, nbytes
    sides = [none if cum is None else np.zeros(n, np.int64) for cum in cums]
    # records inside no host interval: +1 at each covering interval's first record, -1 after
    # its last; a record is uncovered where the running count is 0
    cover = np.zeros(len(t_sorted) + 1, np.int64)
    hosts = np.flatnonzero(host)
    for lo_host in range(0, len(hosts), CHUNK):
        chunk = hosts[lo_host : lo_host + CHUNK]
        starts = ev.start[chunk]
        lo = np.searchsorted(t_sorted, starts, side="left")
        starts += np.rint(dur_us[chunk] * 1000.0).astype(np.int64)  # now the ends
        hi = np.searchsorted(t_sorted, starts, side="right")
        for inside, cum in zip(sides, cums, strict=True):
            if cum is not None:
                inside[chunk] = cum[hi] - cum[lo]
        np.add.at(cover, lo, 1)
        np.add.at(cover, hi, -1)
    for inside in sides:
        if inside is not none:
            inside[~is_row] = 0
    uncovered = np.cumsum(cover)[:-1] == 0
    return sides[0], sides[1], records[by_time[uncovered]]


class Attributed(Protocol):
    """What the table and tree builders read of a profile (`model.profile.Profile`): its
    events, their attribution and the trace's metadata."""

    @property
    def events(self) -> EventStore: ...

    @property
    def attribution(self) -> Attribution: ...

    @property
    def meta(self) -> TraceMeta: ...
