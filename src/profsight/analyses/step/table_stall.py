"""Host time a printed table holds in one pass that no recorded op explains: a stall.

A range called once in a window of one step (a ``record_function`` label, the one
``ProfilerStep``) holds as self CPU time the host time inside it and outside every recorded
op. Spread over the op calls it spans, Python between ops costs tens of microseconds a call
(the interpreter, ``nn.Module.__call__`` and its hooks, the dispatcher): time at
`STALL_GAP_US` or more a call is no per-op overhead but a few long stalls the profiler did not
record: a first pass's start-up outside the launch rows (the context, cuDNN and cuBLAS
handles, loading GPU code), reading or preparing data outside torch ops, a sleep, a wait on
another process. One pass cannot say whether it recurs each step, so the window is not judged
on it (`analyses.step.startup.dominates`): the reading says what to record instead.

The op calls are the most calls of any printed op row: every call of it is a boundary
between two ops inside the window, so the figure per call is at most the printed one's; a
table cut to its top rows can hide more calls, and then the stall reads larger than it is,
which makes the reading "not judged", never a wrong cause.
"""

from __future__ import annotations

import msgspec

from profsight.knowledge.catalogue import limit
from profsight.knowledge.rows import RowKind
from profsight.model.row_kind import row_kind
from profsight.model.table import ProfilerTable, Row

#: The ranges whose self time is host time outside the ops they hold.
_RANGES = frozenset({RowKind.USER, RowKind.STEP})
#: The profiler-setup rule's own threshold (`knowledge.catalogue`, its basis beside it).
STALL_GAP_US = limit("profiler_setup", "STALL_GAP_US")


class Stall(msgspec.Struct, frozen=True):
    """The largest one-pass range whose own time no per-op cost explains."""

    row: Row
    share_pct: float
    """Its self CPU time, % of the table's ``Self CPU time total``."""
    per_op_us: float
    """Its self CPU time per op call in the window."""
    op: Row
    """The op row of most calls (the op calls counted)."""


def printed_stall(table: ProfilerTable, steps: int) -> Stall | None:
    """The stall a table of one step shows (None: none, or several steps, whose ranges'
    self time recurs and is the step's own)."""
    total = table.self_cpu_total_us
    if steps != 1 or not total:
        return None
    kinds = {id(r): row_kind(r, table) for r in table.rows}
    ops = [r for r in table.rows if kinds[id(r)] is RowKind.ATEN and r.calls]
    if not ops:
        return None  # no op to count the boundaries by
    op = max(ops, key=lambda r: r.calls)
    found = [
        Stall(r, r.self_cpu_us * 100.0 / total, r.self_cpu_us / op.calls, op)
        for r in table.rows
        if kinds[id(r)] in _RANGES and r.calls == 1 and r.self_cpu_us >= STALL_GAP_US * op.calls
    ]
    return max(found, key=lambda s: s.share_pct, default=None)


__all__ = ["Stall", "printed_stall"]
