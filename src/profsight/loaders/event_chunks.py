"""A trace's event array, chunk by chunk, as JSON array documents: for tools that pass over
a whole trace of any size without loading it (`trace_slice`), strictly (damage is an error).

`EventChunks` reads through the same window as the loader (`kineto_stream`): memory holds
one chunk and the window, whatever the file's size. Each chunk is checked by decoding it as
raw values (``list[msgspec.Raw]``, each event's bytes, not parsed); after the last one,
`EventChunks.header` holds the trace's top-level fields.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec

from profsight.errors import InputError
from profsight.loaders import json_split
from profsight.loaders.input_files import Input
from profsight.loaders.kineto_schema import ANY_DECODER
from profsight.loaders.kineto_stream import Window, find_events, last_boundary

CHUNK_BYTES = 8 << 20
RAW_DECODER = msgspec.json.Decoder(list[msgspec.Raw])


class Damaged(Exception):
    """The event array cannot be read whole (invalid JSON, or the file ends inside it)."""


class NotATrace(Exception):
    """The input holds no event array at all."""


class EventChunks:
    """Iterate to get ``(document, raws)`` per chunk: a JSON array of events and each
    event's bytes. Raises `Damaged` where the array cannot be read whole."""

    def __init__(self, stream: Input, source: str, chunk: int | None = None) -> None:
        self.stream, self.source, self.chunk = stream, source, chunk or CHUNK_BYTES
        self.header: dict[str, Any] = {}

    def __iter__(self) -> Iterator[tuple[bytes | bytearray, list[msgspec.Raw]]]:
        try:
            head, layout = find_events(self.stream, self.source)
        except InputError as exc:
            raise NotATrace(exc.reason) from None
        start = layout.events_start - 1  # the window starts at the array's "["
        window = Window(self.stream, head[start:], start)
        del head
        tail = json_split.TAIL_LIMIT
        need = self.chunk + tail
        retry_from = 0
        while True:
            window.fill(need)
            if window.eof:
                break
            data = window.data
            cut = last_boundary(data, max(retry_from, 1), len(data) - tail)
            if cut is None:
                need = len(data) + self.chunk
                continue
            doc = json_split.framed(data, cut)
            raws = _raws(doc)
            if raws is None:
                if retry_from:
                    raise Damaged(f"invalid JSON near byte {window.offset}")
                retry_from, need = cut + 1, len(data) + self.chunk  # a cut inside a string
                continue
            yield doc, raws
            window.drop(cut)
            retry_from, need = 0, self.chunk + tail
        yield from self._rest(window, layout)

    def _rest(
        self, window: Window, layout: json_split.Layout
    ) -> Iterator[tuple[bytes | bytearray, list[msgspec.Raw]]]:
        data = window.data
        end = json_split.array_end(data, json_split.Layout(1, layout.head))
        if end is None or self.stream.truncated:
            raise Damaged("the file ends before its event array does")
        doc = json_split.chunk_document(data, 1, end)
        raws = _raws(doc)
        if raws is None:
            raise Damaged(f"invalid JSON near byte {window.offset}")
        if raws:
            yield doc, raws
        try:
            header = ANY_DECODER.decode(layout.header(data[end + 1 :]))
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            raise Damaged("its top-level fields are not valid JSON") from None
        if isinstance(header, dict):
            header.pop("traceEvents", None)
            self.header = header


def _raws(doc: bytes | bytearray) -> list[msgspec.Raw] | None:
    try:
        return RAW_DECODER.decode(doc)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None
