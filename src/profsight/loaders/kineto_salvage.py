"""Decoding a chunk of the event array, and salvaging what exporters get wrong.

A chunk is decoded into typed structs in one call; a chunk msgspec rejects is read again
event by event (`salvage_malformed`): repaired where the exporter's bug is known, skipped
where it cannot be read. An unterminated last chunk keeps its longest run of whole events
(`salvage_tail`).
"""

from __future__ import annotations

import re
from itertools import pairwise

import msgspec

from profsight.loaders import json_split
from profsight.loaders.kineto_columns import NOT_OBJECTS, ColumnBuilder
from profsight.loaders.kineto_schema import ANY_DECODER, EVENTS_DECODER, Event, event_from_object
from profsight.model.diagnostics import Diagnostic

#: Event boundaries tried from the end of a cut-off chunk before it is judged malformed.
_SALVAGE_TRIES = 64


def malformed_message(exc: msgspec.DecodeError, offset: int) -> str:
    """The decode error with the byte position in the file rather than in the chunk (for the
    message only: no decision reads msgspec's wording)."""
    text = str(exc)
    m = re.search(r"\(byte (\d+)\)", text)
    if m:
        text = text.replace(m.group(0), f"(near byte {offset + int(m.group(1)) - 1})")
    return f"invalid JSON in the trace events: {text}"


def decode_events(doc: bytes | bytearray | memoryview, builder: ColumnBuilder) -> list[Event]:
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


def _decode_lax(doc: bytes | bytearray | memoryview, builder: ColumnBuilder) -> list[Event]:
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
    builder.lax_events += len(events)
    return events


#: Bugs exporters really have, and their repair: ``"dur": N/A`` written unquoted (Kineto),
#: raw control characters inside names, names that are not UTF-8.
_UNQUOTED_NA = re.compile(rb'("\s*:\s*)N/A(?=\s*[,}\]])')
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")


class Salvage(msgspec.Struct):
    events: list[Event] | None
    """The events read, or None when not one piece could be read."""
    dropped: int = 0
    repaired: int = 0


class Salvaged(msgspec.Struct):
    """The chunks of one pass that were read event by event, reported as one diagnostic
    (the first place, how many there were, and the events lost and repaired in all)."""

    offset: int
    error: msgspec.DecodeError
    places: int = 0
    dropped: int = 0
    repaired: int = 0

    def add(self, salvage: Salvage) -> None:
        self.places += 1
        self.dropped += salvage.dropped
        self.repaired += salvage.repaired

    def diagnostic(self) -> Diagnostic:
        where = malformed_message(self.error, self.offset)
        where = where.removeprefix("invalid JSON in the trace events: ")
        if self.places > 1:
            more = self.places - 1
            where += f", and at {more} more place{'s' if more > 1 else ''}"
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


def salvage_malformed(buf: bytes | bytearray, a: int, b: int, builder: ColumnBuilder) -> Salvage:
    """Read a chunk with invalid JSON event by event: repair what exporters get wrong, skip
    what cannot be read (the chunk ends before the array's ``]``, found by `array_end`)."""
    cuts = [a, *json_split.boundaries(buf, a, b), b]
    result = Salvage([])
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
        return Salvage(None)
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
        return decode_events(b"[" + piece + b"]", builder)
    except msgspec.DecodeError:
        return None


def salvage_tail(
    buf: bytes | bytearray, a: int, b: int, builder: ColumnBuilder
) -> tuple[list[Event], int]:
    """Decode the longest run of whole events at the start of an unterminated last chunk."""
    for cut in reversed(json_split.boundaries(buf, a, b)[-_SALVAGE_TRIES:]):
        try:
            return decode_events(json_split.chunk_document(buf, a, cut), builder), cut
        except msgspec.DecodeError:
            continue
    return [], a
