"""Loaders: the only code that reads inputs. `load` picks one by sniffing the content; the
text loaders are imported when it says text (`TEXT_LOADER`)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Final

from profsight.errors import InputError
from profsight.lazy import resolve
from profsight.loaders.input_files import (
    UTF16_BOMS,
    Input,
    RawInput,
    as_utf8,
    open_input,
    read_errors,
)
from profsight.loaders.kineto import load_kineto
from profsight.loaders.progress import Progress, no_progress
from profsight.loaders.sniff import SNIFF_BYTES, Format, sniff
from profsight.model.profile import Profile

if TYPE_CHECKING:
    from profsight.model.text_profile import TextProfile

__all__ = ["SNAPSHOT_ELSEWHERE", "is_snapshot", "load", "load_text"]

#: The text loaders (printed tables, Lightning and cProfile reports): imported only once
#: sniffing says an input is text, so that a trace's start-up does without them.
TEXT_LOADER: Final = "profsight.loaders.text:load_text"

SNAPSHOT_ELSEWHERE = (
    "is a pickle, as torch's memory snapshots are (torch.cuda.memory._dump_snapshot): "
    "`profsight explain` (profsight.explain_snapshot in Python) reads those; this reads "
    "traces and printed tables"
)


def is_snapshot(path: str | os.PathLike[str]) -> bool:
    """Whether `path` (plain or gzip) is a pickle: read as a memory snapshot. False for
    anything that cannot be opened (its loader then says why)."""
    try:
        with open_input(path) as stream:
            return sniff(stream.peek(SNIFF_BYTES)) is Format.PICKLE
    except (InputError, OSError):
        return False


def load(path: str | os.PathLike[str], progress: Progress = no_progress) -> Profile | TextProfile:
    """Load a profiler output file: a trace (``.json``/``.json.gz``) into a `Profile`, a
    printed table or Lightning report into a `TextProfile`.

    Raises `InputError` naming the file and the reason when it cannot be read.
    """
    source = str(path)
    with open_input(path, progress) as stream, read_errors(source):
        head = stream.peek(SNIFF_BYTES)
        if head[:2] in UTF16_BOMS:  # pasted text saved by Windows PowerShell: small
            raw = RawInput(stream.read_all(), stream.compressed, stream.truncated, 0)
            data = as_utf8(raw, source).data
            return _load_bytes(data, source, stream.compressed)
        if sniff(head) is Format.KINETO:
            return load_kineto(stream, source)
        return _load_bytes(stream.read_all(), source, stream.compressed)


def _load_bytes(data: bytearray, source: str, compressed: bool) -> Profile | TextProfile:
    """An input read whole: a trace in memory, or text."""
    fmt = sniff(data)
    if fmt is Format.KINETO:
        return load_kineto(Input.from_bytes(data, source), source)
    if fmt is Format.EMPTY:
        raise InputError(source, "is empty" + (" after decompression" if compressed else ""))
    if fmt is Format.PICKLE:
        raise InputError(source, SNAPSHOT_ELSEWHERE)
    if fmt is Format.BINARY:
        raise InputError(source, "is a binary file, not a profiler trace or table")
    return load_text(data.decode("utf-8", errors="replace"), source)


def load_text(text: str, source: str = "<text>") -> TextProfile:
    """A printed torch table (one or several) or a Lightning profiler report."""
    return resolve(TEXT_LOADER)(text, source)  # type: ignore[no-any-return]
