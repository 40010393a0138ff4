"""Freed memory goes back to the system where it is worth it (`profsight.malloc_trim`)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from profsight import malloc_trim

MB = 1 << 20


def test_a_trim_is_made_where_the_unused_resident_memory_grew(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The rule, on scripted sizes (resident and unused, in use): a trim where the unused
    part grew by a quarter of what is in use (16 MB at least) since the last trim; the
    growth counts from the lowest point since, so memory reused and freed again counts."""
    heap = malloc_trim._heap()
    if heap is None:
        pytest.skip("glibc only")
    sizes = iter(
        [
            (10 * MB, 100 * MB),  # after the first trim
            (30 * MB, 100 * MB),  # +20 MB: under a quarter of 100 MB
            (36 * MB, 100 * MB),  # +26 MB: a trim
            (12 * MB, 100 * MB),  # after it
            (5 * MB, 40 * MB),  # reused: the growth counts from here
            (20 * MB, 40 * MB),  # +15 MB: under the 16 MB floor
            (22 * MB, 40 * MB),  # +17 MB: a trim
            (4 * MB, 40 * MB),  # after it
        ]
    )
    trims: list[int] = []
    monkeypatch.setattr(heap, "free", lambda: 1 << 40)  # (what malloc holds free: no bound)
    monkeypatch.setattr(heap, "sizes", lambda: next(sizes))
    monkeypatch.setattr(heap, "trim", lambda pad: trims.append(pad) or 1)
    malloc_trim.release_free_memory()
    assert (len(trims), heap.free_at_trim) == (1, 10 * MB)
    malloc_trim.release_grown_memory()
    assert len(trims) == 1
    malloc_trim.release_grown_memory()
    assert (len(trims), heap.free_at_trim) == (2, 12 * MB)
    malloc_trim.release_grown_memory()
    assert (len(trims), heap.free_at_trim) == (2, 5 * MB)
    malloc_trim.release_grown_memory()
    assert len(trims) == 2
    malloc_trim.release_grown_memory()
    assert (len(trims), heap.free_at_trim) == (3, 4 * MB)


def test_no_trim_and_no_reading_where_malloc_holds_too_little_free(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A trim gives back at most the bytes malloc holds free: under the floors, neither call
    reads the process's sizes nor trims; at the floors, both do."""
    heap = malloc_trim._heap()
    if heap is None:
        pytest.skip("glibc only")
    free = [malloc_trim.TRIM_FLOOR - 1]
    reads: list[int] = []
    trims: list[int] = []
    monkeypatch.setattr(heap, "free", lambda: free[0])
    monkeypatch.setattr(heap, "sizes", lambda: reads.append(1) or (64 * MB, 64 * MB))
    monkeypatch.setattr(heap, "trim", lambda pad: trims.append(pad) or 1)
    monkeypatch.setattr(heap, "free_at_trim", 0)
    malloc_trim.release_free_memory()
    free[0] = malloc_trim.GROWTH_FLOOR - 1
    malloc_trim.release_grown_memory()
    assert (reads, trims) == ([], [])
    malloc_trim.release_free_memory()  # at least TRIM_FLOOR free: a trim
    assert (len(reads), len(trims)) == (1, 1)
    free[0] = malloc_trim.GROWTH_FLOOR
    monkeypatch.setattr(heap, "free_at_trim", 0)
    malloc_trim.release_grown_memory()  # 64 MB grown, at least the floor: a trim
    assert (len(reads), len(trims)) == (3, 2)  # (the sizes before the trim and after)


def test_a_skipped_low_point_still_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory reused until malloc holds little free (the sizes go unread), then freed
    again: the growth counts from that low point, not from the last trim's higher one."""
    heap = malloc_trim._heap()
    if heap is None:
        pytest.skip("glibc only")
    free = [1 << 40]
    sizes = iter([(200 * MB, 400 * MB), (150 * MB, 400 * MB), (10 * MB, 400 * MB)])
    trims: list[int] = []
    monkeypatch.setattr(heap, "free", lambda: free[0])
    monkeypatch.setattr(heap, "sizes", lambda: next(sizes))
    monkeypatch.setattr(heap, "trim", lambda pad: trims.append(pad) or 1)
    malloc_trim.release_free_memory()  # a trim leaving 200 MB resident and unused
    free[0] = 2 * MB  # then reused: under the floor, nothing read
    malloc_trim.release_grown_memory()
    free[0] = 150 * MB  # freed again: 150 MB unused, grown from the skipped low point
    malloc_trim.release_grown_memory()
    assert len(trims) == 2


_HOLES = """
from profsight import malloc_trim

heap = malloc_trim._heap()
malloc_trim.release_free_memory()
blocks = [bytearray(64 << 10) for _ in range(4096)]  # 256 MB in the heap (below mmap's)
del blocks[::2]  # 128 MB of holes the live half keeps from the heap's top
held = heap.sizes()[0]
malloc_trim.release_grown_memory()
print(held >> 20, heap.sizes()[0] >> 20)
"""


def test_a_stage_that_leaves_holes_gives_them_back() -> None:
    """In a fresh process (what it held before does not count): 128 MB of holes left by a
    stage are resident and unused until `release_grown_memory` gives them back."""
    if malloc_trim._heap() is None or malloc_trim._heap().sizes() is None:
        pytest.skip("glibc >= 2.33 with /proc only")
    done = subprocess.run(
        [sys.executable, "-c", _HOLES], capture_output=True, text=True, check=True
    )
    before, after = map(int, done.stdout.split())
    assert before >= 120 and after < before - 100
