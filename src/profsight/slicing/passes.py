"""The passes `trace_slice` makes over a trace to choose the events of a step window.

Each pass streams the event array (`loaders.event_chunks`), so a trace of any size is sliced
in the memory of one chunk plus what is kept; only kept events become Python objects. The
events are read through a slim typed view (`_Event`: the fields the choice needs; a chunk
whose fields have other types is read as plain objects instead).

1. `step_spans`: the ``ProfilerStep#N`` ranges (their number, start and end);
2. `launched`: the correlations of the host calls inside the window;
3. `device_end`: where the last device activity to keep ends (what those calls launched
   can run after the host's window);
4. `kept_events`: the events to keep, as dicts, in the trace's order.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from profsight.knowledge.trace_schema import (
    PROFILER_STEP_PREFIX,
    TABLE_DEVICE_KINDS,
    kind_of_category,
)
from profsight.lazy import regex
from profsight.loaders.event_chunks import EventChunks
from profsight.loaders.input_files import open_input
from profsight.stats import unique

_STEP_NUMBER = regex(re.escape(PROFILER_STEP_PREFIX) + r"(\d+)$")
#: Phases of the events kept when their time falls in the window (instants, counters, ...).
_POINT_PHASES = frozenset({"i", "I", "C", "B", "E", "b", "e", "n"})
_FLOW_PHASES = frozenset({"s", "t", "f"})


class _Args(msgspec.Struct, frozen=True, gc=False):
    correlation: Any = None


_NO_ARGS = _Args()


class _Event(msgspec.Struct, gc=False):
    ph: Any = None
    name: Any = ""
    cat: Any = ""
    ts: Any = None
    dur: Any = None
    id: Any = None
    args: _Args = _NO_ARGS


_EVENTS = msgspec.json.Decoder(list[_Event])


def _from_object(item: Any) -> _Event | None:
    """The slim view of a plainly decoded element (None: not an event)."""
    if not isinstance(item, dict):
        return None
    args = item.get("args")
    correlation = args.get("correlation") if isinstance(args, dict) else None
    return _Event(
        item.get("ph"),
        item.get("name", ""),
        item.get("cat", ""),
        item.get("ts"),
        item.get("dur"),
        item.get("id"),
        _Args(correlation),
    )


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _on_device(event: _Event) -> bool:
    """Device activity (kernels, copies, memsets, syncs, device-side ranges), by category."""
    return kind_of_category(str(event.cat)) in TABLE_DEVICE_KINDS


def _span(event: _Event) -> tuple[float, float] | None:
    """Start and end of a complete (``X``) event with a time."""
    ts = _number(event.ts)
    if event.ph != "X" or ts is None:
        return None
    return ts, ts + (_number(event.dur) or 0.0)


class Scan(msgspec.Struct):
    """One pass over the events of `path`; `count` and `header` are set once it is done."""

    path: str
    count: int = 0
    header: dict[str, Any] = msgspec.field(default_factory=dict)

    def chunks(self) -> Iterator[tuple[list[_Event | None], list[msgspec.Raw]]]:
        with open_input(Path(self.path)) as stream:
            chunks = EventChunks(stream, self.path)
            for doc, raws in chunks:
                try:
                    events: list[_Event | None] = list(_EVENTS.decode(doc))
                except msgspec.ValidationError:
                    events = [_from_object(item) for item in msgspec.json.decode(doc)]
                self.count += sum(e is not None for e in events)
                yield events, raws
            self.header = chunks.header

    def events(self) -> Iterator[_Event]:
        for events, _ in self.chunks():
            yield from (e for e in events if e is not None)


def step_spans(path: str) -> tuple[dict[int, list[tuple[float, float]]], int]:
    """Each ``ProfilerStep#N``'s ranges (start, end, in the trace's µs), and the events."""
    found: dict[int, list[tuple[float, float]]] = defaultdict(list)
    scan = Scan(path)
    for e in scan.events():
        m = _STEP_NUMBER.match(str(e.name))
        span = _span(e) if m else None
        if m and span is not None:
            found[int(m.group(1))].append(span)
    return found, scan.count


def launched(path: str, lo: float, hi: float) -> set[Any]:
    """Correlations of the host calls that overlap the window."""
    out: set[Any] = set()
    for e in Scan(path).events():
        span = _span(e)
        inside = span is not None and span[0] < hi and span[1] > lo
        if inside and not _on_device(e) and e.args.correlation is not None:
            out.add(e.args.correlation)
    return out


def device_end(path: str, lo: float, hi: float, calls: set[Any]) -> float:
    """The end of the last device activity kept: launched by `calls`, or overlapping."""
    last = hi
    for e in Scan(path).events():
        span = _span(e)
        if span is None or not _on_device(e):
            continue
        if e.args.correlation in calls or (span[0] < hi and span[1] > lo):
            last = max(last, span[1])
    return last


def kept_events(
    path: str, lo: float, hi: float, last: float, calls: set[Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The events of the window, as dicts in the trace's order, and the trace's header.

    Kept: metadata; host events overlapping [lo, hi); device activity launched by `calls`
    or overlapping; instants and counters in [lo, last]; flows whose every member lies in
    [lo, last] and that have both ends. A flow member outside is remembered by a 64-bit
    hash of its key (8 bytes each), so flows that leave the window are told apart without
    holding every flow of the trace.
    """
    kept: list[tuple[int, dict[str, Any]]] = []
    flows: dict[tuple[Any, Any], list[tuple[int, str, dict[str, Any]]]] = defaultdict(list)
    outside: list[np.ndarray[Any, Any]] = []
    scan = Scan(path)
    index = 0
    for events, raws in scan.chunks():
        away: list[int] = []
        for e, raw in zip(events, raws, strict=True):
            index += 1
            if e is None:
                continue
            if e.ph in _FLOW_PHASES:
                ts = _number(e.ts)
                key = (_hashable(e.cat), _hashable(e.id))
                if ts is not None and lo <= ts <= last:
                    flows[key].append((index, str(e.ph), msgspec.json.decode(raw)))
                else:
                    away.append(hash(key))
            elif _keeps(e, lo, hi, last, calls):
                kept.append((index, msgspec.json.decode(raw)))
        outside.append(np.array(away, np.int64))
    left = unique(np.concatenate(outside)) if outside else np.zeros(0, np.int64)
    keys = list(flows)
    gone = np.isin(np.array([hash(k) for k in keys], np.int64), left)
    for key, away in zip(keys, gone.tolist(), strict=True):
        members = flows[key]
        if not away and {"s", "f"} <= {ph for _, ph, _ in members}:
            kept += [(i, item) for i, _, item in members]
    kept.sort(key=lambda pair: pair[0])
    return [item for _, item in kept if isinstance(item, dict)], scan.header


def _keeps(e: _Event, lo: float, hi: float, last: float, calls: set[Any]) -> bool:
    if e.ph == "M":
        return True
    span = _span(e)
    if span is not None:
        if _on_device(e):
            return e.args.correlation in calls or (span[0] < hi and span[1] > lo)
        return span[0] < hi and span[1] > lo
    ts = _number(e.ts)
    return e.ph in _POINT_PHASES and ts is not None and lo <= ts <= last


def _hashable(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)
