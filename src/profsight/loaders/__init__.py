"""Loaders: the only code that reads input files. `load` picks one by sniffing the content."""

from __future__ import annotations

import os
from pathlib import Path

from profsight.errors import InputError
from profsight.loaders.kineto import load_kineto
from profsight.loaders.progress import Progress, no_progress
from profsight.loaders.reading import read_input
from profsight.loaders.sniff import Format, sniff
from profsight.model.profile import Profile

__all__ = ["load"]


def load(path: str | os.PathLike[str], progress: Progress = no_progress) -> Profile:
    """Load a profiler output file (trace ``.json``/``.json.gz``) into a `Profile`.

    Raises `InputError` naming the file and the reason when it cannot be read.
    """
    source = str(path)
    raw = read_input(Path(path), progress)
    fmt = sniff(raw.data)
    if fmt is Format.KINETO:
        return load_kineto(raw, source, progress)
    if fmt is Format.EMPTY:
        raise InputError(source, "is empty" + (" after decompression" if raw.compressed else ""))
    if fmt is Format.BINARY:
        raise InputError(source, "is a binary file, not a profiler trace or table")
    raise InputError(source, "is text but not a PyTorch profiler trace (JSON)")
