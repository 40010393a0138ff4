"""Freed memory goes back to the system where it is worth it (`profsight.malloc_trim`)."""

from __future__ import annotations

import pytest

from profsight import malloc_trim


def test_a_trim_is_made_where_the_heap_grew_and_not_again_before_it_grows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    heap = malloc_trim._heap()
    if heap is None or heap.info is None:
        pytest.skip("glibc >= 2.33 only (mallinfo2)")
    trims: list[int] = []
    trim = heap.trim
    monkeypatch.setattr(heap, "trim", lambda pad: trims.append(pad) or trim(pad))
    malloc_trim.release_free_memory()  # a known start: trimmed, the free bytes noted
    assert len(trims) == 1
    blocks = [bytearray(64 << 10) for _ in range(1024)]  # 64 MB in the heap (below mmap's)
    del blocks[::2]  # 32 MB of holes the live half keeps from the heap's top
    malloc_trim.release_grown_memory()
    assert len(trims) == 2  # grew by 32 MB, over a quarter of what is in use
    malloc_trim.release_grown_memory()
    assert len(trims) == 2  # nothing grew since
    freed = heap.info().fordblks
    more = [bytearray(64 << 10) for _ in range(64)]  # 4 MB taken from the holes
    del more
    assert heap.info().fordblks <= freed + (1 << 20)
    malloc_trim.release_grown_memory()
    assert len(trims) == 2  # what a stage freed, the next one reused: no trim
    del blocks
