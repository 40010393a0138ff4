"""Loader for Kineto / Chrome trace files (``*.pt.trace.json[.gz]``), every torch version.

The event array is decoded as it is read (`kineto_stream`), chunk by chunk, into typed
structs (`kineto_schema.Event`), and each chunk is turned into numpy columns at once: no
per-event Python object outlives its chunk, and the file's text is never held whole. A
large plain file is decoded by two processes, each reading its own half of the file. See
`json_split` for how chunks are cut and how a truncated file is salvaged.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec
import numpy as np
from msgspec.structs import replace

from profsight.errors import InputError
from profsight.knowledge.trace_schema import HOST_KINDS, TABLE_DEVICE_KINDS, EventKind
from profsight.loaders import json_split, parallel
from profsight.loaders.input_files import Input, open_input
from profsight.loaders.kineto_columns import NOT_OBJECTS, ColumnBuilder
from profsight.loaders.kineto_legacy import read_legacy
from profsight.loaders.kineto_schema import ANY_DECODER
from profsight.loaders.kineto_stream import (
    NeedsSequential,
    Pass,
    Plan,
    Window,
    decode_stream,
    find_events,
)
from profsight.malloc_trim import release_free_memory
from profsight.model.diagnostics import Diagnostic, Level
from profsight.model.events import EventStore
from profsight.model.profile import Profile
from profsight.model.trace_meta import LoadStats, TraceMeta

CHUNK_BYTES = 2 << 20
"""Size of the pieces the event array is decoded in (``PROFSIGHT_CHUNK_BYTES`` overrides),
and at most an eighth of the file (at least `MIN_CHUNK_BYTES`). A chunk's structs take about
1.7x its bytes until they become columns: a fixed cost that matters against a small file,
while each chunk's own cost adds up on a large one. On 2 cores, 1 MB chunks peak lowest on
10 MB traces (1.2-1.4x the file above start-up, 1.5x with 2 MB) and 2 MB chunks load the
1 GB Lightning trace fastest (4.5-4.7 s for `table`, 4.9-5.6 with 1 MB, 4.8-5.3 with 4)."""
MIN_CHUNK_BYTES = 256 << 10

PARALLEL_BYTES = 16 << 20
"""Plain files larger than this are decoded by two processes where fork is safe
(``PROFSIGHT_PARALLEL_BYTES`` overrides). Measured on 2 cores: a 26 MB trace loads in
0.22-0.29 s with two, 0.30-0.35 s with one; a 10 MB trace the same either way."""

#: How far past the middle of a file its split between two processes is looked for.
_SPLIT_SEARCH = 1 << 20


def _setting(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


def load_kineto(stream: Input, source: str) -> Profile:
    """Decode the Chrome trace `stream` reads into a `Profile` (progress: the stream's)."""
    head, layout = find_events(stream, source)
    chunk = min(CHUNK_BYTES, max(stream.size_on_disk // 8, MIN_CHUNK_BYTES))
    chunk = max(_setting("PROFSIGHT_CHUNK_BYTES", chunk), 1024)

    def cut_off(kept_to: int, size: int) -> Diagnostic:
        return _truncation(stream.truncated, kept_to, size)

    plan = Plan(source, chunk, False, layout, cut_off)
    start = layout.events_start - 1  # the window starts at the array's "["
    window = Window(stream, head[start:], start)
    del head
    builder, outcome, workers = _decode(stream, window, plan)
    diagnostics = outcome.diagnostics
    if outcome.tail is None and not any(d.code == "truncated" for d in diagnostics):
        diagnostics.append(_truncation(stream.truncated, outcome.end, outcome.end))
    header = _decode_header(layout.header(outcome.tail), source, diagnostics)
    for what, n in builder.skipped.items():
        diagnostics.append(Diagnostic("skipped_events", f"skipped {n} {what}", Level.INFO, count=n))
    skipped_objects = builder.skipped.get(NOT_OBJECTS, 0)
    chunks, lax = builder.chunks, builder.lax_events
    store, flows = builder.finish(diagnostics)
    del builder
    release_free_memory()
    store = read_legacy(store, flows, diagnostics)
    _refuse_unknown(store, source)
    if len(store) == 0 and skipped_objects:
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
    stats = LoadStats(size=outcome.end, chunks=chunks, workers=workers, lax_events=lax)
    return Profile(source, "kineto", store, flows, TraceMeta(header), diagnostics, stats)


#: Kinds a PyTorch profiler writes that a report can read (every other is bookkeeping).
_READABLE = HOST_KINDS | TABLE_DEVICE_KINDS | {EventKind.MEMORY, EventKind.COUNTERS}


def _refuse_unknown(store: EventStore, source: str) -> None:
    """A Chrome trace none of whose timed events a PyTorch profiler writes (a browser's or
    another framework's trace, an exporter not known): one line naming what it holds, never
    an empty report."""
    if not len(store) or store.mask(_READABLE).any():
        return
    ids, counts = np.unique(store.category, return_counts=True)
    named = [store.strings[i] or "no cat" for i in ids[np.argsort(-counts)][:3].tolist()]
    pids = sorted({str(t.pid) for t in store.tracks})[:3]
    raise InputError(
        source,
        f"not a PyTorch profiler trace: none of its {len(store)} timed events is an op, a "
        f"kernel or a runtime call (categories: {', '.join(named)}; processes: "
        f"{', '.join(pids)})",
    )


def _decode(stream: Input, window: Window, plan: Plan) -> tuple[ColumnBuilder, Pass, int]:
    """All events, in file order: the first half of a large plain file in a forked worker
    (which reads that half itself) when that pays and is safe.

    Returns the columns, how the pass ended, and how many processes decoded.
    """
    split = _split_point(stream, window.offset)
    if split is None:
        builder = ColumnBuilder()
        return builder, decode_stream(window, builder, plan, final=True), 1
    first_start, path = window.offset, stream.path
    assert path is not None

    def first_half(worker: bool = True) -> tuple[ColumnBuilder, Pass]:
        """The first half; in the worker (the default), any oddity raises."""
        first = ColumnBuilder()
        with open_input(path) as mine:
            mine.seek(first_start)
            part = Window(mine, bytearray(), first_start, limit=split)
            return first, decode_stream(part, first, replace(plan, worker=worker), final=False)

    try:
        worker = parallel.Worker(first_half, fallback=(NeedsSequential,))
    except OSError:  # no pipe, in-memory file or fork to be had here: one process reads it
        builder = ColumnBuilder()
        return builder, decode_stream(window, builder, plan, final=True), 1
    # the worker is reaped however this ends (an error in this half kills it)
    with worker:
        stream.seek(split)
        second = ColumnBuilder()
        outcome = decode_stream(Window(stream, bytearray(), split), second, plan, final=True)
        done = worker.result()
    workers = 2
    if done is None:  # the worker met damage: read that half here, salvaging what it can
        done = first_half(worker=False)
        workers = 1
    first, before = done
    first.extend(second)
    outcome.diagnostics[:0] = before.diagnostics
    return first, outcome, workers


def _split_point(stream: Input, events_start: int) -> int | None:
    """Where a second process takes over: just after an event boundary's ``}`` near the
    middle of a large plain file; None where one process decodes it all."""
    size = stream.size_on_disk
    threshold = _setting("PROFSIGHT_PARALLEL_BYTES", PARALLEL_BYTES)
    if not stream.seekable or size < threshold or not parallel.can_fork():
        return None
    middle = (events_start + size) // 2
    assert stream.path is not None
    with open(stream.path, "rb") as fh:
        fh.seek(middle)
        probe = fh.read(_SPLIT_SEARCH)
    match = json_split.BOUNDARY.search(probe)
    if match is None or middle + match.end() >= size - json_split.TAIL_LIMIT // 2:
        return None
    return middle + match.start() + 1


def _decode_header(
    doc: bytes | bytearray, source: str, diagnostics: list[Diagnostic]
) -> dict[str, Any]:
    try:
        try:
            header = ANY_DECODER.decode(doc)
        except UnicodeDecodeError:  # a name that is not UTF-8: read it with U+FFFD
            header = ANY_DECODER.decode(bytes(doc).decode("utf-8", "replace").encode())
    except (msgspec.DecodeError, RecursionError):
        diagnostics.append(
            Diagnostic("bad_header", "the trace's top-level fields could not be read")
        )
        return {}
    if not isinstance(header, dict):
        raise InputError(source, "not a PyTorch profiler trace: its top level is not an object")
    header.pop("traceEvents", None)
    return header


def _truncation(gzip_truncated: bool, kept_to: int, size: int) -> Diagnostic:
    where = "the gzip stream" if gzip_truncated else "the file"
    lost = f"; {size - kept_to} bytes of an incomplete event were dropped" if kept_to < size else ""
    return Diagnostic(
        "truncated",
        f"{where} ends before the trace does (cut at byte {size}): every complete event "
        f"before the cut was kept{lost}",
        remedy="the job was probably killed while writing; totals of the last step may be low",
    )
