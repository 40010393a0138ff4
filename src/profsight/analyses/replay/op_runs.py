"""Runs of ops the what-if edits read: each op's holding share, medians by name, the step's
top-level ops and the runs a Python loop repeats.
"""

from __future__ import annotations

import numpy as np

from profsight.analyses.context import Context
from profsight.knowledge import advice
from profsight.knowledge.ops import EVALUATE_FUNCTION_PREFIX
from profsight.knowledge.trace_schema import EventKind
from profsight.model.events import F64, I8, I32, I64, Indices
from profsight.stats import unique


def holding(ctx: Context, ops: Indices, calls: I64) -> np.ndarray:
    """Which of `ops` hold one of `calls` (the op itself or a descendant of it)."""
    parent = ctx.profile.attribution.parent
    is_op = np.zeros(len(parent), bool)
    is_op[ops] = True
    up = calls.copy()
    climbing = (up >= 0) & ~is_op[np.maximum(up, 0)]
    while climbing.any():  # one level per pass: as many passes as the calls are deep
        up[climbing] = parent[up[climbing]]
        climbing = (up >= 0) & ~is_op[np.maximum(up, 0)]
    return np.isin(ops, up[up >= 0])


def median_by_name(names: np.ndarray, values: F64, among: np.ndarray) -> F64:
    """For each position, the median of `values` over the positions in `among` with its
    name (inf for a name none of them has)."""
    out = np.full(len(names), np.inf)
    if not among.any():
        return out
    ids, inverse = np.unique(names[among], return_inverse=True)
    medians = group_medians(inverse.reshape(-1), values[among], len(ids))
    pos = np.searchsorted(ids, names)
    found = (pos < len(ids)) & (ids[np.minimum(pos, len(ids) - 1)] == names)
    out[found] = medians[pos[found]]
    return out


def group_medians(group: np.ndarray, values: F64, groups: int) -> F64:
    """The median of `values` in each of `groups` groups (`group`: each value's), by one sort
    by (group, value): O(n log n), not a pass over the values per group."""
    order = np.lexsort((values, group))
    sorted_values = values[order]
    counts = np.bincount(group, minlength=groups)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    low = starts + (counts - 1) // 2
    high = starts + counts // 2
    medians: F64 = (sorted_values[low] + sorted_values[high]) / 2.0
    return medians


def top_ops(ctx: Context) -> tuple[I32, I8]:
    """The step thread's ops that no other op contains, in time order, and their phases
    (`phase_code`)."""
    bd = ctx.breakdown
    ev = ctx.profile.events
    rows, phases = bd.row_events, bd.row_phase
    is_op = ev.kind[rows] == EventKind.CPU_OP if len(rows) else np.zeros(0, bool)
    rows, phases = rows[is_op], phases[is_op]
    top = ~np.isin(ctx.profile.attribution.parent[rows], rows)
    rows, phases = rows[top], phases[top]
    order = np.argsort(ev.start[rows], kind="stable")
    return rows[order], phases[order]


def runs(
    ctx: Context,
    ops: Indices,
    member: np.ndarray,
    gap_us: float = advice.TINY_OP_US,
    short: np.ndarray | None = None,
) -> tuple[I64, I64, F64, set[str]]:
    """Runs of consecutive `member` ops of `ops` (time order) with gaps under `gap_us`, that
    repeat a name: the spans each run covers, the factor one op per name gives it, and their
    names. Where `short` is False a member call neither cuts its run nor lies in its spans
    (the run's spans stop before it and start again after it). Column by column: runs and
    their pieces are where the flags change."""
    ev = ctx.profile.events
    ops = np.asarray(ops, np.int64)
    member = np.asarray(member, bool)
    own = np.ones(len(ops), bool) if short is None else np.asarray(short, bool)
    start, end = ev.start[ops], ev.end_of(ops)
    gap = np.zeros(len(ops))
    gap[1:] = (start[1:] - end[:-1]) / 1000.0
    opens = member.copy()
    opens[1:] &= ~member[:-1] | (gap[1:] > gap_us)
    pos = np.flatnonzero(member)
    run = (np.cumsum(opens) - 1)[pos]
    name = ev.name[ops[pos]].astype(np.int64)
    length = np.bincount(run) if len(run) else np.zeros(0, np.int64)
    width = len(ev.strings) + 1
    kinds = np.bincount(unique(run * width + name) // width, minlength=len(length))
    repeats = (length > 1) & (kinds < length)
    keep = repeats[run]
    pos, run, name = pos[keep], run[keep], name[keep]
    mine = own[pos]
    same_run = run[1:] == run[:-1]
    first = mine.copy()
    first[1:] &= ~(same_run & mine[:-1])
    last = mine.copy()
    last[:-1] &= ~(same_run & mine[1:])
    factor = kinds / np.maximum(length, 1)
    return (
        start[pos[first]].astype(np.int64),
        end[pos[last]].astype(np.int64),
        factor[run[first]].astype(np.float64),
        {forward_name(ev.strings[k]) for k in unique(name).tolist()},
    )


def forward_name(name: str) -> str:
    """``aten::mul`` of ``aten::mul`` and of ``autograd::engine::evaluate_function:
    MulBackward0``: the op a backward node differentiates, in lower case without
    underscores."""
    if name.startswith(EVALUATE_FUNCTION_PREFIX):
        node = name[len(EVALUATE_FUNCTION_PREFIX) :]
        return node.split("Backward", 1)[0].lower().replace("_", "")
    return name.split("::", 1)[-1].lower().replace("_", "")


def until_next_event(ctx: Context, instants: I64) -> tuple[I64, I64]:
    """From each instant event to the next host event on its thread that starts after it."""
    ev = ctx.profile.events
    host = np.flatnonzero(ev.mask(frozenset({EventKind.CPU_OP, EventKind.ANNOTATION})))
    starts, ends = [], []
    for track in unique(ev.track[instants]).tolist():
        mine = instants[ev.track[instants] == track]
        on = np.sort(ev.start[host[ev.track[host] == track]])
        k = np.searchsorted(on, ev.start[mine], side="right")
        ok = k < len(on)
        starts.append(ev.start[mine][ok])
        ends.append(on[k[ok]])
    if not starts:
        z = np.zeros(0, np.int64)
        return z, z
    return np.concatenate(starts), np.concatenate(ends)
