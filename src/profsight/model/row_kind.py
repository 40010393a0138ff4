"""`row_kind`: which layer a row of a profiler table belongs to (`knowledge.rows`), for
printed tables too, whose rows carry no event kind."""

from __future__ import annotations

from profsight.knowledge.ops import lookup_op
from profsight.knowledge.rows import RowKind, classify
from profsight.model.table import ProfilerTable, Row


def row_kind(row: Row, table: ProfilerTable) -> RowKind:
    """The row's kind; for printed tables (no event kinds) unknown names are judged by their
    numbers: a row with CPU time is a ``record_function`` label, and so is a device-only row
    that shares its name with one (torch prints the device side of a label as its own row)."""
    kind = classify(row.name, row.event_kind)
    if kind is not RowKind.OTHER or row.event_kind != "unknown":
        return kind
    op = lookup_op(row.name)
    if op is not None:  # e.g. ops printed without "aten::" (torch <= 1.5)
        return _OP_CATEGORY_KINDS.get(op.category, RowKind.ATEN)
    if row.cpu_total_us > 0 or any(r.name == row.name and r.cpu_total_us > 0 for r in table.rows):
        return RowKind.USER
    return kind


#: Row kinds of rows the name rules left unclassified, by their op-glossary category.
_OP_CATEGORY_KINDS = {
    "runtime": RowKind.RUNTIME,
    "sync": RowKind.SYNC,
    "memcpy": RowKind.RUNTIME,
    "communication": RowKind.COMMUNICATION,
    "optimizer": RowKind.OPTIMIZER,
    "autograd": RowKind.BACKWARD,
    "profiler": RowKind.OTHER,
    "other": RowKind.OTHER,
}
