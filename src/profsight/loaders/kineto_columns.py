"""Turning decoded trace events into numpy columns, chunk by chunk.

`ColumnBuilder` takes the typed events of one chunk (`kineto_schema.Event`) and appends one
numpy array per field, reading each field in one C-level pass (``map`` + ``attrgetter``) and
reading fields that only some kinds of event carry from those events only. Names,
categories, threads and input shapes are interned as they come. Builders of different parts
of a file are merged with `ColumnBuilder.extend`, and `ColumnBuilder.finish` makes the
`EventStore`.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from operator import attrgetter
from typing import Any, TypeVar

import numpy as np

from profsight.knowledge.collectives import COMMUNICATION_NAME
from profsight.knowledge.roofline_ops import needs_concrete, needs_types
from profsight.knowledge.trace_schema import (
    DEVICE_ROW_KINDS,
    LAUNCH_FLOW_CATEGORIES,
    LAUNCH_KINDS,
    MEMORY_EVENT_NAME,
    OUT_OF_MEMORY_EVENT_NAME,
    EventKind,
    kind_of_category,
    legacy_kind,
)
from profsight.loaders.kineto_comms import comm_columns
from profsight.loaders.kineto_schema import Event
from profsight.malloc_trim import release_free_memory
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


@dataclass
class ColumnBuilder:
    """Accumulates the columns of every chunk, and the interning tables they share."""

    strings: _Interner = field(default_factory=_Interner)
    raw_tracks: _Interner = field(default_factory=_Interner)
    shapes: _Interner = field(default_factory=_Interner)
    columns: dict[str, list[np.ndarray[Any, Any]]] = field(default_factory=dict)
    flow_columns: dict[str, list[np.ndarray[Any, Any]]] = field(default_factory=dict)
    thread_names: dict[tuple[int | str, int | str], str] = field(default_factory=dict)
    process_names: dict[int | str, str] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    kind_of_string: list[int] = field(default_factory=list)
    """`EventKind` of each interned string, read as a category."""
    is_memory_name: list[bool] = field(default_factory=list)
    is_comm_name: list[bool] = field(default_factory=list)
    """Whether each interned string names a collective (`COMMUNICATION_NAME`)."""
    keeps_concrete: list[bool] = field(default_factory=list)
    """Whether each interned string names an op whose scalar arguments (``Concrete Inputs``:
    stride, padding, is_causal; a reduction's dimensions) are kept, for FLOPs and bytes
    (`roofline_ops.needs_concrete`)."""
    keeps_types: list[bool] = field(default_factory=list)
    """Whether each interned string names an op whose ``Input type`` is kept, for the bytes
    it moves (`roofline_ops.needs_types`)."""
    launch_flow: _FlowCategories = field(default_factory=lambda: _FlowCategories())
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
        no_time = ~_plausible(ts, _center(ts[timed_mask])) & timed_mask
        if no_time.any():
            self.count_skipped("timed events without a timestamp", int(no_time.sum()))
            timed_mask &= ~no_time
        bad_dur = ~_plausible(dur, 0.0) & timed_mask
        if bad_dur.any():
            self.count_skipped("timed events with an impossible duration", int(bad_dur.sum()))
            timed_mask &= ~bad_dur
            no_time |= bad_dur
        timed = events if timed_mask.all() else _pick(events, np.flatnonzero(timed_mask))
        self._add_timed(timed, ph[timed_mask] == _PH_INSTANT, ts[timed_mask], dur[timed_mask])
        if not timed_mask.all():
            rest = np.flatnonzero(~timed_mask & ~no_time)
            self._add_other(_pick(events, rest), ph[rest])

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
            pids = map(_PID, _pick(events, bare))
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
        ext = _int64(list(map(_EXTERNAL_ID, args)))
        no_ext = np.flatnonzero(ext < 0)  # torch 1.8/1.9 device events: "external id"
        ext[no_ext] = _values(args, no_ext, _EXTERNAL_ID_V1)
        hosts = np.flatnonzero(_UNFINISHABLE_LUT[kind])
        linked = np.flatnonzero(_LINKED_LUT[kind])
        memory = np.flatnonzero(kind == EventKind.MEMORY)
        syncs = np.flatnonzero(kind == EventKind.SYNC)
        ops = np.flatnonzero(kind == EventKind.CPU_OP)
        comm = np.flatnonzero(np.array(self.is_comm_name, bool)[name])
        comm_bytes, collective, group, process_group = comm_columns(
            args, comm, n, self.strings.__getitem__
        )
        stack = self._stacks(args, hosts, n)
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
            unfinished=_subset(args, hosts, _FINISHED, n, 1) == 0,
            corr=_subset(args, linked, _CORRELATION, n, -1),
            device=_subset(args, linked, _DEVICE, n, -1).astype(np.int32),
            stream=_subset(args, linked, _STREAM, n, -1),
            wait_stream=_subset(args, syncs, _WAIT_STREAM, n, -1),
            wait_record=_subset(args, syncs, _WAIT_RECORD, n, -1),
            nbytes=_subset(args, linked, _COPY_BYTES, n, 0)
            + _subset(args, memory, _MEM_BYTES, n, 0),
            mem_type=_subset(args, memory, _MEM_TYPE, n, -1).astype(np.int8),
            allocated=_subset(args, memory, _TOTAL_ALLOCATED, n, -1),
            addr=_subset(args, memory, _MEM_ADDR, n, -1),
            reserved=_subset(args, memory, _TOTAL_RESERVED, n, -1),
            shapes=self._shapes(_pick(args, ops), ops, n),
            concrete=self._text(
                args, ops[np.array(self.keeps_concrete, bool)[name[ops]]], n, _CONCRETE
            ),
            types=self._text(args, ops[np.array(self.keeps_types, bool)[name[ops]]], n, _TYPES),
            stack=stack,
            # what gives the backward its forward op's stack (`_finish` drops it in a trace
            # without Python frames)
            sequence=_narrow(_subset(args, ops, _SEQUENCE, n, -1), (np.int32,)),
            fwd_thread=_narrow(_subset(args, ops, _FWD_THREAD, n, -1), (np.int16,)),
            comm_bytes=comm_bytes,
            collective=collective,
            group=group,
            process_group=process_group,
        )

    def _text(
        self, args: list[Any], where: np.ndarray[Any, Any], n: int, get: attrgetter[Any]
    ) -> np.ndarray[Any, Any]:
        """An argument (``Concrete Inputs``, ``Input type``), interned as text, of the ops
        at `where` (the ones whose FLOPs or bytes need it)."""
        out = np.full(n, -1, np.int32)
        if len(where):
            raw = map(bytes, map(get, _pick(args, where)))
            text = map(_UTF8, raw)
            out[where] = np.fromiter(map(self.strings.__getitem__, text), np.int32, len(where))
        return out

    def _stacks(self, args: list[Any], hosts: np.ndarray[Any, Any], n: int) -> np.ndarray[Any, Any]:
        """Each host event's ``Call stack`` (interned text), -1 where it has none."""
        out = np.full(n, -1, np.int32)
        if not len(hosts):
            return out
        texts = list(map(_CALL_STACK, _pick(args, hosts)))
        has = np.fromiter(map(bool, texts), bool, len(texts))
        if has.any():
            where = np.flatnonzero(has)
            kept = _pick(texts, where)
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
        meta = list(map(_META, _pick(events, np.flatnonzero(ph == _PH_META))))
        for name, pid, _, text, labels in dict.fromkeys(meta):
            if name == "process_name" and text:
                self.process_names.setdefault(_norm_id(pid), text)
            elif name == "process_labels" and labels:
                pid = _norm_id(pid)
                known = self.process_names.get(pid, "")
                if labels not in known.split(" "):
                    self.process_names[pid] = f"{known} {labels}".strip()
        latest: dict[tuple[int | str, int | str], str] = {}  # the last one written wins
        for name, pid, tid, text, _ in dict.fromkeys(reversed(meta)):
            if name == "thread_name" and text:
                latest.setdefault((_norm_id(pid), _norm_id(tid)), text)
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
            self._add_flows(_pick(events, where), ph[where] == _PH_FLOW_S)

    def _add_flows(self, flows: list[Event], is_start: np.ndarray[Any, Any]) -> None:
        n = len(flows)
        launch = np.fromiter(map(self.launch_flow.__getitem__, map(_CAT, flows)), bool, n)
        ts = np.fromiter(map(_TS, flows), np.float64, n)
        fid, numeric = _ids(list(map(_ID, flows)))
        no_time = launch & np.isnan(ts)
        self.count_skipped("flow events without a timestamp", int(no_time.sum()))
        no_id = launch & ~no_time & ~numeric
        self.count_skipped("flow events with a non-numeric id", int(no_id.sum()))
        keep = np.flatnonzero(launch & ~no_time & numeric)
        if not len(keep):
            return
        kept = _pick(flows, keep)
        args = list(map(_ARGS, kept))
        self.add(
            self.flow_columns,
            flow_id=fid[keep],
            is_start=is_start[keep],
            track=np.fromiter(map(self.raw_tracks.__getitem__, self._keys(kept, args)), np.int32),
            ts=ts[keep],
        )


#: Kinds whose args carry correlation, device, stream and copy sizes.
_LINKED_LUT = np.zeros(len(EventKind), bool)
for _kind in (*LAUNCH_KINDS, *DEVICE_ROW_KINDS, EventKind.SYNC):
    _LINKED_LUT[int(_kind)] = True


#: Kinds whose ranges can be left open when the profiler stops (``"finished": false``).
_UNFINISHABLE_LUT = np.zeros(len(EventKind), bool)
for _kind in (EventKind.CPU_OP, EventKind.ANNOTATION, EventKind.PYTHON):
    _UNFINISHABLE_LUT[int(_kind)] = True


def _pick(items: list[T], where: np.ndarray[Any, Any]) -> list[T]:
    """The items at `where` (a C-level pass, no Python frame per item)."""
    return list(map(items.__getitem__, where.tolist()))


def _values(args: list[Any], where: np.ndarray[Any, Any], get: Any) -> np.ndarray[Any, Any]:
    """One args field (an int) of the events at `where`."""
    items = _pick(args, where)
    try:
        return _int64(list(map(get, items)))
    except (TypeError, ValueError):  # ROCm runtime calls write "stream": "0x0"
        return _int64(list(map(_StreamIds().__getitem__, map(get, items))))


#: Times this far (in µs, 31 years) from the chunk's median timestamp, and durations this
#: long, are corrupt: such events are skipped, so that every start and end, in nanoseconds
#: from the earliest event, fits in int64 (epoch-based µs timestamps are ~1.8e15).
_MAX_SPAN_US = 1e15


def _center(ts: np.ndarray[Any, Any]) -> float:
    finite = ts[np.isfinite(ts)]
    return float(np.median(finite)) if len(finite) else 0.0


def _plausible(values: np.ndarray[Any, Any], center: float) -> np.ndarray[Any, Any]:
    """Within ±`_MAX_SPAN_US` of `center` (NaN, a missing value, is not)."""
    plausible: np.ndarray[Any, Any] = np.abs(values - center) <= _MAX_SPAN_US
    return plausible


def _int64(values: list[int]) -> np.ndarray[Any, Any]:
    """An int64 column; a value beyond int64 (a corrupt id: uint64 up to 2**64 decodes as int)
    becomes -1, "none", rather than an overflow."""
    try:
        return np.fromiter(values, np.int64, len(values))
    except OverflowError:
        return np.array([v if -(2**63) <= v < 2**63 else -1 for v in values], np.int64)


def _subset(
    args: list[Any], where: np.ndarray[Any, Any], get: Any, n: int, default: int
) -> np.ndarray[Any, Any]:
    """Column of one args field, read only at `where` (`default` elsewhere)."""
    out = np.full(n, default, np.int64)
    if len(where):
        out[where] = _values(args, where, get)
    return out


def _ids(values: list[int | str]) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Flow ids as int64, and which were numbers (an int, or a string of one)."""
    try:
        return _int64(values), np.ones(len(values), bool)  # type: ignore[arg-type]
    except (ValueError, TypeError):  # a string that is no decimal number: one by one
        parsed = [_as_int(v) for v in values]
        numeric = np.array([v is not None for v in parsed], bool)
        return _int64([v if v is not None else -1 for v in parsed]), numeric


class _StreamIds(dict[int | str, int]):
    """``ids[value]``: an int field that some events write as a string, as an int (each
    distinct value worked out once)."""

    def __missing__(self, key: int | str) -> int:
        value = self[key] = _stream(key)
        return value


def _stream(value: int | str) -> int:
    if isinstance(value, int):
        return value
    return _as_int(value) or 0


def _as_int(value: int | str) -> int | None:
    if isinstance(value, int):
        return value
    try:
        return int(value, 0)
    except ValueError:
        return None


def _norm_id(value: int | str) -> int | str:
    """pid/tid as int where the trace wrote a number as a string (torch 1.8: ``"tid": "25738"``)."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped.lstrip("-").isdigit():
            return int(stripped)
    return value


def _concat(parts: list[np.ndarray[Any, Any]] | None, dtype: Any) -> np.ndarray[Any, Any]:
    """The parts joined; they are freed and their pages returned to the system at once, so
    that joining every column holds one column twice at most (the parts of a chunk are
    small and live in the heap, where the freed ones stay resident until trimmed)."""
    if not parts:
        return np.zeros(0, dtype)
    joined = np.concatenate(parts).astype(dtype, copy=False)
    parts.clear()
    release_free_memory()
    return joined


#: An id column's narrowest type: ids are counters, so int8/int16 would rarely hold them.
_ID_TYPES = (np.int32,)


def _finish(builder: ColumnBuilder, diagnostics: list[Diagnostic]) -> tuple[EventStore, Flows]:
    """The `EventStore` and `Flows` of everything added to `builder` (whose columns are
    consumed: each is freed as soon as it is joined, so the peak is one column's copy)."""
    cols = builder.columns
    ts = _concat(cols.pop("ts", None), np.float64)
    flow_ts = _concat(builder.flow_columns.pop("ts", None), np.float64)
    origin = math.floor(float(ts.min())) if len(ts) else 0.0
    start = _nanoseconds(ts, origin)
    del ts
    dur = _nanoseconds(_concat(cols.pop("dur", None), np.float64), 0.0)
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
    raw_track = _concat(cols.pop("track", None), np.int32)
    cat = _concat(cols.pop("cat", None), np.int32)
    name = _concat(cols.pop("name", None), np.int32)
    kind = _concat(cols.pop("kind", None), np.int8)
    shapes = _concat(cols.pop("shapes", None), np.int32)
    shape_ids = np.array(
        [builder.intern(_torch_shapes(raw)) if raw else -1 for raw in builder.shapes] or [0],
        np.int32,
    )
    stack_col = _concat(cols.pop("stack", None), np.int32)
    store = EventStore(
        kind=kind,
        name=name,
        track=_narrow(track_remap[raw_track] if len(raw_track) else raw_track),
        start=start,
        dur=dur,
        external_id=_narrow(_concat(cols.pop("ext", None), np.int64), _ID_TYPES),
        correlation=_uniform(_narrow(_concat(cols.pop("corr", None), np.int64), _ID_TYPES)),
        device=_uniform(_concat(cols.pop("device", None), np.int32)),
        stream=_uniform(_concat(cols.pop("stream", None), np.int64)),
        shapes=_uniform(
            np.where(shapes >= 0, shape_ids[np.maximum(shapes, 0)], -1).astype(np.int32)
        ),
        # (ids of events without dims map to -1 through shape_ids)
        nbytes=_uniform(_concat(cols.pop("nbytes", None), np.int64)),
        mem_device_type=_uniform(_concat(cols.pop("mem_type", None), np.int8)),
        unfinished=_uniform(_concat(cols.pop("unfinished", None), bool)),
        allocated=_uniform(_concat(cols.pop("allocated", None), np.int64)),
        reserved=_uniform(_concat(cols.pop("reserved", None), np.int64)),
        concrete=_uniform(_narrow(_concat(cols.pop("concrete", None), np.int32), _STRING_IDS)),
        block=_blocks(_concat(cols.pop("addr", None), np.int64)),
        types=_uniform(_narrow(_concat(cols.pop("types", None), np.int32), _STRING_IDS)),
        stack=_uniform(_narrow(stack_col, _STRING_IDS)),
        sequence=_with_frames(kind, stack_col, cols.pop("sequence", None), np.int16, np.int32),
        fwd_thread=_with_frames(kind, stack_col, cols.pop("fwd_thread", None), np.int8, np.int16),
        comm_bytes=_uniform(_concat(cols.pop("comm_bytes", None), np.int64)),
        collective=_uniform(_concat(cols.pop("collective", None), np.int32)),
        group_size=_uniform(_concat(cols.pop("group", None), np.int32)),
        process_group=_uniform(_concat(cols.pop("process_group", None), np.int32)),
        wait_stream=_uniform(_concat(cols.pop("wait_stream", None), np.int64)),
        wait_record=_uniform(_narrow(_concat(cols.pop("wait_record", None), np.int64), _ID_TYPES)),
        strings=list(builder.strings),
        tracks=tracks,
        origin_us=origin,
        category=_narrow(cat),
    )
    flow_track = _concat(builder.flow_columns.pop("track", None), np.int32)
    flows = Flows(
        flow_id=_concat(builder.flow_columns.pop("flow_id", None), np.int64),
        is_start=_concat(builder.flow_columns.pop("is_start", None), bool),
        track=track_remap[flow_track] if len(flow_track) else flow_track,
        # an absurd flow time is clipped, not cast past int64: it then matches nothing
        start=np.rint(np.clip(flow_ts - origin, -9e15, 9e15) * 1000.0).astype(np.int64),
    )
    return store, flows


def _blocks(addr: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Each ``[memory]`` record's block (its ``Addr``) as a small id, -1 for none: a free
    meets its allocation by it."""
    if not len(addr) or not (addr >= 0).any():
        return _uniform(np.full(len(addr), -1, np.int32))
    out = np.full(len(addr), -1, np.int64)
    known = addr >= 0
    out[known] = np.unique(addr[known], return_inverse=True)[1].reshape(-1)
    return _uniform(_narrow(out, (np.int16, np.int32)))


def _with_frames(
    kind: np.ndarray[Any, Any], stack: np.ndarray[Any, Any], parts: Any, *types: Any
) -> np.ndarray[Any, Any]:
    """A column only a trace with Python frames or call stacks (``with_stack``) needs: the
    autograd link from the backward to the frames of the forward (`model.backward_link`);
    empty in any other trace (a column less of memory for its events)."""
    if not (kind == EventKind.PYTHON).any() and not (stack >= 0).any():
        return np.zeros(0, np.int32)
    return _uniform(_narrow(_concat(parts, np.int64), (*types, np.int64)))


def _uniform(column: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """`column`, or its one value broadcast when every event has the same (a field no event
    carries: device fields in a CPU trace, memory fields without ``profile_memory``). Such a
    column takes no memory per event; like every column, it is read-only."""
    if len(column) < 2 or not (column == column[0]).all():
        return column
    return np.broadcast_to(column[:1].copy(), column.shape)


#: String ids of the columns only some ops fill (``Concrete Inputs``, ``Input type``,
#: ``Call stack``): int16 while the trace has fewer than 32,768 distinct strings.
_STRING_IDS = (np.int16, np.int32)


def _narrow(column: np.ndarray[Any, Any], types: tuple[Any, ...] = (np.int8, np.int16)) -> Any:
    """A column of indices or ids in the first of `types` that holds every value, else as it
    is: tracks and categories (a few hundred values) in int8/int16; ids (only ever compared,
    never added) in int32. A 10 GB trace saves 26 MB per byte per event."""
    if not len(column):
        return column
    low, high = int(column.min()), int(column.max())
    for dtype in types:
        info = np.iinfo(dtype)
        if info.min <= low and high <= info.max:
            return column.astype(dtype)
    return column


def _nanoseconds(us: np.ndarray[Any, Any], origin: float) -> np.ndarray[Any, Any]:
    """Microseconds after `origin` as integer nanoseconds, computed in place in `us`."""
    np.subtract(us, origin, out=us)
    np.multiply(us, 1000.0, out=us)
    np.rint(us, out=us)
    return us.astype(np.int64)


def _tracks(builder: ColumnBuilder) -> tuple[np.ndarray[Any, Any], list[Track]]:
    """Merge raw (pid, tid) pairs that differ only in spelling; name them from metadata."""
    index: dict[tuple[int | str, int | str], int] = {}
    remap = np.zeros(max(len(builder.raw_tracks), 1), np.int32)
    tracks: list[Track] = []
    for (pid, tid), raw_id in builder.raw_tracks.items():
        key = (_norm_id(pid), _norm_id(tid))
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
        dims = json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")
    if not isinstance(dims, list):
        return str(dims)
    return str(
        [d if isinstance(d, list) and all(isinstance(x, int) for x in d) else [] for d in dims]
    )
