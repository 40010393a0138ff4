"""Turning decoded trace events into numpy columns, chunk by chunk.

`ColumnBuilder` takes the typed events of one chunk (`kineto_schema.Event`) and appends one
numpy array per field, reading each field in one C-level pass (``map`` + ``attrgetter``) and
reading fields that only some kinds of event carry from those events only. Names,
categories, threads and input shapes are interned as they come. Builders of different parts
of a file are merged with `ColumnBuilder.extend`, and `ColumnBuilder.finish` makes the
`EventStore`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from functools import partial
from itertools import islice
from operator import attrgetter
from typing import Any, TypeVar

import msgspec
import numpy as np

from profsight import json_text
from profsight.knowledge.collectives import COMMUNICATION_NAME
from profsight.knowledge.flop_counters import PRECISION_OPS
from profsight.knowledge.roofline_ops import needs_concrete, needs_types
from profsight.knowledge.trace_schema import (
    LAUNCH_FLOW_CATEGORIES,
    MEMORY_EVENT_NAME,
    OUT_OF_MEMORY_EVENT_NAME,
    EventKind,
    kind_of_category,
    legacy_kind,
)
from profsight.loaders.column_values import (
    ID_TYPES,
    LINKED_LUT,
    STRING_IDS,
    UNFINISHABLE_LUT,
    blocks,
    center,
    concat,
    ids,
    int64,
    nanoseconds,
    narrow,
    norm_id,
    pick,
    plausible,
    subset,
    uniform,
    values,
    with_frames,
)
from profsight.loaders.kineto_comms import comm_columns
from profsight.loaders.kineto_schema import Event
from profsight.model.diagnostics import Diagnostic
from profsight.model.events import EventStore, Flows, Track

T = TypeVar("T")

NOT_OBJECTS = "array elements that are not events (not JSON objects)"

# Chrome-trace phases, coded small so that a chunk's phases fit an int8 array.
_PH_TIMED, _PH_INSTANT, _PH_META, _PH_FLOW_S, _PH_FLOW_F, _PH_BE, _PH_OTHER = range(7)


class _PhaseCodes(dict[str, int]):
    def __missing__(self, key: str) -> int:
        return _PH_OTHER


_PH_CODES = _PhaseCodes(
    {
        "X": _PH_TIMED,
        "i": _PH_INSTANT,
        "I": _PH_INSTANT,
        "M": _PH_META,
        "s": _PH_FLOW_S,
        "f": _PH_FLOW_F,
        "t": _PH_FLOW_F,
        "B": _PH_BE,
        "E": _PH_BE,
    }
)


class _FlowCategories(dict[str, bool]):
    """``launch_flow[cat]``: whether flows of category `cat` link launches to device work
    (`LAUNCH_FLOW_CATEGORIES`), worked out once per distinct category."""

    def __missing__(self, key: str) -> bool:
        value = self[key] = key.lower() in LAUNCH_FLOW_CATEGORIES
        return value


class _Interner(dict[Any, int]):
    """Maps each new key to the next integer id: ``ids[key]`` interns as it looks up."""

    def __missing__(self, key: Any) -> int:
        value = self[key] = len(self)
        return value


_PH = attrgetter("ph")
_TS = attrgetter("ts")
_NAME = attrgetter("name")
_CAT = attrgetter("cat")
_PID_TID = attrgetter("pid", "tid")
_PID = attrgetter("pid")
_TS = attrgetter("ts")
_DUR = attrgetter("dur")
_ARGS = attrgetter("args")
_EXTERNAL_ID = attrgetter("external_id")
_EXTERNAL_ID_V1 = attrgetter("external_id_v1")
_CORRELATION = attrgetter("correlation")
_DEVICE = attrgetter("device")
_STREAM = attrgetter("stream")
_WAIT_STREAM = attrgetter("wait_on_stream")
_WAIT_RECORD = attrgetter("wait_on_record")
_MEM_BYTES = attrgetter("mem_bytes")
_MEM_ADDR = attrgetter("mem_addr")
_COPY_BYTES = attrgetter("copy_bytes")
_MEM_TYPE = attrgetter("mem_device_type")
_TOTAL_ALLOCATED = attrgetter("total_allocated")
_TOTAL_RESERVED = attrgetter("total_reserved")
_FINISHED = attrgetter("finished")
_INPUT_DIMS = attrgetter("input_dims")
_INPUT_DIMS_V1 = attrgetter("input_dims_v1")
_RANK = attrgetter("rank")
_ID = attrgetter("id")
_META = attrgetter("name", "pid", "tid", "args.name", "args.labels")
_CONCRETE = attrgetter("concrete_inputs")
_TYPES = attrgetter("input_type")
_CALL_STACK = attrgetter("call_stack")
_SEQUENCE = attrgetter("sequence_nr")
_FWD_THREAD = attrgetter("fwd_thread")
_UTF8 = partial(str, encoding="utf-8", errors="replace")


class ColumnBuilder(msgspec.Struct):
    """Accumulates the columns of every chunk, and the interning tables they share."""

    strings: _Interner = msgspec.field(default_factory=_Interner)
    raw_tracks: _Interner = msgspec.field(default_factory=_Interner)
    shapes: _Interner = msgspec.field(default_factory=_Interner)
    columns: dict[str, list[np.ndarray[Any, Any]]] = msgspec.field(default_factory=dict)
    flow_columns: dict[str, list[np.ndarray[Any, Any]]] = msgspec.field(default_factory=dict)
    thread_names: dict[tuple[int | str, int | str], str] = msgspec.field(default_factory=dict)
    process_names: dict[int | str, str] = msgspec.field(default_factory=dict)
    skipped: dict[str, int] = msgspec.field(default_factory=dict)
    kind_of_string: list[int] = msgspec.field(default_factory=list)
    """`EventKind` of each interned string, read as a category."""
    is_memory_name: list[bool] = msgspec.field(default_factory=list)
    is_comm_name: list[bool] = msgspec.field(default_factory=list)
    """Whether each interned string names a collective (`COMMUNICATION_NAME`)."""
    keeps_concrete: list[bool] = msgspec.field(default_factory=list)
    """Whether each interned string names an op whose scalar arguments (``Concrete Inputs``:
    stride, padding, is_causal; a reduction's dimensions) are kept, for FLOPs and bytes
    (`roofline_ops.needs_concrete`)."""
    keeps_types: list[bool] = msgspec.field(default_factory=list)
    """Whether each interned string names an op whose ``Input type`` is kept, for the bytes
    it moves (`roofline_ops.needs_types`)."""
    launch_flow: _FlowCategories = msgspec.field(default_factory=lambda: _FlowCategories())
    """Whether each flow category seen links a launch to its device work."""
    chunks: int = 0
    """Chunks added (for `LoadStats`)."""
    lax_events: int = 0
    """Events the typed decoder rejected and Python read one by one (for `LoadStats`)."""

    def intern(self, text: str) -> int:
        return self.strings[text]

    def finish(self, diagnostics: list[Diagnostic]) -> tuple[EventStore, Flows]:
        return _finish(self, diagnostics)

    def extend(self, later: ColumnBuilder) -> None:
        """Append the events of `later`, a builder of the part of the file after this one's."""

        def lut(table: _Interner, theirs: _Interner) -> np.ndarray[Any, Any]:
            return np.array([table[key] for key in theirs] or [0], np.int32)

        strings = lut(self.strings, later.strings)
        tracks = lut(self.raw_tracks, later.raw_tracks)
        shapes = lut(self.shapes, later.shapes)

        def remap(key: str, ids: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
            if key in ("concrete", "types", "stack", "collective", "process_group"):
                return np.where(ids >= 0, np.take(strings, np.maximum(ids, 0)), -1)
            if key in ("name", "cat"):
                return np.take(strings, ids)
            if key == "track":
                return np.take(tracks, ids)
            if key == "shapes":
                return np.where(ids >= 0, shapes[np.maximum(ids, 0)], -1)
            return ids

        for key, parts in later.columns.items():
            self.columns.setdefault(key, []).extend(remap(key, p) for p in parts)
        for key, parts in later.flow_columns.items():
            fixed = (tracks[p] if key == "track" else p for p in parts)
            self.flow_columns.setdefault(key, []).extend(fixed)
        for thread, name in later.thread_names.items():
            self.thread_names.setdefault(thread, name)
        for pid, name in later.process_names.items():
            self.process_names.setdefault(pid, name)
        for what, n in later.skipped.items():
            self.count_skipped(what, n)
        self.chunks += later.chunks
        self.lax_events += later.lax_events

    def add(self, target: dict[str, list[np.ndarray[Any, Any]]], **cols: Any) -> None:
        for key, value in cols.items():
            target.setdefault(key, []).append(value)

    def count_skipped(self, what: str, n: int) -> None:
        if n:
            self.skipped[what] = self.skipped.get(what, 0) + n

    def add_chunk(self, events: list[Event]) -> None:
        self.chunks += 1
        if not events:
            return
        ph = np.fromiter(map(_PH_CODES.__getitem__, map(_PH, events)), np.int8, len(events))
        timed_mask = ph <= _PH_INSTANT
        ts = np.fromiter(map(_TS, events), np.float64, len(events))
        dur = np.fromiter(map(_DUR, events), np.float64, len(events))
        no_time = ~plausible(ts, center(ts[timed_mask])) & timed_mask
        if no_time.any():
            self.count_skipped("timed events without a timestamp", int(no_time.sum()))
            timed_mask &= ~no_time
        bad_dur = ~plausible(dur, 0.0) & timed_mask
        if bad_dur.any():
            self.count_skipped("timed events with an impossible duration", int(bad_dur.sum()))
            timed_mask &= ~bad_dur
            no_time |= bad_dur
        timed = events if timed_mask.all() else pick(events, np.flatnonzero(timed_mask))
        self._add_timed(timed, ph[timed_mask] == _PH_INSTANT, ts[timed_mask], dur[timed_mask])
        if not timed_mask.all():
            rest = np.flatnonzero(~timed_mask & ~no_time)
            self._add_other(pick(events, rest), ph[rest])

    def _kinds(
        self, cat: np.ndarray[Any, Any], name: np.ndarray[Any, Any], instant: np.ndarray[Any, Any]
    ) -> np.ndarray[Any, Any]:
        for text in islice(self.strings, len(self.kind_of_string), None):
            self.kind_of_string.append(int(kind_of_category(text)))
            self.is_memory_name.append(text in (MEMORY_EVENT_NAME, OUT_OF_MEMORY_EVENT_NAME))
            self.is_comm_name.append(COMMUNICATION_NAME.search(text) is not None)
            self.keeps_concrete.append(needs_concrete(text))
            self.keeps_types.append(needs_types(text))
        kind: np.ndarray[Any, Any] = np.array(self.kind_of_string, np.int8)[cat]
        kind[instant] = EventKind.OTHER
        kind[instant & np.array(self.is_memory_name, bool)[name]] = EventKind.MEMORY
        return kind

    def _legacy_kinds(
        self,
        events: list[Event],
        kind: np.ndarray[Any, Any],
        cat: np.ndarray[Any, Any],
        instant: np.ndarray[Any, Any],
    ) -> None:
        """Events without a ``cat``: the legacy exporter's, known by their process
        (`LEGACY_PROCESS_KINDS`); a Kineto trace's own uncategorised events stay OTHER."""
        bare = np.flatnonzero((cat == self.strings[""]) & ~instant & (kind == EventKind.OTHER))
        if len(bare):
            pids = map(_PID, pick(events, bare))
            kind[bare] = np.fromiter(map(legacy_kind, pids), np.int8, len(bare))

    def _add_timed(
        self,
        events: list[Event],
        instant: np.ndarray[Any, Any],
        ts: np.ndarray[Any, Any],
        dur: np.ndarray[Any, Any],
    ) -> None:
        # One C-level pass per column (map + attrgetter), no Python frame per event; fields
        # that only some kinds carry are read from those events only.
        n = len(events)
        if n == 0:
            return
        strings = self.strings.__getitem__
        name = np.fromiter(map(strings, map(_NAME, events)), np.int32, n)
        cat = np.fromiter(map(strings, map(_CAT, events)), np.int32, n)
        kind = self._kinds(cat, name, instant)
        self._legacy_kinds(events, kind, cat, instant)
        args = list(map(_ARGS, events))
        ext = int64(list(map(_EXTERNAL_ID, args)))
        no_ext = np.flatnonzero(ext < 0)  # torch 1.8/1.9 device events: "external id"
        ext[no_ext] = values(args, no_ext, _EXTERNAL_ID_V1)
        hosts = np.flatnonzero(UNFINISHABLE_LUT[kind])
        linked = np.flatnonzero(LINKED_LUT[kind])
        memory = np.flatnonzero(kind == EventKind.MEMORY)
        syncs = np.flatnonzero(kind == EventKind.SYNC)
        ops = np.flatnonzero(kind == EventKind.CPU_OP)
        comm = np.flatnonzero(np.array(self.is_comm_name, bool)[name])
        comm_bytes, collective, group, process_group = comm_columns(
            args, comm, n, self.strings.__getitem__
        )
        stack = self._stacks(args, hosts, n)
        counted = np.flatnonzero(kind == EventKind.COUNTERS)
        self.add(
            self.columns,
            kind=kind,
            name=name,
            cat=cat,
            track=np.fromiter(
                map(self.raw_tracks.__getitem__, self._keys(events, args)), np.int32, n
            ),
            ts=ts,
            dur=dur,
            ext=ext,
            unfinished=subset(args, hosts, _FINISHED, n, 1) == 0,
            corr=subset(args, linked, _CORRELATION, n, -1),
            device=subset(args, linked, _DEVICE, n, -1).astype(np.int32),
            stream=subset(args, linked, _STREAM, n, -1),
            wait_stream=subset(args, syncs, _WAIT_STREAM, n, -1),
            wait_record=subset(args, syncs, _WAIT_RECORD, n, -1),
            nbytes=subset(args, linked, _COPY_BYTES, n, 0) + subset(args, memory, _MEM_BYTES, n, 0),
            mem_type=subset(args, memory, _MEM_TYPE, n, -1).astype(np.int8),
            allocated=subset(args, memory, _TOTAL_ALLOCATED, n, -1),
            addr=subset(args, memory, _MEM_ADDR, n, -1),
            reserved=subset(args, memory, _TOTAL_RESERVED, n, -1),
            shapes=self._shapes(pick(args, ops), ops, n),
            concrete=self._text(
                args, ops[np.array(self.keeps_concrete, bool)[name[ops]]], n, _CONCRETE
            ),
            types=self._text(args, ops[np.array(self.keeps_types, bool)[name[ops]]], n, _TYPES),
            stack=stack,
            # what gives the backward its forward op's stack (`_finish` drops it in a trace
            # without Python frames)
            sequence=narrow(subset(args, ops, _SEQUENCE, n, -1), (np.int32,)),
            fwd_thread=narrow(subset(args, ops, _FWD_THREAD, n, -1), (np.int16,)),
            comm_bytes=comm_bytes,
            collective=collective,
            group=group,
            process_group=process_group,
            **{
                f"flops_{precision}": _counter_flops(args, counted, ops_, n)
                for precision, ops_ in PRECISION_OPS.items()
            },
        )

    def _text(
        self, args: list[Any], where: np.ndarray[Any, Any], n: int, get: attrgetter[Any]
    ) -> np.ndarray[Any, Any]:
        """An argument (``Concrete Inputs``, ``Input type``), interned as text, of the ops
        at `where` (the ones whose FLOPs or bytes need it)."""
        out = np.full(n, -1, np.int32)
        if len(where):
            raw = map(bytes, map(get, pick(args, where)))
            text = map(_UTF8, raw)
            out[where] = np.fromiter(map(self.strings.__getitem__, text), np.int32, len(where))
        return out

    def _stacks(self, args: list[Any], hosts: np.ndarray[Any, Any], n: int) -> np.ndarray[Any, Any]:
        """Each host event's ``Call stack`` (interned text), -1 where it has none."""
        out = np.full(n, -1, np.int32)
        if not len(hosts):
            return out
        texts = list(map(_CALL_STACK, pick(args, hosts)))
        has = np.fromiter(map(bool, texts), bool, len(texts))
        if has.any():
            where = np.flatnonzero(has)
            kept = pick(texts, where)
            out[hosts[where]] = np.fromiter(
                map(self.strings.__getitem__, kept), np.int32, len(kept)
            )
        return out

    def _shapes(self, args: list[Any], where: np.ndarray[Any, Any], n: int) -> np.ndarray[Any, Any]:
        """Interned ``Input Dims`` per event (-1 where absent); raw JSON until `_finish`.

        Events without dims intern ``b""``, which `_finish` turns into -1.
        """
        out = np.full(n, -1, np.int32)
        intern = self.shapes.__getitem__
        for get in (_INPUT_DIMS, _INPUT_DIMS_V1):
            ids = np.fromiter(map(intern, map(bytes, map(get, args))), np.int32, len(args))
            if np.any(ids != self.shapes[b""]):
                out[where] = ids
                return out
        return out

    def _keys(self, events: list[Event], args: list[Any]) -> Iterable[tuple[Any, Any]]:
        """Each event's (pid, tid). In a merged job trace whose events carry ``args.rank``,
        the pid is the rank's own (ranks on different hosts can share pids), named
        ``rank N`` for `model.ranks`."""
        keys = map(_PID_TID, events)
        ranks = np.fromiter(map(_RANK, args), np.int64, len(args))
        if not (ranks >= 0).any():
            return keys
        return [
            (self._rank_pid(pid, r), tid) if r >= 0 else (pid, tid)
            for (pid, tid), r in zip(keys, ranks.tolist(), strict=True)
        ]

    def _rank_pid(self, pid: int | str, rank: int) -> str:
        key = f"rank {rank} pid {pid}"
        self.process_names.setdefault(key, f"rank {rank}")
        return key

    def _add_other(self, events: list[Event], ph: np.ndarray[Any, Any]) -> None:
        """Metadata, flows and events profsight does not read: the flows (two per launch)
        column by column, like the timed events; metadata once per distinct event (some
        exporters repeat each thread's names tens of thousands of times)."""
        meta = list(map(_META, pick(events, np.flatnonzero(ph == _PH_META))))
        for name, pid, _, text, labels in dict.fromkeys(meta):
            if name == "process_name" and text:
                self.process_names.setdefault(norm_id(pid), text)
            elif name == "process_labels" and labels:
                pid = norm_id(pid)
                known = self.process_names.get(pid, "")
                if labels not in known.split(" "):
                    self.process_names[pid] = f"{known} {labels}".strip()
        latest: dict[tuple[int | str, int | str], str] = {}  # the last one written wins
        for name, pid, tid, text, _ in dict.fromkeys(reversed(meta)):
            if name == "thread_name" and text:
                latest.setdefault((norm_id(pid), norm_id(tid)), text)
        self.thread_names.update(latest)
        self.count_skipped(
            "begin/end ('B'/'E') events, which profsight does not pair",
            int(np.count_nonzero(ph == _PH_BE)),
        )
        odd = np.flatnonzero(ph == _PH_OTHER)
        for phase, n in Counter(map(_PH, map(events.__getitem__, odd.tolist()))).items():
            what = f"events of phase {phase!r}" if phase else "events without a phase"
            self.count_skipped(what, n)
        where = np.flatnonzero((ph == _PH_FLOW_S) | (ph == _PH_FLOW_F))
        if len(where):
            self._add_flows(pick(events, where), ph[where] == _PH_FLOW_S)

    def _add_flows(self, flows: list[Event], is_start: np.ndarray[Any, Any]) -> None:
        n = len(flows)
        launch = np.fromiter(map(self.launch_flow.__getitem__, map(_CAT, flows)), bool, n)
        ts = np.fromiter(map(_TS, flows), np.float64, n)
        fid, numeric = ids(list(map(_ID, flows)))
        no_time = launch & np.isnan(ts)
        self.count_skipped("flow events without a timestamp", int(no_time.sum()))
        no_id = launch & ~no_time & ~numeric
        self.count_skipped("flow events with a non-numeric id", int(no_id.sum()))
        keep = np.flatnonzero(launch & ~no_time & numeric)
        if not len(keep):
            return
        kept = pick(flows, keep)
        args = list(map(_ARGS, kept))
        self.add(
            self.flow_columns,
            flow_id=fid[keep],
            is_start=is_start[keep],
            track=np.fromiter(map(self.raw_tracks.__getitem__, self._keys(kept, args)), np.int32),
            ts=ts[keep],
        )


def _counter_flops(
    args: list[Any], where: np.ndarray[Any, Any], ops: tuple[tuple[str, int], ...], n: int
) -> np.ndarray[Any, Any]:
    """FLOPs of one precision that CUPTI's range profiler counted in each kernel at `where`:
    each instruction's count times the FLOPs it does (`knowledge.flop_counters`); 0
    elsewhere."""
    out = np.zeros(n, np.float64)
    if len(where):
        kept = pick(args, where)
        for op, flops in ops:
            out[where] += flops * np.fromiter(map(attrgetter(op), kept), np.float64, len(kept))
    return out


def _finish(builder: ColumnBuilder, diagnostics: list[Diagnostic]) -> tuple[EventStore, Flows]:
    """The `EventStore` and `Flows` of everything added to `builder` (whose columns are
    consumed: each is freed as soon as it is joined, so the peak is one column's copy)."""
    cols = builder.columns
    ts = concat(cols.pop("ts", None), np.float64)
    flow_ts = concat(builder.flow_columns.pop("ts", None), np.float64)
    origin = math.floor(float(ts.min())) if len(ts) else 0.0
    start = nanoseconds(ts, origin)
    del ts
    dur = nanoseconds(concat(cols.pop("dur", None), np.float64), 0.0)
    bad_dur = dur < 0
    if bad_dur.any():
        n = int(bad_dur.sum())
        diagnostics.append(
            Diagnostic(
                "negative_duration", f"{n} events had a negative duration, set to 0", count=n
            )
        )
        dur[bad_dur] = 0
    track_remap, tracks = _tracks(builder)
    raw_track = concat(cols.pop("track", None), np.int32)
    cat = concat(cols.pop("cat", None), np.int32)
    name = concat(cols.pop("name", None), np.int32)
    kind = concat(cols.pop("kind", None), np.int8)
    shapes = concat(cols.pop("shapes", None), np.int32)
    shape_ids = np.array(
        [builder.intern(_torch_shapes(raw)) if raw else -1 for raw in builder.shapes] or [0],
        np.int32,
    )
    stack_col = concat(cols.pop("stack", None), np.int32)
    store = EventStore(
        kind=kind,
        name=name,
        track=narrow(track_remap[raw_track] if len(raw_track) else raw_track),
        start=start,
        dur=dur,
        external_id=narrow(concat(cols.pop("ext", None), np.int64), ID_TYPES),
        correlation=uniform(narrow(concat(cols.pop("corr", None), np.int64), ID_TYPES)),
        device=uniform(concat(cols.pop("device", None), np.int32)),
        stream=uniform(concat(cols.pop("stream", None), np.int64)),
        shapes=uniform(
            np.where(shapes >= 0, shape_ids[np.maximum(shapes, 0)], -1).astype(np.int32)
        ),
        # (ids of events without dims map to -1 through shape_ids)
        nbytes=uniform(concat(cols.pop("nbytes", None), np.int64)),
        mem_device_type=uniform(concat(cols.pop("mem_type", None), np.int8)),
        unfinished=uniform(concat(cols.pop("unfinished", None), bool)),
        allocated=uniform(concat(cols.pop("allocated", None), np.int64)),
        reserved=uniform(concat(cols.pop("reserved", None), np.int64)),
        concrete=uniform(narrow(concat(cols.pop("concrete", None), np.int32), STRING_IDS)),
        block=blocks(concat(cols.pop("addr", None), np.int64)),
        types=uniform(narrow(concat(cols.pop("types", None), np.int32), STRING_IDS)),
        stack=uniform(narrow(stack_col, STRING_IDS)),
        sequence=with_frames(kind, stack_col, cols.pop("sequence", None), np.int16, np.int32),
        fwd_thread=with_frames(kind, stack_col, cols.pop("fwd_thread", None), np.int8, np.int16),
        comm_bytes=uniform(concat(cols.pop("comm_bytes", None), np.int64)),
        collective=uniform(concat(cols.pop("collective", None), np.int32)),
        group_size=uniform(concat(cols.pop("group", None), np.int32)),
        process_group=uniform(concat(cols.pop("process_group", None), np.int32)),
        wait_stream=uniform(concat(cols.pop("wait_stream", None), np.int64)),
        wait_record=uniform(narrow(concat(cols.pop("wait_record", None), np.int64), ID_TYPES)),
        measured_flops_half=uniform(concat(cols.pop("flops_half", None), np.float64)),
        measured_flops_single=uniform(concat(cols.pop("flops_single", None), np.float64)),
        measured_flops_double=uniform(concat(cols.pop("flops_double", None), np.float64)),
        strings=list(builder.strings),
        tracks=tracks,
        origin_us=origin,
        category=narrow(cat),
    )
    flow_track = concat(builder.flow_columns.pop("track", None), np.int32)
    flows = Flows(
        flow_id=concat(builder.flow_columns.pop("flow_id", None), np.int64),
        is_start=concat(builder.flow_columns.pop("is_start", None), bool),
        track=track_remap[flow_track] if len(flow_track) else flow_track,
        # an absurd flow time is clipped, not cast past int64: it then matches nothing
        start=np.rint(np.clip(flow_ts - origin, -9e15, 9e15) * 1000.0).astype(np.int64),
    )
    return store, flows


def _tracks(builder: ColumnBuilder) -> tuple[np.ndarray[Any, Any], list[Track]]:
    """Merge raw (pid, tid) pairs that differ only in spelling; name them from metadata."""
    index: dict[tuple[int | str, int | str], int] = {}
    remap = np.zeros(max(len(builder.raw_tracks), 1), np.int32)
    tracks: list[Track] = []
    for (pid, tid), raw_id in builder.raw_tracks.items():
        key = (norm_id(pid), norm_id(tid))
        if key not in index:
            index[key] = len(tracks)
            name = builder.thread_names.get(key) or builder.process_names.get(key[0], "")
            tracks.append(Track(key[0], key[1], name))
        remap[raw_id] = index[key]
    return remap, tracks


def _torch_shapes(raw: bytes) -> str:
    """``Input Dims`` JSON as torch prints ``input_shapes`` (``[[4, 3], []]``).

    torch's ``input_shapes`` keep the dims of tensor arguments only: a tensor list (whose
    ``Input Dims`` entry is a list of lists) shows as ``[]``.
    """
    try:
        dims = json_text.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")
    if not isinstance(dims, list):
        return str(dims)
    return str(
        [d if isinstance(d, list) and all(isinstance(x, int) for x in d) else [] for d in dims]
    )
