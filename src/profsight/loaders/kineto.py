"""Loader for Kineto / Chrome trace files (``*.pt.trace.json[.gz]``), every torch version.

The event array is decoded chunk by chunk into typed structs (`kineto_schema.Event`), and
each chunk is turned into numpy columns at once, so no per-event Python object outlives
its chunk. See `json_split` for how chunks are cut and how a truncated file is salvaged.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

import msgspec
import numpy as np

from profsight.errors import InputError
from profsight.knowledge.trace_schema import (
    LAUNCH_FLOW_CATEGORIES,
    MEMORY_EVENT_NAME,
    OUT_OF_MEMORY_EVENT_NAME,
    EventKind,
    kind_of_category,
)
from profsight.loaders import json_split
from profsight.loaders.kineto_schema import (
    ANY_DECODER,
    EVENTS_DECODER,
    Event,
    event_from_object,
)
from profsight.loaders.progress import Progress, no_progress
from profsight.loaders.reading import RawInput
from profsight.model.diagnostics import Diagnostic, Level
from profsight.model.events import EventStore, Flows, Track
from profsight.model.profile import Profile, TraceMeta

CHUNK_BYTES = 8 << 20
#: Event boundaries tried from the end of a cut-off chunk before it is judged malformed.
_SALVAGE_TRIES = 64
_NOT_OBJECTS = "array elements that are not events (not JSON objects)"

# Chrome-trace phases, coded small so that a chunk's phases fit an int8 array.
_PH_TIMED, _PH_INSTANT, _PH_META, _PH_FLOW_S, _PH_FLOW_F, _PH_BE, _PH_OTHER = range(7)
_PH_CODES = {
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


@dataclass
class _Builder:
    """Accumulates the columns of every chunk, and the interning tables they share."""

    strings: dict[str, int] = field(default_factory=dict)
    raw_tracks: dict[tuple[int | str, int | str], int] = field(default_factory=dict)
    shapes: dict[bytes, int] = field(default_factory=dict)
    columns: dict[str, list[np.ndarray[Any, Any]]] = field(default_factory=dict)
    flow_columns: dict[str, list[np.ndarray[Any, Any]]] = field(default_factory=dict)
    thread_names: dict[tuple[int | str, int | str], str] = field(default_factory=dict)
    process_names: dict[int | str, str] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)

    def intern(self, text: str) -> int:
        return self.strings.setdefault(text, len(self.strings))

    def add(self, target: dict[str, list[np.ndarray[Any, Any]]], **cols: Any) -> None:
        for key, value in cols.items():
            target.setdefault(key, []).append(value)

    def count_skipped(self, what: str, n: int) -> None:
        if n:
            self.skipped[what] = self.skipped.get(what, 0) + n

    def add_chunk(self, events: list[Event]) -> None:
        if not events:
            return
        ph = np.array([_PH_CODES.get(e.ph, _PH_OTHER) for e in events], dtype=np.int8)
        timed_mask = ph <= _PH_INSTANT
        timed = events if timed_mask.all() else [events[i] for i in np.flatnonzero(timed_mask)]
        self._add_timed(timed, ph[timed_mask] == _PH_INSTANT)
        if not timed_mask.all():
            rest = np.flatnonzero(~timed_mask)
            self._add_other([events[i] for i in rest], ph[rest])

    def _add_timed(self, events: list[Event], instant: np.ndarray[Any, Any]) -> None:
        n = len(events)
        if n == 0:
            return
        intern = self.strings.setdefault
        strings = self.strings
        name = np.array([intern(e.name, len(strings)) for e in events], dtype=np.int32)
        cat = np.array([intern(e.cat, len(strings)) for e in events], dtype=np.int32)
        tracks = self.raw_tracks
        track = np.array(
            [tracks.setdefault((e.pid, e.tid), len(tracks)) for e in events], dtype=np.int32
        )
        ts = np.fromiter((e.ts for e in events), np.float64, n)
        dur = np.fromiter((e.dur for e in events), np.float64, n)
        args = [e.args for e in events]
        ext = np.fromiter((a.external_id for a in args), np.int64, n)
        ext_v1 = np.fromiter((a.external_id_v1 for a in args), np.int64, n)
        ext = np.where(ext >= 0, ext, ext_v1)
        corr = np.fromiter((a.correlation for a in args), np.int64, n)
        device = np.fromiter((a.device for a in args), np.int64, n).astype(np.int32)
        stream = np.fromiter((_stream(a.stream) for a in args), np.int64, n)
        mem_bytes = np.fromiter((a.mem_bytes for a in args), np.int64, n)
        copy_bytes = np.fromiter((a.copy_bytes for a in args), np.int64, n)
        mem_type = np.fromiter((a.mem_device_type for a in args), np.int64, n).astype(np.int8)
        unfinished = ~np.fromiter((a.finished for a in args), bool, n)
        shapes_tab = self.shapes
        shapes = np.array(
            [
                shapes_tab.setdefault(bytes(r), len(shapes_tab)) if len(r) else -1
                for r in (a.input_dims if len(a.input_dims) else a.input_dims_v1 for a in args)
            ],
            dtype=np.int32,
        )
        self.add(
            self.columns,
            name=name,
            cat=cat,
            track=track,
            ts=ts,
            dur=dur,
            instant=instant,
            ext=ext,
            corr=corr,
            device=device,
            stream=stream,
            nbytes=np.where(mem_bytes != 0, mem_bytes, copy_bytes),
            mem_type=mem_type,
            unfinished=unfinished,
            shapes=shapes,
        )

    def _add_other(self, events: list[Event], ph: np.ndarray[Any, Any]) -> None:
        flows: list[tuple[int, bool, int, float]] = []
        tracks = self.raw_tracks
        for e, code in zip(events, ph.tolist(), strict=True):
            if code == _PH_META:
                self._add_metadata(e)
            elif code in (_PH_FLOW_S, _PH_FLOW_F):
                if e.cat.lower() not in LAUNCH_FLOW_CATEGORIES:
                    continue
                fid = _as_int(e.id)
                if fid is None:
                    self.count_skipped("flow events with a non-numeric id", 1)
                    continue
                track = tracks.setdefault((e.pid, e.tid), len(tracks))
                flows.append((fid, code == _PH_FLOW_S, track, e.ts))
            elif code == _PH_BE:
                self.count_skipped("begin/end ('B'/'E') events, which profsight does not pair", 1)
            else:
                self.count_skipped(f"events of phase {e.ph!r}", 1)
        if flows:
            self.add(
                self.flow_columns,
                flow_id=np.array([f[0] for f in flows], np.int64),
                is_start=np.array([f[1] for f in flows], bool),
                track=np.array([f[2] for f in flows], np.int32),
                ts=np.array([f[3] for f in flows], np.float64),
            )

    def _add_metadata(self, e: Event) -> None:
        if e.name == "thread_name" and e.args.name:
            self.thread_names[(_norm_id(e.pid), _norm_id(e.tid))] = e.args.name
        elif e.name == "process_name" and e.args.name:
            self.process_names.setdefault(_norm_id(e.pid), e.args.name)
        elif e.name == "process_labels" and e.args.labels:
            pid = _norm_id(e.pid)
            self.process_names[pid] = f"{self.process_names.get(pid, '')} {e.args.labels}".strip()


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


def load_kineto(raw: RawInput, source: str, progress: Progress = no_progress) -> Profile:
    """Decode a Chrome trace held in `raw` into a `Profile`."""
    buf = raw.data
    try:
        layout = json_split.locate_events(buf)
    except json_split.NotATrace as exc:
        raise InputError(source, f"not a PyTorch profiler trace: {exc}") from None
    diagnostics: list[Diagnostic] = []
    builder = _Builder()
    total = max(len(buf) - layout.events_start, 1)
    spans = list(json_split.iter_chunks(buf, layout.events_start, len(buf), CHUNK_BYTES))
    tail: bytes | None = None  # what follows the event array; None while it is not closed
    i = 0
    while i < len(spans) and tail is None:
        a, b = spans[i]
        doc = json_split.chunk_document(buf, a, b)
        try:
            events = _decode_events(doc, builder)
        except msgspec.DecodeError as exc:
            closed_at = json_split.trailing_offset(exc)
            if closed_at is not None:  # this chunk holds the end of the event array
                events = _decode_or_fail(doc[:closed_at], builder, source, a)
                tail = buf[a + closed_at - 1 :]  # doc[k] is buf[a + k - 1]
            elif json_split.is_truncation(exc, doc) and _merge_with_next(spans, i):
                continue  # a cut fell inside a string: retry with the next chunk joined
            elif json_split.is_truncation(exc, doc):
                events, kept_to = _salvage_tail(buf, a, b, builder)
                diagnostics.append(_truncation(raw, kept_to, len(buf)))
            else:
                raise InputError(source, _malformed(exc, a)) from None
        builder.add_chunk(events)
        del events
        progress("decode", b - layout.events_start, total)
        i += 1
    if tail is None and not any(d.code == "truncated" for d in diagnostics):
        diagnostics.append(_truncation(raw, len(buf), len(buf)))
    header = _decode_header(layout.header(tail), source, diagnostics)
    for what, n in builder.skipped.items():
        diagnostics.append(Diagnostic("skipped_events", f"skipped {n} {what}", Level.INFO, count=n))
    store, flows = _finish(builder, diagnostics)
    not_events = builder.skipped.get(_NOT_OBJECTS, 0)
    if len(store) == 0 and not_events:
        raise InputError(source, "not a PyTorch profiler trace: its event array holds no events")
    if len(store) == 0:
        diagnostics.append(
            Diagnostic(
                "no_events",
                "the trace holds no timed events",
                remedy="profile at least one step: call prof.step() inside the loop and make "
                "sure the schedule's active window is reached",
            )
        )
    return Profile(source, "kineto", store, flows, TraceMeta(header), diagnostics)


def _decode_or_fail(doc: bytes, builder: _Builder, source: str, offset: int) -> list[Event]:
    try:
        return _decode_events(doc, builder)
    except msgspec.DecodeError as exc:
        raise InputError(source, _malformed(exc, offset)) from None


def _malformed(exc: msgspec.DecodeError, offset: int) -> str:
    """The decode error with the byte position in the file rather than in the chunk."""
    text = str(exc)
    m = re.search(r"\(byte (\d+)\)", text)
    if m:
        text = text.replace(m.group(0), f"(near byte {offset + int(m.group(1)) - 1})")
    return f"invalid JSON in the trace events: {text}"


def _decode_header(doc: bytes, source: str, diagnostics: list[Diagnostic]) -> dict[str, Any]:
    try:
        header = ANY_DECODER.decode(doc)
    except msgspec.DecodeError:
        diagnostics.append(
            Diagnostic("bad_header", "the trace's top-level fields could not be read")
        )
        return {}
    if not isinstance(header, dict):
        raise InputError(source, "not a PyTorch profiler trace: its top level is not an object")
    header.pop("traceEvents", None)
    return header


def _decode_events(doc: bytes, builder: _Builder) -> list[Event]:
    try:
        return EVENTS_DECODER.decode(doc)
    except msgspec.ValidationError:
        return _decode_lax(doc, builder)


def _decode_lax(doc: bytes, builder: _Builder) -> list[Event]:
    """Slow path for chunks where some field has an unexpected type: convert event by event."""
    items = ANY_DECODER.decode(doc)
    events: list[Event] = []
    bad = 0
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            events.append(event_from_object(item))
        else:
            bad += 1
    builder.count_skipped(_NOT_OBJECTS, bad)
    return events


def _merge_with_next(spans: list[tuple[int, int]], i: int) -> bool:
    """Join chunk i with chunk i+1 (a boundary fell inside a string). False if none is left."""
    if i + 1 >= len(spans):
        return False
    spans[i : i + 2] = [(spans[i][0], spans[i + 1][1])]
    return True


def _salvage_tail(buf: bytes, a: int, b: int, builder: _Builder) -> tuple[list[Event], int]:
    """Decode the longest run of whole events at the start of an unterminated last chunk."""
    for cut in reversed(json_split.boundaries(buf, a, b)[-_SALVAGE_TRIES:]):
        try:
            return _decode_events(json_split.chunk_document(buf, a, cut), builder), cut
        except msgspec.DecodeError:
            continue
    return [], a


def _truncation(raw: RawInput, kept_to: int, size: int) -> Diagnostic:
    where = "the gzip stream" if raw.gzip_truncated else "the file"
    lost = f"; {size - kept_to} bytes of an incomplete event were dropped" if kept_to < size else ""
    return Diagnostic(
        "truncated",
        f"{where} ends before the trace does (cut at byte {size}): every complete event "
        f"before the cut was kept{lost}",
        remedy="the job was probably killed while writing; totals of the last step may be low",
    )


def _concat(parts: list[np.ndarray[Any, Any]] | None, dtype: Any) -> np.ndarray[Any, Any]:
    if not parts:
        return np.zeros(0, dtype)
    return np.concatenate(parts).astype(dtype, copy=False)


def _finish(builder: _Builder, diagnostics: list[Diagnostic]) -> tuple[EventStore, Flows]:
    cols = builder.columns
    strings = list(builder.strings)
    ts = _concat(cols.get("ts"), np.float64)
    flow_ts = _concat(builder.flow_columns.get("ts"), np.float64)
    origin = math.floor(float(ts.min())) if len(ts) else 0.0
    start = np.rint((ts - origin) * 1000.0).astype(np.int64)
    dur = np.rint(_concat(cols.get("dur"), np.float64) * 1000.0).astype(np.int64)
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
    raw_track = _concat(cols.get("track"), np.int32)
    cat = _concat(cols.get("cat"), np.int32)
    name = _concat(cols.get("name"), np.int32)
    kind = _kinds(strings, cat, name, _concat(cols.get("instant"), bool))
    shapes = _concat(cols.get("shapes"), np.int32)
    shape_ids = np.array(
        [builder.intern(_torch_shapes(raw)) for raw in builder.shapes] or [0], np.int32
    )
    store = EventStore(
        kind=kind,
        name=name,
        track=track_remap[raw_track] if len(raw_track) else raw_track,
        start=start,
        dur=dur,
        external_id=_concat(cols.get("ext"), np.int64),
        correlation=_concat(cols.get("corr"), np.int64),
        device=_concat(cols.get("device"), np.int32),
        stream=_concat(cols.get("stream"), np.int64),
        shapes=np.where(shapes >= 0, shape_ids[np.maximum(shapes, 0)], -1).astype(np.int32),
        nbytes=_concat(cols.get("nbytes"), np.int64),
        mem_device_type=_concat(cols.get("mem_type"), np.int8),
        unfinished=_concat(cols.get("unfinished"), bool),
        strings=list(builder.strings),
        tracks=tracks,
        origin_us=origin,
        category=cat,
    )
    flow_track = _concat(builder.flow_columns.get("track"), np.int32)
    flows = Flows(
        flow_id=_concat(builder.flow_columns.get("flow_id"), np.int64),
        is_start=_concat(builder.flow_columns.get("is_start"), bool),
        track=track_remap[flow_track] if len(flow_track) else flow_track,
        start=np.rint((flow_ts - origin) * 1000.0).astype(np.int64),
    )
    return store, flows


def _kinds(
    strings: list[str],
    cat: np.ndarray[Any, Any],
    name: np.ndarray[Any, Any],
    instant: np.ndarray[Any, Any],
) -> np.ndarray[Any, Any]:
    by_string = np.array([int(kind_of_category(s)) for s in strings] or [0], dtype=np.int8)
    kind = by_string[cat] if len(cat) else np.zeros(0, np.int8)
    memory_names = [
        strings.index(n) for n in (MEMORY_EVENT_NAME, OUT_OF_MEMORY_EVENT_NAME) if n in strings
    ]
    is_memory = instant & np.isin(name, memory_names)
    kind = np.where(instant, np.int8(EventKind.OTHER), kind)
    kind[is_memory] = np.int8(EventKind.MEMORY)
    return kind.astype(np.int8)


def _tracks(builder: _Builder) -> tuple[np.ndarray[Any, Any], list[Track]]:
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
