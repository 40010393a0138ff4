"""Nesting of the host events of each thread into a forest, the way torch does it.

torch (``EventList._populate_cpu_children``) sorts a thread's events by ``(start, -end)``
and keeps a stack of open events: an event is the child of the top-most stacked event that
contains it (``start < parent.end and end <= parent.end``); events that don't fit are
popped. For a laminar family of intervals (no partial overlaps) that is "the latest
earlier-starting event that still contains it", which numpy computes without a loop:

* depth(j) = number of earlier events (in that order) that end after j starts;
* parent(j) = the last earlier event of depth(j) - 1.

Real traces do have partially overlapping ranges on one thread. A thread where the computed
parent does not contain its child is not laminar, and is nested again with torch's own stack
algorithm, so the result equals torch's in every case; the count is reported.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from profsight.model.events import I64

NO_PARENT = -1


@dataclass(frozen=True)
class Nesting:
    parent: I64
    """Per input event: index (into the inputs) of its parent, or NO_PARENT."""
    depth: I64
    order: I64
    """Input indices in torch's order: by thread, then ``(start, -end)``, then input order."""
    overlapping_threads: int
    """Threads that held partially overlapping ranges (nested by the stack algorithm)."""


def nest(thread: I64, start: I64, end: I64) -> Nesting:
    n = len(start)
    parent = np.full(n, NO_PARENT, np.int64)
    depth = np.zeros(n, np.int64)
    order = np.lexsort((np.arange(n), -end, start, thread)).astype(np.int64)
    if n == 0:
        return Nesting(parent, depth, order, 0)
    t_sorted = thread[order]
    cuts = np.flatnonzero(np.diff(t_sorted)) + 1
    bounds = np.concatenate(([0], cuts, [n]))
    overlapping = 0
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        idx = order[lo:hi]
        seg_parent, seg_depth, laminar = _nest_laminar(start[idx], end[idx])
        if not laminar:
            overlapping += 1
            seg_parent, seg_depth = _nest_stack(start[idx], end[idx])
        has_parent = seg_parent >= 0
        parent[idx[has_parent]] = idx[seg_parent[has_parent]]
        depth[idx] = seg_depth
    return Nesting(parent, depth, order, overlapping)


def _nest_laminar(s: I64, e: I64) -> tuple[I64, I64, bool]:
    """Parents (as positions) and depths of one thread's events, sorted by (start, -end)."""
    n = len(s)
    pos = np.arange(n)
    # events ending at or before each start; of those, the zero-length events sitting at that
    # very start come after it in the order (and the event itself, if zero-length), so they
    # are not "earlier"
    ended = np.searchsorted(np.sort(e), s, side="right")
    zero = (e == s).astype(np.int64)
    zcum = np.cumsum(zero)
    same_start_end = np.searchsorted(s, s, side="right") - 1
    zero_after = zcum[same_start_end] - zcum
    depth = pos - (ended - zero_after - zero)
    parent = np.full(n, NO_PARENT, np.int64)
    nested = depth > 0
    if nested.any():
        key = depth * (n + 1) + pos
        key_order = np.argsort(key, kind="stable")
        sorted_key = key[key_order]
        found = np.searchsorted(sorted_key, (depth[nested] - 1) * (n + 1) + pos[nested]) - 1
        candidate = key_order[np.maximum(found, 0)]
        valid = (found >= 0) & (depth[candidate] == depth[nested] - 1)
        parent[nested] = np.where(valid, candidate, NO_PARENT)
        p = parent[nested]
        laminar = bool(valid.all()) and _contains(e[p], s[nested], e[nested])
        return parent, depth, laminar
    return parent, depth, True


def _contains(parent_end: I64, child_start: I64, child_end: I64) -> bool:
    """torch's containment test (the parent starts no later, by the order)."""
    return bool(np.all((child_start < parent_end) & (child_end <= parent_end)))


def _nest_stack(s: I64, e: I64) -> tuple[I64, I64]:
    """torch's stack algorithm, verbatim in behaviour, for threads with partial overlaps."""
    n = len(s)
    parent = [NO_PARENT] * n
    depth = [0] * n
    stack: list[int] = []
    starts = s.tolist()
    ends = e.tolist()
    for j in range(n):
        sj, ej = starts[j], ends[j]
        while stack:
            top = stack[-1]
            if sj >= ends[top] or ej > ends[top]:
                stack.pop()
            else:
                parent[j] = top
                depth[j] = depth[top] + 1
                break
        stack.append(j)
    return np.array(parent, np.int64), np.array(depth, np.int64)
