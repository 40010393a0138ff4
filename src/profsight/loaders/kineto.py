"""Loader for Kineto / Chrome trace files (``*.pt.trace.json[.gz]``), every torch version.

The event array is decoded chunk by chunk into typed structs (`kineto_schema.Event`), and
each chunk is turned into numpy columns at once, so no per-event Python object outlives
its chunk. See `json_split` for how chunks are cut and how a truncated file is salvaged.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import msgspec

from profsight.errors import InputError
from profsight.loaders import json_split, parallel
from profsight.loaders.kineto_columns import NOT_OBJECTS, ColumnBuilder
from profsight.loaders.kineto_schema import (
    ANY_DECODER,
    EVENTS_DECODER,
    Event,
    event_from_object,
)
from profsight.loaders.progress import Progress, no_progress
from profsight.loaders.reading import RawInput
from profsight.model.diagnostics import Diagnostic, Level
from profsight.model.profile import LoadStats, Profile, TraceMeta

CHUNK_BYTES = 8 << 20
"""Size of the pieces the event array is decoded in (``PROFSIGHT_CHUNK_BYTES`` overrides)."""
#: Event boundaries tried from the end of a cut-off chunk before it is judged malformed.
_SALVAGE_TRIES = 64


PARALLEL_BYTES = 64 << 20
"""Inputs larger than this are decoded by two processes where fork is safe
(``PROFSIGHT_PARALLEL_BYTES`` overrides)."""


def _setting(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


class _NeedsSequential(Exception):
    """A worker met something only the sequential pass handles (a cut, the array's end)."""


@dataclass
class _Pass:
    """Where a decoding pass over some chunks ended up."""

    tail: bytes | bytearray | None = None
    """What follows the event array, once its end was found."""
    diagnostics: list[Diagnostic] = field(default_factory=list)


def load_kineto(raw: RawInput, source: str, progress: Progress = no_progress) -> Profile:
    """Decode a Chrome trace held in `raw` into a `Profile`."""
    buf = raw.data
    try:
        layout = json_split.locate_events(buf)
    except json_split.NotATrace as exc:
        raise InputError(source, f"not a PyTorch profiler trace: {exc}") from None
    chunk = max(_setting("PROFSIGHT_CHUNK_BYTES", CHUNK_BYTES), 1024)
    end = json_split.array_end(buf, layout)
    stop = len(buf) if end is None else end
    spans = list(json_split.iter_chunks(buf, layout.events_start, stop, chunk))
    total = max(stop - layout.events_start, 1)

    def report(done_to: int) -> None:
        progress("decode", done_to - layout.events_start, total)

    builder, outcome, workers = _decode(raw, source, spans, report)
    if end is not None:
        outcome.tail = buf[end + 1 :]
    diagnostics = outcome.diagnostics
    if outcome.tail is None and not any(d.code == "truncated" for d in diagnostics):
        diagnostics.append(_truncation(raw, len(buf), len(buf)))
    header = _decode_header(layout.header(outcome.tail), source, diagnostics)
    for what, n in builder.skipped.items():
        diagnostics.append(Diagnostic("skipped_events", f"skipped {n} {what}", Level.INFO, count=n))
    store, flows = builder.finish(diagnostics)
    if len(store) == 0 and builder.skipped.get(NOT_OBJECTS, 0):
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
    stats = LoadStats(size=len(buf), chunks=len(spans), workers=workers)
    return Profile(source, "kineto", store, flows, TraceMeta(header), diagnostics, stats)


def _decode(
    raw: RawInput, source: str, spans: list[tuple[int, int]], report: Callable[[int], None]
) -> tuple[ColumnBuilder, _Pass, int]:
    """All chunks, in file order: the first half in a forked worker when that pays and is safe.

    Returns the columns, how the pass ended, and how many processes decoded.
    """
    buf = raw.data
    half = len(spans) // 2
    threshold = _setting("PROFSIGHT_PARALLEL_BYTES", PARALLEL_BYTES)
    if len(buf) < threshold or half == 0 or not parallel.can_fork():
        builder = ColumnBuilder()
        return builder, _decode_spans(raw, source, spans, builder, report), 1

    def first_half() -> ColumnBuilder:
        first = ColumnBuilder()
        _decode_spans(raw, source, spans[:half], first, None)
        return first

    # the worker is reaped however this ends (an error in this half kills it)
    with parallel.Worker(first_half, fallback=(_NeedsSequential,)) as worker:
        second = ColumnBuilder()
        outcome = _decode_spans(raw, source, spans[half:], second, report)
        first = worker.result()
    workers = 2
    if first is None:  # the worker met a cut or the array's end: do that half here
        first = ColumnBuilder()
        _decode_spans(raw, source, spans[:half], first, report)
        workers = 1
    first.extend(second)
    return first, outcome, workers


def _decode_spans(
    raw: RawInput,
    source: str,
    spans: list[tuple[int, int]],
    builder: ColumnBuilder,
    report: Callable[[int], None] | None,
) -> _Pass:
    """Decode `spans` into `builder`. ``report=None`` marks a worker: any oddity raises."""
    buf = raw.data
    outcome = _Pass()
    spans = list(spans)
    merged = -1  # the chunk last joined with its successor
    i = 0
    while i < len(spans):
        a, b = spans[i]
        inner = b < len(buf)  # an inner chunk is framed in place; a cut-off last one copied
        framing = (
            json_split.framed(buf, a, b)
            if inner
            else nullcontext(json_split.chunk_document(buf, a, b))
        )
        with framing as doc:
            try:
                events = _decode_events(doc, builder)
                error = None
            except msgspec.DecodeError as exc:
                if report is None:
                    raise _NeedsSequential from None
                error = exc
        if error is not None:
            if merged != i and _merge_with_next(spans, i):
                merged = i  # a cut fell inside a string: retry with the next chunk joined
                continue
            if not inner:  # the array never closes: the file was cut off
                events, kept_to = _salvage_tail(buf, a, b, builder)
                if kept_to == a:  # no run of whole events: read them one by one
                    salvage = _salvage_malformed(buf, a, b, builder)
                    if salvage.events is not None:
                        events, kept_to = salvage.events, len(buf)
                        outcome.diagnostics.append(salvage.diagnostic(a, error))
                outcome.diagnostics.append(_truncation(raw, kept_to, len(buf)))
            else:
                salvage = _salvage_malformed(buf, a, b, builder)
                if salvage.events is None:
                    raise InputError(source, _malformed(error, a)) from None
                events = salvage.events
                outcome.diagnostics.append(salvage.diagnostic(a, error))
        builder.add_chunk(events)
        del events
        if report is not None:
            report(b)
        i += 1
    return outcome


def _malformed(exc: msgspec.DecodeError, offset: int) -> str:
    """The decode error with the byte position in the file rather than in the chunk (for the
    message only: no decision reads msgspec's wording)."""
    text = str(exc)
    m = re.search(r"\(byte (\d+)\)", text)
    if m:
        text = text.replace(m.group(0), f"(near byte {offset + int(m.group(1)) - 1})")
    return f"invalid JSON in the trace events: {text}"


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


def _decode_events(doc: bytes | memoryview, builder: ColumnBuilder) -> list[Event]:
    try:
        try:
            return EVENTS_DECODER.decode(doc)
        except msgspec.ValidationError:
            return _decode_lax(doc, builder)
    except UnicodeDecodeError:  # msgspec's own error for bytes that are not UTF-8
        raise msgspec.DecodeError("JSON is malformed: bytes that are not UTF-8") from None
    except RecursionError:
        # msgspec walks nested values recursively, even those it skips: a value nested deeper
        # than Python's recursion limit (thousands of levels in an args field) cannot be
        # read; the chunk is read again event by event and that event is skipped
        raise msgspec.DecodeError(
            "JSON is malformed: a value is nested deeper than the decoder's limit"
        ) from None


def _decode_lax(doc: bytes | memoryview, builder: ColumnBuilder) -> list[Event]:
    """Slow path for chunks where some field has an unexpected type: convert event by event."""
    items = ANY_DECODER.decode(doc)
    events: list[Event] = []
    bad = 0
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            events.append(event_from_object(item))
        else:
            bad += 1
    builder.count_skipped(NOT_OBJECTS, bad)
    return events


#: Bugs exporters really have, and their repair: ``"dur": N/A`` written unquoted (Kineto),
#: raw control characters inside names, names that are not UTF-8.
_UNQUOTED_NA = re.compile(rb'("\s*:\s*)N/A(?=\s*[,}\]])')
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")


@dataclass
class _Salvage:
    events: list[Event] | None
    """The events read, or None when not one piece could be read."""
    dropped: int = 0
    repaired: int = 0

    def diagnostic(self, offset: int, error: msgspec.DecodeError) -> Diagnostic:
        where = _malformed(error, offset).removeprefix("invalid JSON in the trace events: ")
        parts = []
        if self.dropped:
            parts.append(f"{_count(self.dropped)} skipped (unreadable)")
        if self.repaired:
            parts.append(
                f"{_count(self.repaired)} repaired (unescaped quotes in names, unquoted N/A, "
                "NaN, control characters, bytes not UTF-8)"
            )
        return Diagnostic(
            "malformed_events",
            f"invalid JSON in the trace ({where}): read the events one by one; " + "; ".join(parts),
            remedy="the exporter wrote invalid JSON (e.g. a record_function name with a "
            "double quote); rename the range or re-export the trace",
        )


def _count(n: int) -> str:
    return f"{n} event was" if n == 1 else f"{n} events were"


_BLANK = b" \t\r\n,"


def _salvage_malformed(buf: bytes | bytearray, a: int, b: int, builder: ColumnBuilder) -> _Salvage:
    """Read a chunk with invalid JSON event by event: repair what exporters get wrong, skip
    what cannot be read (the chunk ends before the array's ``]``, found by `array_end`)."""
    cuts = [a, *json_split.boundaries(buf, a, b), b]
    result = _Salvage([])
    assert result.events is not None
    for lo, hi in pairwise(cuts):
        piece = bytes(buf[lo:hi]).strip(_BLANK)
        if not piece:
            continue
        events = _decode_piece(piece, builder)
        if events is None:
            repaired = _repair(piece)
            events = _decode_piece(repaired, builder) if repaired != piece else None
            result.repaired += events is not None
        if events is None:
            result.dropped += 1
        else:
            result.events.extend(events)
    if not result.events:
        return _Salvage(None)
    return result


#: torch's exporter writes one field per line and a ``record_function`` name as is:
#: ``"name": "say "hi"",`` (it only turns ``\\`` into ``/``).
_NAME_LINE = re.compile(rb'(?m)^(\s*"name": ")(.*)("\s*,?\s*)$')


def _escape_name(match: re.Match[bytes]) -> bytes:
    inner = re.sub(rb'(?<!\\)"', rb'\\"', match.group(2))
    return match.group(1) + inner + match.group(3)


#: Python's json module writes NaN and Infinity, which JSON has not: read as missing.
_NON_FINITE = re.compile(rb'("\s*:\s*)-?(?:NaN|Infinity)(?=\s*[,}\]])')


def _repair(piece: bytes) -> bytes:
    text = piece.decode("utf-8", "replace").encode()
    text = _NON_FINITE.sub(rb"\1null", _NAME_LINE.sub(_escape_name, text))
    return _CONTROL.sub(b" ", _UNQUOTED_NA.sub(rb'\1"N/A"', text))


def _decode_piece(piece: bytes, builder: ColumnBuilder) -> list[Event] | None:
    """One event, or None if it cannot be read."""
    try:
        return _decode_events(b"[" + piece + b"]", builder)
    except msgspec.DecodeError:
        return None


def _merge_with_next(spans: list[tuple[int, int]], i: int) -> bool:
    """Join chunk i with chunk i+1 (a boundary fell inside a string). False if none is left."""
    if i + 1 >= len(spans):
        return False
    spans[i : i + 2] = [(spans[i][0], spans[i + 1][1])]
    return True


def _salvage_tail(
    buf: bytes | bytearray, a: int, b: int, builder: ColumnBuilder
) -> tuple[list[Event], int]:
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
