"""The device side of a torch <= 1.6 table, whose device times are inclusive only.

The legacy ``autograd.profiler`` printed no ``Self CUDA``: each op's ``CUDA total`` is the time
between two CUDA events recorded on the stream as the op began and ended (about the larger of
its device time and its host time), and ``CUDA time total`` sums those inclusive times over
nested ops, counting a kernel once per op around it. So neither the footer nor a row with ops
inside it says what the device did. One row does: an op whose self CPU time is its CPU total
had no op inside it (torch's self time is the total less the children's), so the device time
between its events is its own. These leaves carry the device's work, by family.

Their ``CUDA total %`` is a share of the footer's inclusive sum, which counts every leaf once
and the ops around them again: a leaf family's printed share is therefore a lower bound on its
share of the device's work, which a fragment of the table still carries.
"""

from __future__ import annotations

from profsight.knowledge.op_families import op_family
from profsight.knowledge.ops import lookup_op
from profsight.knowledge.rows import RowKind
from profsight.model.table import ProfilerTable, Row

#: `PrintedDevice.family_basis` of a legacy table's device families.
LEAF_BASIS = "leaf ops' device totals (torch <= 1.6 prints inclusive device times only)"
#: Rows that are ops (an autograd node is one in torch <= 1.6's tables); ranges and labels
#: (``record_function``, modules) hold no device work of their own.
_OP_KINDS = frozenset({RowKind.ATEN, RowKind.BACKWARD})
#: Printed times have four significant digits (``518.336ms``, ``1.608ms``): a self time
#: within this fraction of its total is equal to it, as printed.
_PRINTED_ROUNDING = 1e-3


def is_leaf(row: Row, kind: RowKind) -> bool:
    """An op with no op inside it: its self CPU time is its CPU total, as printed."""
    return (
        kind in _OP_KINDS
        and row.cpu_total_us > 0
        and row.self_cpu_us >= row.cpu_total_us * (1.0 - _PRINTED_ROUNDING)
    )


def device_leaves(table: ProfilerTable, kinds: dict[int, RowKind]) -> list[Row]:
    """The leaves that ran device work: their device totals are their own."""
    return [r for r in table.rows if r.device_total_us > 0 and is_leaf(r, kinds[id(r)])]


def leaf_work_us(table: ProfilerTable, leaves: list[Row]) -> float:
    """The device's work in the window: the printed leaves' device time, plus what the
    footer's inclusive sum holds beyond the printed rows (the rows a top-N table left out,
    leaves or not): exact for a whole table, an upper bound for a cut one."""
    printed = sum(r.device_total_us for r in table.rows)
    unprinted = max(table.self_device_total_us - printed, 0.0)
    return sum(r.device_total_us for r in leaves) + unprinted


def leaf_families(
    leaves: list[Row], steps: int
) -> tuple[dict[str, float], dict[str, tuple[Row, ...]], str]:
    """Device time per step by family, from the leaves' own device time."""
    groups: dict[str, list[Row]] = {}
    for row in leaves:
        groups.setdefault(family_of(row), []).append(row)
    spent = {f: sum(r.device_total_us for r in rows) / steps for f, rows in groups.items()}
    ordered = {
        f: tuple(sorted(rows, key=lambda r: -r.device_total_us)) for f, rows in groups.items()
    }
    return spent, ordered, LEAF_BASIS


def family_of(row: Row) -> str:
    info = lookup_op(row.name)
    return op_family(info.category if info is not None else None)
