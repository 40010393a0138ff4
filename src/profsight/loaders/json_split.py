"""Finding the ``traceEvents`` array inside a trace and cutting it into decodable chunks.

Decoding the event array in chunks of a few MB bounds the memory held in Python objects at
any time, lets the CLI draw a progress bar, and localises damage: a trace cut off when a
job was killed loses only its last, incomplete event.

Chunks are cut at ``}`` ``,`` ``{`` boundaries. Such a boundary can, rarely, fall inside a
string; the chunk then fails to decode, and is cut again at the last boundary that quote
parity puts outside strings (`outside_strings`), or merged with the next one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import msgspec

_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')
BOUNDARY = re.compile(rb"\}\s*,\s*\{")
"""Between two events: ``}`` ``,`` ``{`` (whitespace allowed)."""
_WS = b" \t\r\n"
_ANY = msgspec.json.Decoder()
#: What may follow the array's ``]``: a comma and the next field's key, or the end.
_NON_WS = re.compile(rb"[^ \t\r\n]")
_AFTER_END = re.compile(rb'[ \t\r\n]*(?:,[ \t\r\n]*"|\}|\Z)')


class Layout(msgspec.Struct, frozen=True):
    """Where the events start in the buffer, and what comes before them."""

    events_start: int
    """Offset just after the ``[`` of the event array."""
    head: bytes | bytearray
    """The document up to the event array, with ``"traceEvents": `` (empty for a bare array)."""

    @property
    def bare_array(self) -> bool:
        return not self.head

    def header(self, tail: bytes | bytearray | None) -> bytes | bytearray:
        """The document with an empty event array; `tail` is what followed the array."""
        if self.bare_array:
            return b"{}"
        if tail is None:  # the document was cut inside the events
            return self.head + b"[]}"
        return self.head + b"[]" + tail


class NotATrace(Exception):
    """The buffer holds no Chrome-trace event array."""

    def __init__(self, reason: str, incomplete: bool = False) -> None:
        super().__init__(reason)
        self.incomplete = incomplete
        """More of the document might hold it (the buffer is its first part)."""


def locate_events(buf: bytes | bytearray) -> Layout:
    start = _first_non_ws(buf)
    if start >= len(buf):
        raise NotATrace("is empty", incomplete=True)
    first = buf[start : start + 1]
    if first == b"[":
        return Layout(start + 1, b"")
    if first != b"{":
        raise NotATrace("is not JSON (it starts with neither '{' nor '[')")
    match = _EVENTS_KEY.search(buf)
    if match is None:
        raise NotATrace('is JSON but has no "traceEvents" array', incomplete=True)
    return Layout(match.end(), buf[: match.start()] + b'"traceEvents": ')


def _first_non_ws(buf: bytes | bytearray) -> int:
    i = 3 if buf.startswith(b"\xef\xbb\xbf") else 0
    n = len(buf)
    while i < n and buf[i] in _WS:
        i += 1
    return i


#: How far from the end of the file the event array's ``]`` is looked for: what follows the
#: events (Kineto writes ``traceName``, ``displayTimeUnit``, ``baseTimeNanoseconds``; some
#: exporters their device properties) is small.
TAIL_LIMIT = 1 << 20


def array_end(buf: bytes | bytearray, layout: Layout) -> int | None:
    """Offset of the ``]`` that closes the event array, or None when the document does not
    close it (it was cut off, or its end is malformed).

    The candidates are the ``]`` of the last `TAIL_LIMIT` bytes, first to last: the first
    whose whole remainder is a valid end of the document (the top-level object's other
    fields and its ``}``; nothing after a bare array) closes the array. A ``]`` inside an
    event or a string cannot pass: its remainder closes objects it did not open; one among
    the fields after the events comes after the array's own.
    """
    pos = max(layout.events_start - 1, len(buf) - TAIL_LIMIT)
    while (pos := buf.find(b"]", pos + 1)) >= 0:
        if _AFTER_END.match(buf, pos + 1) and _is_tail(buf, pos + 1, layout.bare_array):
            return pos
    return None


def _is_tail(buf: bytes | bytearray, start: int, bare_array: bool) -> bool:
    """Whether ``buf[start:]`` is what may follow the event array: nothing after a bare
    array; the top-level object's other fields and its ``}`` otherwise."""
    m = _NON_WS.search(buf, start)
    if m is None:
        return bare_array
    first = m.start()
    if bare_array:
        return False
    if buf[first] == 0x7D:  # }
        return _NON_WS.search(buf, first + 1) is None
    # the fields after the comma, read as an object: the comma written over with "{" where
    # the buffer allows it (no copy of what may be a megabyte), else a copy
    if isinstance(buf, bytearray):
        saved = buf[first]
        buf[first] = 0x7B  # {
        try:
            return _is_object(memoryview(buf)[first:])
        finally:
            buf[first] = saved
    return _is_object(b"{" + bytes(buf[first + 1 :]))


def _is_object(doc: bytes | memoryview) -> bool:
    try:
        return isinstance(_ANY.decode(doc), dict)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return False


def iter_chunks(
    buf: bytes | bytearray, start: int, end: int, target: int
) -> Iterator[tuple[int, int]]:
    """Yield ``(a, b)`` spans covering ``buf[start:end]``, each ending after a ``}``."""
    a = start
    while a < end:
        if end - a <= target * 3 // 2:
            yield a, end
            return
        m = BOUNDARY.search(buf, a + target, end)
        if m is None:
            yield a, end
            return
        yield a, m.start() + 1
        a = m.end() - 1


def framed(buf: bytearray, cut: int) -> bytearray:
    """``buf[0:cut+1]`` as a JSON array document: a window whose first byte is the separator
    before its first event, cut just after an event's ``}``. A copy, with those two
    separators written over (``[``, ``]``): decoded `msgspec.Raw` values may point into it."""
    doc = buf[: cut + 1]
    doc[0], doc[cut] = 0x5B, 0x5D  # [ and ]
    return doc


def chunk_document(buf: bytes | bytearray, a: int, b: int) -> bytes:
    """The span ``buf[a:b]`` as a JSON array document; ``doc[k]`` is ``buf[a + k - 1]``.

    A trailing comma (a file cut right after an event) is dropped.
    """
    body = bytes(buf[a:b]).rstrip(_WS)
    if body.endswith(b","):
        body = body[:-1]
    return b"[" + body + b"]"


def outside_strings(buf: bytes | bytearray, a: int, p: int) -> bool:
    """Whether ``buf[p]`` lies outside JSON strings, given that ``buf[a]`` does: the
    unescaped quotes in between are even. A quote is escaped by an odd run of backslashes;
    counting ``\\"``, ``\\\\"``, ... with alternating signs counts exactly those quotes."""
    escaped, sign, run = 0, 1, b"\\"
    while count := buf.count(run + b'"', a, p):
        escaped += sign * count
        sign, run = -sign, run + b"\\"
    return (buf.count(b'"', a, p) - escaped) % 2 == 0


def boundaries(buf: bytes | bytearray, a: int, b: int) -> list[int]:
    """Offsets just after each ``}`` that ends an element in ``buf[a:b]`` (event ends)."""
    return [m.start() + 1 for m in BOUNDARY.finditer(buf, a, b)]
