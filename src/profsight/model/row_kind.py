"""`row_kind`: which layer a row of a profiler table belongs to (`knowledge.rows`), for
printed tables too, whose rows carry no event kind."""

from __future__ import annotations

from profsight.knowledge.advice import COMPILED_REGION_ROWS
from profsight.knowledge.ops import lookup_op
from profsight.knowledge.rows import RowKind, classify
from profsight.model.table import ProfilerTable, Row


def row_kind(row: Row, table: ProfilerTable) -> RowKind:
    """The row's kind; for printed tables (no event kinds) unknown names are judged by their
    numbers: a row with CPU time is a ``record_function`` label, and so is a device-only row
    that shares its name with one (torch prints the device side of a label as its own row).
    A device-side label (`is_device_label`) is a label whatever its name says: it is never a
    kernel, a collective, a module or a step of its own."""
    if is_device_label(row, table):
        return RowKind.USER
    kind = classify(row.name, row.event_kind)
    if kind is RowKind.KERNEL and row.event_kind == "unknown" and row.cpu_total_us > 0:
        # a printed kernel has no CPU time: a host row named like one is an op or a range
        # (flash_attn::_flash_attn_varlen_forward)
        return RowKind.ATEN if "::" in row.name else RowKind.USER
    if kind is not RowKind.OTHER or row.event_kind != "unknown":
        return kind
    op = lookup_op(row.name)
    if op is not None:  # e.g. ops printed without "aten::" (torch <= 1.5)
        return _OP_CATEGORY_KINDS.get(op.category, RowKind.ATEN)
    if row.cpu_total_us > 0 or any(r.name == row.name and r.cpu_total_us > 0 for r in table.rows):
        return RowKind.USER
    return kind


def is_device_label(row: Row, table: ProfilerTable) -> bool:
    """Whether `row` is the device-side span of a ``record_function`` range (Kineto's
    ``gpu_user_annotation``: ``ProfilerStep#N``, ``DistributedDataParallel.forward``,
    ``## Call CompiledFxGraph ... ##``, ``nccl:all_reduce``, a user's label): a label over the
    kernels that ran inside the range, from the first one's start to the last one's end, not
    work of its own (torch leaves its time out of ``Self CUDA time total``). A trace says so
    by the event's kind; a printed table by its numbers: device time, no CPU time, and a name
    that is a range's (a label's kind, or a host row of the same name), not a kernel's."""
    if row.event_kind == "device_annotation":
        return True
    if row.event_kind != "unknown" or row.cpu_total_us > 0 or row.device_total_us <= 0:
        return False
    kind = classify(row.name, row.event_kind)
    if kind in _LABEL_KINDS or COMPILED_REGION_ROWS.match(row.name):
        return True  # a range's name (a compiled region's too, cut or not)
    return kind in (RowKind.OTHER, RowKind.COMMUNICATION) and any(
        r.name == row.name and r.cpu_total_us > 0 for r in table.rows
    )


#: Kinds of ranges (``record_function`` labels): a device-only row of one is its device span.
_LABEL_KINDS = frozenset(
    {
        RowKind.STEP,
        RowKind.LIGHTNING,
        RowKind.STRATEGY,
        RowKind.MODULE,
        RowKind.CALLBACK,
        RowKind.DATALOADER,
        RowKind.OPTIMIZER,
        RowKind.METRIC,
        RowKind.USER,
    }
)


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
