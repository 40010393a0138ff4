"""Finding the traces of a job and the rank of each.

A rank is known, in order of trust, from the trace's ``distributedInfo`` (torch >= 1.13
writes the global rank and world size there; read in the worker that loads the trace), from
the file's name (Lightning's ``{stage}-{filename}-{local_rank}-{action}``, HTA's and many
scripts' ``rank-N`` / ``rank_N`` / ``rankN``), or not at all: a single such trace is rank 0,
several are numbered in name order, with a warning.
``tensorboard_trace_handler``'s default ``{host}_{pid}.{timestamp}.pt.trace.json[.gz]``
carries no rank, so its traces rely on ``distributedInfo``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

import msgspec

from profsight.errors import InputError
from profsight.lazy import regex

#: File names a trace directory holds (Kineto, tensorboard_trace_handler, Lightning).
TRACE_SUFFIXES = (".json", ".json.gz")
_RANK_WORD = regex(r"(?:^|[^a-z])rank[-_.]?(\d+)", re.IGNORECASE)
_LIGHTNING_ACTION = regex(r"^(?:fit|validate|test|predict|tune)-(?:.*-)?(\d+)-\[")
_LIGHTNING = regex(r"^(?:fit|validate|test|predict|tune)-(?:.*?-)?(\d+)(?:-|\.|$)")
#: ``tensorboard_trace_handler``'s file name: ``{worker}.{time_ns}.pt.trace.json[.gz]``.
_HANDLER_TIME = regex(r"\.(\d{6,})\.pt\.trace\.json(?:\.gz)?$")


class TraceFile(msgspec.Struct, frozen=True):
    path: str
    name_rank: int | None
    """The rank the file's name gives, if any."""
    written: float
    """When it was written: the handler's timestamp in its name, else the file's mtime."""


def rank_from_name(name: str) -> int | None:
    """The rank a trace's file name states (``rank-3``, ``fit-ddp-3-...``), or None."""
    base = os.path.basename(name)
    m = _RANK_WORD.search(base) or _LIGHTNING_ACTION.search(base) or _LIGHTNING.search(base)
    return int(m.group(1)) if m else None


def find_traces(paths: Sequence[str]) -> list[TraceFile]:
    """Every trace named by `paths`: files as given, directories searched for traces."""
    if not paths:
        raise InputError(
            "<job>", "no traces given: name a directory of per-rank traces or the files"
        )
    files: list[str] = []
    for path in paths:
        p = Path(path)
        if p.is_dir():
            found = _traces_in(p)
            if not found:
                raise InputError(path, "no trace files (*.json, *.json.gz) in this directory")
            files.extend(found)
        elif p.is_file():
            files.append(str(p))
        else:
            raise InputError(path, "no such file or directory")
    unique = list(dict.fromkeys(os.path.abspath(f) for f in files))
    return [TraceFile(f, rank_from_name(f), _written(f)) for f in unique]


def _traces_in(directory: Path) -> list[str]:
    """Trace-named files in the directory and below (rank subdirectories are common; other
    JSON files, such as hparams.json, are left out later with a note)."""
    return sorted(
        str(f)
        for f in directory.glob("**/*")
        if f.is_file() and f.name.endswith(TRACE_SUFFIXES) and not f.name.startswith(".")
    )


def _written(path: str) -> float:
    m = _HANDLER_TIME.search(os.path.basename(path))
    if m:  # nanoseconds (torch >= 1.13) or milliseconds (before)
        value = int(m.group(1))
        return value / 1e9 if len(m.group(1)) >= 16 else value / 1e3
    try:
        return os.path.getmtime(path)
    except OSError:
        return 0.0


__all__ = ["TRACE_SUFFIXES", "TraceFile", "find_traces", "rank_from_name"]
