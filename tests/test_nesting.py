"""The vectorised nesting equals torch's stack algorithm on any set of ranges."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profsight.model import nesting
from profsight.model.nesting import _nest_stack, nest

ranges = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 60), st.integers(0, 25)),
    min_size=0,
    max_size=80,
)


def reference(
    thread: np.ndarray, start: np.ndarray, end: np.ndarray, order: np.ndarray
) -> np.ndarray:
    parent = np.full(len(start), -1)
    for t in np.unique(thread):
        idx = order[thread[order] == t]
        p, _ = _nest_stack(start[idx], end[idx])
        parent[idx[p >= 0]] = idx[p[p >= 0]]
    return parent


@pytest.mark.parametrize(("chunk", "narrow"), [(nesting._CHUNK, nesting._NARROW_DEPTH), (2, 2)])
@settings(max_examples=400, deadline=None)
@given(spec=ranges)
def test_nesting_equals_torchs_stack_algorithm(
    chunk: int, narrow: int, spec: list[tuple[int, int, int]]
) -> None:
    """Also with the containment test two children at a time (a million on a huge trace): a
    partial overlap in any chunk sends the thread to the stack algorithm; and with depths
    sorted as 64-bit integers from depth 2 (16-bit ones below 2**15)."""
    thread = np.array([t for t, _, _ in spec], np.int64)
    start = np.array([s for _, s, _ in spec], np.int64)
    end = start + np.array([d for _, _, d in spec], np.int64)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(nesting, "_CHUNK", chunk)
        patch.setattr(nesting, "_NARROW_DEPTH", narrow)
        result = nest(thread, start, end)
    assert np.array_equal(result.parent, reference(thread, start, end, result.order))


def laminar(draw: st.DrawFn, lo: int, hi: int, depth: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    t = lo
    while t < hi and draw(st.booleans()):
        length = draw(st.integers(0, hi - t))
        out.append((t, t + length))
        if depth < 4 and length > 1:
            out += laminar(draw, t, t + length, depth + 1)
        if draw(st.integers(0, 9)) == 0:
            out.append((t, t + length))  # an identical range, nested in the first
        t += length + draw(st.integers(0, 2))
    return out


@st.composite
def laminar_families(draw: st.DrawFn) -> list[tuple[int, int]]:
    return laminar(draw, 0, 200, 0)


@settings(max_examples=300, deadline=None)
@given(laminar_families())
def test_laminar_families_take_the_vectorised_path(spec: list[tuple[int, int]]) -> None:
    start = np.array([s for s, _ in spec], np.int64)
    end = np.array([e for _, e in spec], np.int64)
    thread = np.zeros(len(spec), np.int64)
    result = nest(thread, start, end)
    assert result.overlapping_threads == 0
    assert np.array_equal(result.parent, reference(thread, start, end, result.order))
    has = result.parent >= 0
    assert np.all(result.depth[has] == result.depth[result.parent[has]] + 1)


def test_partial_overlap_is_not_a_child() -> None:
    # A=[0,10) B=[5,15): B overlaps A without nesting; C=[6,8) sits in both: torch gives it B
    start = np.array([0, 5, 6])
    end = np.array([10, 15, 8])
    result = nest(np.zeros(3, np.int64), start, end)
    assert result.parent.tolist() == [-1, -1, 1]
    assert result.overlapping_threads == 1


def test_zero_length_event_at_a_parents_end_is_not_its_child() -> None:
    start = np.array([0, 10, 0])
    end = np.array([10, 10, 0])
    assert nest(np.zeros(3, np.int64), start, end).parent.tolist() == [-1, -1, 0]


def _no_stack(s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    raise AssertionError("the cut thread was not laminar: the stack was needed")


@settings(max_examples=400, deadline=None)
@given(spec=ranges)
def test_overlapping_ranges_are_nested_without_a_loop(spec: list[tuple[int, int, int]]) -> None:
    """Threads with partial overlaps (Lightning's ranges straddle each other on every step)
    get torch's parents and depths from the cut ends, never from the per-event stack."""
    start = np.array([s for _, s, _ in spec], np.int64)
    end = start + np.array([d * (t > 0) for t, _, d in spec], np.int64)  # zero-length too
    order = np.lexsort((-end, start))
    start, end = start[order], end[order]
    expected = _nest_stack(start, end)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(nesting, "_nest_stack", _no_stack)
        parent, depth = nesting._nest_overlapping(start, end)
    assert parent.tolist() == expected[0].tolist()
    assert depth.tolist() == expected[1].tolist()


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.integers(-5, 5), max_size=70))
def test_first_greater_after_each_position(values: list[int]) -> None:
    found = nesting._first_greater_after(np.array(values, np.int64)).tolist()
    n = len(values)
    brute = [next((k for k in range(i + 1, n) if values[k] > values[i]), n) for i in range(n)]
    assert found == brute


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 6), max_size=40))
def test_last_of_equal_is_the_last_position_of_each_value(values: list[int]) -> None:
    s = np.sort(np.array(values, np.int64))
    expected = np.searchsorted(s, s, side="right") - 1
    assert np.array_equal(nesting._last_of_equal(s), expected)


@settings(max_examples=400, deadline=None)
@given(spec=ranges)
def test_an_overlap_with_the_next_event_is_never_laminar(spec: list[tuple[int, int, int]]) -> None:
    """`nest` sends a thread where an event partially overlaps the next one straight to the
    overlapping path: the laminar pass would have failed on it, so the thread is counted as
    overlapping exactly as before."""
    start = np.array([s for _, s, _ in spec], np.int64)
    end = start + np.array([d for _, _, d in spec], np.int64)
    order = np.lexsort((-end, start))
    start, end = start[order], end[order]
    if nesting._overlaps_next(start, end):
        assert not nesting._nest_laminar(start, end)[2]


def test_a_thread_overlapping_its_next_event_is_nested_once() -> None:
    """A=[0,10) B=[5,15) C=[6,8): the laminar pass runs once, on the cut ends, not first on
    the uncut ones too."""
    calls: list[int] = []
    laminar_pass = nesting._nest_laminar

    def counted(s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
        calls.append(len(s))
        return laminar_pass(s, e)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(nesting, "_nest_laminar", counted)
        result = nest(np.zeros(3, np.int64), np.array([0, 5, 6]), np.array([10, 15, 8]))
    assert result.parent.tolist() == [-1, -1, 1]
    assert result.overlapping_threads == 1
    assert calls == [3]
