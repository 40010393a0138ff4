"""Format detection: which loader reads an input, judged from its first bytes."""

from __future__ import annotations

import enum


class Format(enum.Enum):
    KINETO = "kineto"
    """A Chrome/Kineto trace: JSON object with ``traceEvents``, or a bare JSON event array."""
    TEXT = "text"
    """Text: a printed profiler table or a Lightning report."""
    PICKLE = "pickle"
    """A Python pickle (protocol 2 to 5): a memory snapshot, `loaders.snapshot_pickle`."""
    BINARY = "binary"
    EMPTY = "empty"


SNIFF_BYTES = 4096
"""How much of the start of an input tells its format."""


def sniff(data: bytes | bytearray) -> Format:
    head = data[:SNIFF_BYTES].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head:
        return Format.EMPTY
    if head[:1] in (b"{", b"["):
        return Format.KINETO
    if data[:1] == b"\x80" and data[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        return Format.PICKLE
    if b"\x00" in head or _looks_binary(head):
        return Format.BINARY
    return Format.TEXT


def _looks_binary(head: bytes | bytearray) -> bool:
    control = sum(1 for byte in head if byte < 9 or 13 < byte < 32)
    return control > len(head) // 20
