"""Loaders: the only code that reads inputs. `load` picks one by sniffing the content."""

from __future__ import annotations

import os
from pathlib import Path

from profsight.errors import InputError
from profsight.loaders.kineto import load_kineto
from profsight.loaders.lightning_text import looks_like_lightning_report, parse_lightning_report
from profsight.loaders.progress import Progress, no_progress
from profsight.loaders.reading import as_utf8, read_input
from profsight.loaders.sniff import Format, sniff
from profsight.loaders.table_headerless import looks_like_rows, parse_rows
from profsight.loaders.table_text import looks_like_table, parse_tables
from profsight.model.profile import Profile
from profsight.model.text_profile import TextProfile

__all__ = ["load", "load_text"]


def load(path: str | os.PathLike[str], progress: Progress = no_progress) -> Profile | TextProfile:
    """Load a profiler output file: a trace (``.json``/``.json.gz``) into a `Profile`, a
    printed table or Lightning report into a `TextProfile`.

    Raises `InputError` naming the file and the reason when it cannot be read.
    """
    source = str(path)
    raw = as_utf8(read_input(Path(path), progress), source)
    fmt = sniff(raw.data)
    if fmt is Format.KINETO:
        return load_kineto(raw, source, progress)
    if fmt is Format.EMPTY:
        raise InputError(source, "is empty" + (" after decompression" if raw.compressed else ""))
    if fmt is Format.BINARY:
        raise InputError(source, "is a binary file, not a profiler trace or table")
    return load_text(raw.data.decode("utf-8", errors="replace"), source)


def load_text(text: str, source: str = "<text>") -> TextProfile:
    """A printed torch table (one or several) or a Lightning profiler report."""
    if looks_like_table(text) or looks_like_rows(text):
        tables = parse_tables(text, source) if looks_like_table(text) else parse_rows(text, source)
        diagnostics = [d for t in tables for d in t.diagnostics]
        return TextProfile(source, "torch_table", tables=tables, diagnostics=diagnostics)
    if looks_like_lightning_report(text):
        report = parse_lightning_report(text, source)
        return TextProfile(
            source,
            f"lightning_{report.kind}",
            lightning=report,
            diagnostics=list(report.diagnostics),
        )
    raise InputError(
        source,
        "is text but neither a profiler trace, a printed profiler table nor a "
        "Lightning profiler report",
    )
