"""Giving freed memory back to the system after each stage of the work, when there is much
to give back.

Decoding makes and frees millions of small objects chunk after chunk; glibc keeps the freed
pages in its heap (measured: 0.24 GB resident for 0.08 GB in use after loading a 258 MB
trace, 0.14 GB after a trim), and the analyses that follow then add their arrays on top.
The analyses do the same with arrays of a few MB (one thread's or one process's events:
below glibc's mmap threshold, which grows to 32 MB as large arrays are freed): on a 10 GB
trace of 40 processes, 177 B/event were resident after the attribution for 128 in use.
``malloc_trim`` returns them. Elsewhere (not glibc) it does nothing.

A trim is not free: it walks the heap, and the pages it gives back fault in again (zeroed)
when the next stage allocates as much as the last one freed. So there are two calls:

* `release_free_memory` trims always: as the loader joins its chunks (their freed pieces
  the joined columns, larger and mapped on their own, never reuse; a load's peak is there),
  and in the decoding worker as it writes its result out;
* `release_grown_memory` trims only where the memory the process holds resident and unused
  (its resident anonymous pages less what malloc has handed out) grew since the last trim
  by at least `GROWTH_SHARE` of what is in use (and `GROWTH_FLOOR`): after the stages that
  follow (the attribution, the table, the tree, each analysis, each what-if replay), most
  of which free about what the next one allocates, reused in place. On a 54 MB trace,
  trimming after each of them cost ~70 ms of a 0.45 s diagnosis (faults of pages given
  back and taken again); a stage that frees much more than the next takes (a huge trace's
  attribution) still gives it back.

A trim can give back at most the bytes malloc holds free (``mallinfo2``'s ``fordblks``,
resident or not). Where they are under `TRIM_FLOOR` (always trimming) or `GROWTH_FLOOR`
(on growth), neither call reads ``/proc`` or trims: a small input's run asked 63 times,
~2 ms of a 3-event ``explain``, for nothing to give back.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from collections.abc import Callable

#: A trim is made when the resident unused bytes grew since the last one by this share of
#: the bytes in use (heap and mmapped blocks), and by at least `GROWTH_FLOOR`.
GROWTH_SHARE = 0.25
GROWTH_FLOOR = 16 << 20
#: `release_free_memory` does not trim a heap holding fewer free bytes than this.
TRIM_FLOOR = 1 << 20


class _MallInfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (glibc >= 2.33): sizes in bytes, as ``size_t``."""

    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


class _Heap:
    """glibc's trim and heap statistics; `free_at_trim`: the resident free bytes after the
    last trim."""

    def __init__(self, libc: ctypes.CDLL) -> None:
        self.trim: Callable[[int], int] = libc.malloc_trim
        self.info: Callable[[], _MallInfo2] | None = None
        info = getattr(libc, "mallinfo2", None)
        if info is not None:
            info.restype = _MallInfo2
            self.info = info
        self.free_at_trim = 0

    def sizes(self) -> tuple[int, int] | None:
        """(the bytes the process holds resident and unused: its resident memory not backed
        by a file, less what malloc has handed out; the bytes malloc has handed out), None
        where either is unknown. glibc's own count of free bytes cannot tell pages a trim
        gave back from pages used and freed again since."""
        if self.info is None:
            return None
        anonymous = _resident_anonymous()
        if anonymous is None:
            return None
        info = self.info()
        in_use = info.uordblks + info.hblkhd
        return max(anonymous - in_use, 0), in_use

    def free(self) -> int | None:
        """The bytes malloc holds free, resident or not: the most a trim can give back; None
        where unknown."""
        return None if self.info is None else self.info().fordblks

    def release(self) -> None:
        free = self.free()
        if free is not None and free < TRIM_FLOOR:
            self.free_at_trim = 0  # (as in `release_grown`: the growth counts from 0)
            return
        self.trim(0)
        sizes = self.sizes()
        self.free_at_trim = sizes[0] if sizes is not None else 0

    def release_grown(self) -> None:
        free = self.free()
        if free is not None and free < GROWTH_FLOOR:
            # Unread, the unused memory is known only to be at least 0: the growth counts
            # from there, so the next trim comes no later than a read would have made it (a
            # low point skipped must not leave the last, higher one to count from).
            self.free_at_trim = 0
            return
        sizes = self.sizes()
        if sizes is None:  # (no sizes to judge by: trim always)
            self.release()
            return
        unused, in_use = sizes
        if unused - self.free_at_trim < max(GROWTH_FLOOR, GROWTH_SHARE * in_use):
            self.free_at_trim = min(self.free_at_trim, unused)
            return
        self.release()


def _resident_anonymous() -> int | None:
    """The process's resident pages not backed by a file (``/proc/self/statm``: resident
    less shared), in bytes."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            fields = fh.read().split()
        return (int(fields[1]) - int(fields[2])) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@functools.cache
def _heap() -> _Heap | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return _Heap(ctypes.CDLL("libc.so.6"))
    except (OSError, AttributeError):
        return None


def release_free_memory() -> None:
    """Give the heap's free pages back to the system."""
    heap = _heap()
    if heap is not None:
        heap.release()


def release_grown_memory() -> None:
    """Give the heap's free pages back to the system where they grew enough since the last
    trim to be worth it (see the module's docstring)."""
    heap = _heap()
    if heap is not None:
        heap.release_grown()
