"""Sets of time intervals as sorted, disjoint numpy arrays (ns), and their measure."""

from __future__ import annotations

import numpy as np

from profsight.model.events import F64, I64, Bool

#: Queries computed at once by the functions that take one per event.
CHUNK = 1 << 20


def union(start: I64, end: I64) -> tuple[I64, I64]:
    """The union of intervals [start, end), as sorted disjoint intervals. Input already in
    order of start (a thread's segments) is not sorted again: no index column and no sorted
    copies, only the running maximum of the ends and a mask."""
    keep = end > start
    if not keep.all():
        start, end = start[keep], end[keep]
    del keep
    if len(start) == 0:
        return start, end
    if not ascending(start):
        order = np.argsort(start, kind="stable")
        start, end = start[order], end[order]
        del order
    e = np.maximum.accumulate(end)
    # a new interval begins where it starts after everything before it ended; each ends at
    # the running end of its last member
    new = np.ones(len(start), bool)
    np.greater(start[1:], e[:-1], out=new[1:])
    first = np.flatnonzero(new)
    del new
    out_s = start[first]
    last = np.empty_like(first)
    last[:-1] = first[1:] - 1
    last[-1] = len(start) - 1
    out_e = e[last]
    return out_s, out_e


def ascending(values: I64) -> bool:
    """Whether `values` never decrease (checked a chunk at a time: no mask as long as them)."""
    for lo in range(0, max(len(values) - 1, 0), CHUNK):
        hi = min(lo + CHUNK, len(values) - 1)
        if not np.all(values[lo + 1 : hi + 1] >= values[lo:hi]):
            return False
    return True


def length(start: I64, end: I64) -> int:
    """Measure of a set of disjoint intervals."""
    return int(np.sum(end - start))


def clip(start: I64, end: I64, lo: int, hi: int) -> tuple[I64, I64]:
    s, e = np.maximum(start, lo), np.minimum(end, hi)
    keep = e > s
    return s[keep], e[keep]


def near(start: I64, end: I64, lo: int, hi: int) -> tuple[I64, I64]:
    """The intervals of a sorted disjoint set that overlap [lo, hi), found by bisection (not
    clipped): what `clip` keeps, in time logarithmic in the set's size."""
    first = int(np.searchsorted(end, lo, side="right"))
    stop = max(first, int(np.searchsorted(start, hi, side="left")))
    return start[first:stop], end[first:stop]


class Bisected:
    """Intervals in any order, overlapping or not, indexed to find those that can overlap a
    window without a pass over all of them: sorted by start, with the running maximum of
    their ends (every interval before the first whose running end passes ``lo`` ends by
    ``lo``)."""

    def __init__(self, start: I64, end: I64) -> None:
        # intervals already in order of start (a thread's segments) are used as they are
        self.order: I64 | None = None
        if not ascending(start):
            self.order = np.argsort(start, kind="stable")
            start, end = start[self.order], end[self.order]
        self.start = start
        self.reach = np.maximum.accumulate(end) if len(end) else end

    def around(self, lo: int, hi: int) -> I64:
        """Indices (into the inputs, in their order) of a superset of the intervals that
        overlap [lo, hi): the others there overlap nothing of it."""
        first = int(np.searchsorted(self.reach, lo, side="right"))
        stop = max(first, int(np.searchsorted(self.start, hi, side="left")))
        if self.order is None:
            return np.arange(first, stop, dtype=np.int64)
        found: I64 = np.sort(self.order[first:stop])
        return found


def overlap(a: tuple[I64, I64], b: tuple[I64, I64]) -> int:
    """Measure of the intersection of two disjoint interval sets: |A| + |B| - |A u B|."""
    both = union(np.concatenate([a[0], b[0]]), np.concatenate([a[1], b[1]]))
    return length(*a) + length(*b) - length(*both)


def at_least_two(sets: list[tuple[I64, I64]]) -> int:
    """Measure of the time at least two of `sets` (each sorted and disjoint) cover."""
    if len(sets) < 2:
        return 0
    starts = np.concatenate([s for s, _ in sets])
    ends = np.concatenate([e for _, e in sets])
    times = np.concatenate([starts, ends])
    steps = np.concatenate([np.ones(len(starts), np.int64), -np.ones(len(ends), np.int64)])
    order = np.lexsort((steps, times))  # at equal times, ends before starts
    times, depth = times[order], np.cumsum(steps[order])
    return int(np.sum(np.diff(times)[depth[:-1] >= 2]))


def complement(start: I64, end: I64, lo: int, hi: int) -> tuple[I64, I64]:
    """[lo, hi) minus a set of disjoint sorted intervals inside it."""
    s, e = clip(start, end, lo, hi)
    gaps_s = np.concatenate([[lo], e])
    gaps_e = np.concatenate([s, [hi]])
    keep = gaps_e > gaps_s
    return gaps_s[keep].astype(np.int64), gaps_e[keep].astype(np.int64)


def minus(spans: tuple[I64, I64], cut: tuple[I64, I64]) -> tuple[I64, I64]:
    """`spans` without `cut` (both sets sorted and disjoint)."""
    if len(cut[0]) == 0 or len(spans[0]) == 0:
        return spans
    lo, hi = int(spans[0].min()), int(spans[1].max())
    outside = complement(*spans, lo, hi)
    blocked = union(np.concatenate([outside[0], cut[0]]), np.concatenate([outside[1], cut[1]]))
    return complement(*blocked, lo, hi)


class _Measure:
    """A sorted set of disjoint intervals, and for any point the measure of the set before it
    (the running sums made once for every chunk of queries)."""

    def __init__(self, disjoint: tuple[I64, I64]) -> None:
        self.s, e = disjoint
        self.lengths = e - self.s
        self.before = np.concatenate([[0], np.cumsum(self.lengths)[:-1]])

    def between(self, start: I64, end: I64) -> I64:
        """The measure of the set inside each [start, end) (negative for end < start)."""
        between: I64 = self._below(end) - self._below(start)
        return between

    def _below(self, x: I64) -> I64:
        k = np.searchsorted(self.s, x, side="right") - 1
        kk = np.maximum(k, 0)
        below: I64 = np.where(
            k >= 0, self.before[kk] + np.clip(x - self.s[kk], 0, self.lengths[kk]), 0
        )
        return below


def overlap_each(start: I64, end: I64, disjoint: tuple[I64, I64]) -> I64:
    """For each interval [start, end), the measure of its intersection with `disjoint` (a
    sorted set of disjoint intervals). Computed `CHUNK` intervals at a time: the queries can
    be every op of a huge trace, and each takes a dozen temporaries."""
    result = np.zeros(len(start), np.int64)
    if len(disjoint[0]) == 0 or len(start) == 0:
        return result
    measure = _Measure(disjoint)
    for lo in range(0, len(start), CHUNK):
        hi = lo + CHUNK
        np.maximum(measure.between(start[lo:hi], end[lo:hi]), 0, out=result[lo:hi])
    return result


def overlaps(start: I64, end: I64, disjoint: tuple[I64, I64]) -> Bool:
    """For each interval [start, end), whether it overlaps `disjoint` (a sorted set of
    disjoint intervals) for a positive time: `overlap_each` > 0, one byte per query."""
    found = np.zeros(len(start), bool)
    if len(disjoint[0]) == 0 or len(start) == 0:
        return found
    measure = _Measure(disjoint)
    for lo in range(0, len(start), CHUNK):
        hi = lo + CHUNK
        found[lo:hi] = measure.between(start[lo:hi], end[lo:hi]) > 0
    return found


class Weighted:
    """Sorted disjoint intervals [start, end), each with a weight, and for any point the sum
    over them of weight x (the part of the interval before the point). The running sums are
    made once, a chunk at a time: one float per interval, however many points are asked.
    With `complement`, each interval weighs 1 - its `weight` (what a scale factor takes
    away), with no copy of them."""

    def __init__(self, start: I64, end: I64, weight: F64, complement: bool = False) -> None:
        self.start, self.end, self.weight, self.complement = start, end, weight, complement
        self.full = np.zeros(len(start) + 1)
        total = 0.0
        for lo in range(0, len(start), CHUNK):
            hi = min(lo + CHUNK, len(start))
            part = np.subtract(end[lo:hi], start[lo:hi], dtype=np.float64)
            part *= self._weight(lo, hi)
            part[0] += total  # carried in: the same additions, in the same order, as one sum
            np.cumsum(part, out=self.full[lo + 1 : hi + 1])
            total = float(self.full[hi])

    def below(self, x: I64) -> F64:
        if len(self.start) == 0:
            return np.zeros(len(x))
        k = np.searchsorted(self.start, x, side="right") - 1
        kk = np.maximum(k, 0)
        length = self.end[kk] - self.start[kk]
        weight = 1.0 - self.weight[kk] if self.complement else self.weight[kk]
        partial = np.clip(x - self.start[kk], 0, length) * weight
        out: F64 = np.where(k >= 0, self.full[kk] + partial, 0.0)
        return out

    def _weight(self, lo: int, hi: int) -> F64:
        part = self.weight[lo:hi]
        return 1.0 - part if self.complement else part
