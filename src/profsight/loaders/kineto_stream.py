"""Decoding the event array as it is read: a window of about one chunk, never the whole text.

The window holds what was read but not decoded yet. Each round decodes from the window's
start to the last event boundary that leaves `json_split.TAIL_LIMIT` bytes behind (where the
array's end is looked for once the input ends) and drops what it decoded, so memory holds
the columns and one window, whatever the file's size.

A boundary (``}`` ``,`` ``{``) can, rarely, fall inside a string; the chunk then fails to
decode and is retried once joined with what follows. A chunk that fails again is read
event by event (`kineto_salvage`). The window's first byte is always the separator before
its first event (the array's ``[`` or the ``,`` after the event before), so a chunk is
framed as a JSON array by overwriting that byte and the one after its last event.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from profsight.errors import InputError
from profsight.loaders import json_split
from profsight.loaders.input_files import BLOCK, Input
from profsight.loaders.kineto_columns import ColumnBuilder
from profsight.loaders.kineto_salvage import (
    Salvage,
    Salvaged,
    decode_events,
    malformed_message,
    salvage_malformed,
    salvage_tail,
)
from profsight.loaders.kineto_schema import Event
from profsight.model.diagnostics import Diagnostic

#: The first read, doubled until the event array's start is found (what precedes it is small).
HEAD_BLOCK = 64 << 10


def find_events(stream: Input, source: str) -> tuple[bytearray, json_split.Layout]:
    """The document's first blocks, up to past the ``[`` of its event array, and where that is."""
    head = bytearray()
    size = HEAD_BLOCK
    while True:
        block = stream.read(size)
        head += block
        size = min(2 * size, BLOCK)
        try:
            return head, json_split.locate_events(head)
        except json_split.NotATrace as exc:
            if not block or not exc.incomplete:
                raise InputError(source, f"not a PyTorch profiler trace: {exc}") from None


class NeedsSequential(Exception):
    """A worker met something only the sequential pass handles (damage, a cut)."""


class Window(msgspec.Struct):
    """The undecoded bytes of the event array, read from `source` as needed."""

    source: Input
    data: bytearray
    offset: int
    """Position in the (decompressed) document of ``data[0]``."""
    limit: int | None = None
    """Read no further than this position (the end of a worker's part of the file)."""
    eof: bool = False

    def fill(self, size: int) -> None:
        while not self.eof and len(self.data) < size:
            want = min(BLOCK, size - len(self.data))
            if self.limit is not None:
                want = min(want, self.limit - self.offset - len(self.data))
            block = self.source.read(want) if want > 0 else b""
            if block:
                self.data += block
            else:
                self.eof = True

    def drop(self, n: int) -> None:
        del self.data[:n]
        self.offset += n


class Pass(msgspec.Struct):
    """What a decoding pass found besides the events."""

    tail: bytes | bytearray | None = None
    """What follows the event array, once its end was found."""
    diagnostics: list[Diagnostic] = msgspec.field(default_factory=list)
    end: int = 0
    """Position in the document where the pass stopped reading."""
    salvaged: Salvaged | None = None
    """The chunks read event by event, and where their diagnostic is in `diagnostics`."""
    salvaged_at: int = -1


class Plan(msgspec.Struct, frozen=True):
    """How a pass reads (progress is reported by the `Input`, as bytes read from disk)."""

    source: str
    chunk: int
    worker: bool
    """A forked worker's pass: any oddity raises `NeedsSequential` (the parent redoes it)."""
    layout: json_split.Layout
    """Where the event array starts in the document, and what comes before it."""
    cut_off: Callable[[int, int], Diagnostic]
    """The truncation diagnostic for (kept up to, document size)."""


def decode_stream(window: Window, builder: ColumnBuilder, plan: Plan, final: bool) -> Pass:
    """Decode every event of `window` into `builder`.

    `final`: the window runs to the end of the input, where the array's ``]`` (or a cut) is;
    otherwise it ends at an event boundary (a worker's part of the file).
    """
    outcome = Pass()
    tail = json_split.TAIL_LIMIT
    need = plan.chunk + tail
    retry_from = 0  # a chunk failed to decode: the next cut must lie beyond it
    strict = False  # a chunk failed to decode: cut only where no string is open
    while True:
        window.fill(need)
        if window.eof:
            break
        data = window.data
        # a chunk of `plan.chunk` bytes (more only where one event is longer, or on a retry)
        hi = min(len(data), need) - tail
        cut = last_boundary(data, max(retry_from, 1), hi, strict)
        if cut is None:  # one event longer than a chunk, or a retry: read more first
            need = len(data) + plan.chunk
            continue
        try:
            events = decode_events(json_split.framed(data, cut), builder)
        except msgspec.DecodeError as exc:
            if plan.worker:
                raise NeedsSequential from None
            if not strict:  # the cut may lie in a string that holds "}, {"
                strict = True
                continue
            if not retry_from:
                retry_from, need = cut + 1, len(data) + plan.chunk
                continue
            events = _Rescue(builder, plan, outcome).one_by_one(data, 1, cut, window.offset, exc)
        builder.add_chunk(events)
        del events
        window.drop(cut)
        retry_from, strict, need = 0, False, plan.chunk + tail
    _decode_rest(window, builder, plan, final, outcome)
    outcome.end = window.offset + len(window.data)
    return outcome


def last_boundary(data: bytearray, lo: int, hi: int, strict: bool = False) -> int | None:
    """Offset just after the ``}`` of the last event boundary whose ``}`` is in [lo, hi);
    `strict`: the last one outside strings (``data[0]`` is outside)."""
    while hi > lo:
        pos = data.rfind(b"}", lo, hi)
        if pos < 0:
            return None
        if json_split.BOUNDARY.match(data, pos) and (
            not strict or json_split.outside_strings(data, 0, pos)
        ):
            return pos + 1
        hi = pos
    return None


def _decode_rest(
    window: Window, builder: ColumnBuilder, plan: Plan, final: bool, outcome: Pass
) -> None:
    """The window once the input ended: up to the array's end (or the cut), in chunks."""
    data = window.data
    end = json_split.array_end(data, json_split.Layout(1, plan.layout.head))
    stop = len(data) if end is None or not final else end
    if final and end is not None:
        outcome.tail = data[end + 1 :]
    spans = list(json_split.iter_chunks(data, 1, stop, plan.chunk))
    merged = -1  # the chunk last joined with its successor
    i = 0
    while i < len(spans):
        a, b = spans[i]
        cut_off = final and b >= len(data)  # the array never closes here: the file was cut
        try:
            events = decode_events(json_split.chunk_document(data, a, b), builder)
        except msgspec.DecodeError as error:
            if plan.worker:
                raise NeedsSequential from None
            if merged != i and i + 1 < len(spans):
                spans[i : i + 2] = [(a, spans[i + 1][1])]  # a cut fell inside a string
                merged = i
                continue
            rescue = _Rescue(builder, plan, outcome)
            read = rescue.cut_off if cut_off else rescue.one_by_one
            events = read(data, a, b, window.offset, error)
        builder.add_chunk(events)
        del events
        i += 1


class _Rescue(msgspec.Struct, frozen=True):
    """What a pass does with a chunk that failed to decode (`builder`'s, under `plan`;
    diagnostics go to `outcome`)."""

    builder: ColumnBuilder
    plan: Plan
    outcome: Pass

    def one_by_one(
        self, data: bytearray, a: int, b: int, offset: int, error: msgspec.DecodeError
    ) -> list[Event]:
        """The chunk ``data[a:b]`` read event by event; an error if not one can be read."""
        salvage = salvage_malformed(data, a, b, self.builder)
        if salvage.events is None:
            raise InputError(self.plan.source, malformed_message(error, offset + a)) from None
        self._note(salvage, offset + a, error)
        return salvage.events

    def cut_off(
        self, data: bytearray, a: int, b: int, offset: int, error: msgspec.DecodeError
    ) -> list[Event]:
        """The last chunk of a file cut off: its whole events, else its events one by one,
        and where the file was cut."""
        events, kept_to = salvage_tail(data, a, b, self.builder)
        if kept_to == a:  # no run of whole events: read them one by one
            salvage = salvage_malformed(data, a, b, self.builder)
            if salvage.events is not None:
                events, kept_to = salvage.events, len(data)
                self._note(salvage, offset + a, error)
        self.outcome.diagnostics.append(self.plan.cut_off(offset + kept_to, offset + len(data)))
        return events

    def _note(self, salvage: Salvage, offset: int, error: msgspec.DecodeError) -> None:
        """One diagnostic for every chunk of the pass read event by event, where the first
        one was."""
        outcome = self.outcome
        total = outcome.salvaged
        if total is None:
            total = outcome.salvaged = Salvaged(offset, error)
            outcome.salvaged_at = len(outcome.diagnostics)
            outcome.diagnostics.append(total.diagnostic())
        total.add(salvage)
        outcome.diagnostics[outcome.salvaged_at] = total.diagnostic()
