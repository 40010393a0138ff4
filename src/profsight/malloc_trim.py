"""Giving freed memory back to the system after each stage of the work.

Decoding makes and frees millions of small objects chunk after chunk; glibc keeps the freed
pages in its heap (measured: 0.24 GB resident for 0.08 GB in use after loading a 258 MB
trace, 0.14 GB after a trim), and the analyses that follow then add their arrays on top.
The analyses do the same with arrays of a few MB (one thread's or one process's events:
below glibc's mmap threshold, which grows to 32 MB as large arrays are freed): on a 10 GB
trace of 40 processes, 177 B/event were resident after the attribution for 128 in use.
``malloc_trim`` returns them. Elsewhere (not glibc) it does nothing.
"""

from __future__ import annotations

import ctypes
import functools
import sys
from collections.abc import Callable


@functools.cache
def _trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


def release_free_memory() -> None:
    trim = _trim()
    if trim is not None:
        trim(0)
