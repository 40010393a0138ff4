"""What each row of a profiler table is, and what its numbers mean, in plain language.

`explain_row` combines the row's kind (`knowledge.rows`), what the knowledge modules know
about its name (ATen ops, kernels, Lightning actions and modules) and its own numbers
(self vs total, calls, device time) into a `RowExplanation`: plain data, no formatting.
"""

from __future__ import annotations

import msgspec

from profsight.knowledge.kernels import decode_kernel
from profsight.knowledge.lightning_names import (
    HOOKS,
    LIGHTNING_ACTION_PREFIX,
    LIGHTNING_TAGS,
    LOOP_ACTIONS,
    MODULE_CLASSES,
    action_candidates,
    module_class,
    module_label,
)
from profsight.knowledge.ops import lookup_op
from profsight.knowledge.rows import DEVICE_KINDS, KINDS, RowKind
from profsight.knowledge.table_guide import (
    DEVICE_LABEL_MEANING,
    DEVICE_LABEL_READING,
    DEVICE_SYNC_MEANING,
    LIGHTNING_SELF_TIME,
    MODULE_INSIDE,
    NEGATIVE_SELF,
    OVERLAP_NOTE,
    OVERLAP_NOTE_LIGHTNING,
    OVERLAPPED_ROWS,
)
from profsight.model.row_kind import is_device_label, row_kind
from profsight.model.table import ProfilerTable, Row
from profsight.model.tree import CallTree
from profsight.units import short_time

#: Self share above which a row's time is "its own", and below which it is "its children's".
OWN_WORK = 0.8
CHILDREN_WORK = 0.2
#: Rows under this share of the run get no self-vs-total reading (too small to matter).
MATTERS_PCT = 1.0


class RowExplanation(msgspec.Struct, frozen=True):
    kind: RowKind
    layer: str
    meaning: str
    """What this row is: specific to its name where profsight knows it."""
    reading: str
    """What its numbers say (self vs total, device time, calls); "" when nothing notable."""


def explain_row(row: Row, table: ProfilerTable, tree: CallTree | None = None) -> RowExplanation:
    kind = row_kind(row, table)
    info = KINDS[kind]
    if is_device_label(row, table):
        return RowExplanation(kind, info.layer, DEVICE_LABEL_MEANING, _label_reading(row))
    device_only = row.cpu_total_us == 0 and row.device_total_us > 0
    meaning = _meaning(row.name, kind, device_only)
    return RowExplanation(kind, info.layer, meaning, _reading(row, kind, table, tree))


def _label_reading(row: Row) -> str:
    """A device-side label's numbers: how long its span was, never a share of the device's
    work (its time is its kernels', counted in their rows)."""
    each = f", {short_time(row.device_avg_us)} each" if row.calls > 1 else ""
    return DEVICE_LABEL_READING.format(
        span=short_time(row.device_total_us), calls=row.calls, each=each
    )


def _meaning(name: str, kind: RowKind, device_only: bool = False) -> str:
    if kind is RowKind.SYNC and device_only:
        return DEVICE_SYNC_MEANING
    if kind is RowKind.USER and device_only:
        return DEVICE_LABEL_MEANING
    generic = KINDS[kind].meaning
    if kind in (RowKind.KERNEL, RowKind.MEMCPY, RowKind.MEMSET) or (
        kind is RowKind.COMMUNICATION and not name.startswith(("c10d::", "nccl:", "gloo:"))
    ):
        decoded = decode_kernel(name)
        if decoded.library or decoded.operation:
            return f"{decoded.label}; {generic}"
    if kind is RowKind.MODULE:
        cls = module_class(name).rsplit(".", 1)[-1]
        about = MODULE_CLASSES.get(cls, "a module of your model")
        return f"{module_label(name)}: {about}"
    if kind in (
        RowKind.LIGHTNING,
        RowKind.STRATEGY,
        RowKind.DATALOADER,
        RowKind.OPTIMIZER,
        RowKind.CALLBACK,
    ):
        described = [
            f"{a}: {HOOKS.get(a) or LOOP_ACTIONS.get(a)}"
            for a in action_candidates(name)
            if HOOKS.get(a) or LOOP_ACTIONS.get(a)
        ]
        if len(described) == 1:
            return described[0]
        if described:
            return "torch cut the name; it is one of: " + "; or ".join(described)
    op = lookup_op(name)
    if op is not None:
        return op.meaning
    return generic


def _reading(row: Row, kind: RowKind, table: ProfilerTable, tree: CallTree | None) -> str:
    if row.is_async:
        return (
            "still running when the profiler stopped: torch shows no self time and a CPU "
            "total % of 0 for it"
        )
    if kind in DEVICE_KINDS or row.is_device:
        return _device_reading(row, table)
    parts: list[str] = []
    if row.self_cpu_us < 0:
        parts.append(NEGATIVE_SELF.format(self=short_time(row.self_cpu_us)))
    total = table.self_cpu_total_us
    if row.cpu_total_us > 0 and total and row.cpu_total_us * 100 / total >= MATTERS_PCT:
        parts.append(_self_vs_total(row, kind, tree, table))
    if row.device_total_us > 0 and not row.is_device:
        own = row.self_device_us / row.device_total_us
        if own >= OWN_WORK:
            parts.append(
                f"its device time ({short_time(row.device_total_us)}) is in kernels "
                "it launches itself"
            )
        elif own <= CHILDREN_WORK:
            parts.append(
                f"its device time ({short_time(row.device_total_us)}) is in kernels "
                "launched by ops below it"
            )
    if row.calls > 1 and row.cpu_total_us > 0:
        parts.append(f"{row.calls} calls, {short_time(row.cpu_avg_us)} each on average")
    return "; ".join(p for p in parts if p)


def _device_reading(row: Row, table: ProfilerTable) -> str:
    share = (
        f" ({row.self_device_us * 100 / table.self_device_total_us:.1f}% of all device time)"
        if table.self_device_total_us
        else ""
    )
    each = f", {short_time(row.device_avg_us)} each" if row.calls > 1 else ""
    return f"{short_time(row.device_total_us)} on the device{share} in {row.calls} run(s){each}"


def _self_vs_total(
    row: Row, kind: RowKind, tree: CallTree | None, table: ProfilerTable | None = None
) -> str:
    own = row.self_cpu_us / row.cpu_total_us if row.cpu_total_us else 0.0
    numbers = f"self {short_time(row.self_cpu_us)} of {short_time(row.cpu_total_us)} total"
    if (
        own > CHILDREN_WORK
        and tree is None  # a printed table: a trace's notes say whether ranges overlapped
        and row.name.startswith(OVERLAPPED_ROWS)
        and table is not None
        and any(r.name.startswith(LIGHTNING_ACTION_PREFIX) for r in table.rows)
    ):
        return f"{numbers}: {LIGHTNING_SELF_TIME}"
    if kind is RowKind.MODULE and own <= CHILDREN_WORK and tree is None:
        return f"low self, high total: {numbers}, so {MODULE_INSIDE}"
    if own >= OWN_WORK:
        why = {
            RowKind.MODULE: "its own Python in forward() between its ops (the skip "
            "connection's glue, reshapes, control flow)",
            RowKind.ATEN: "the op's own computation on the CPU",
            RowKind.STEP: "code inside the step that ran in no recorded op",
            RowKind.SYNC: "the CPU waiting for the GPU",
            RowKind.COMMUNICATION: "the collective itself: the transfer and any wait for "
            "slower ranks (a job of all ranks tells them apart: profsight job)",
        }.get(kind, "its own work")
        return f"high self, low children: {numbers}, so the time is {why}"
    if own <= CHILDREN_WORK:
        top = _top_child(row.name, tree)
        where = f", mainly {top}" if top else ""
        return f"low self, high total: {numbers}, so the time is in what it calls{where}"
    return f"{numbers}: time split between its own work and what it calls"


def _top_child(name: str, tree: CallTree | None) -> str:
    children = tree.callees(name) if tree is not None else {}
    if not children:
        return ""
    top = max(children, key=lambda k: children[k])
    return f"{top} ({short_time(children[top])})"


def table_notes(table: ProfilerTable, overlapping: bool = False) -> list[str]:
    """What the table as a whole says that a reader might misread."""
    notes = []
    if overlapping:
        lightning = any(r.name.startswith(LIGHTNING_TAGS) for r in table.rows)
        notes.append(OVERLAP_NOTE_LIGHTNING if lightning else OVERLAP_NOTE)
    if not table.has_device:
        notes.append(
            "No CUDA time: either a CPU-only run, or device activity was not recorded (add "
            "ProfilerActivity.CUDA to activities, check CUPTI is available), or the tensors "
            "never left the CPU."
        )
    if any(r.cpu_total_pct > 100.0 for r in table.rows) or any(
        r.self_device_pct > 100.0 for r in table.rows
    ):
        notes.append(
            "Some shares exceed 100%: percentages are relative to the summed self time, and "
            "nested rows of the same name, device-side record_function rows and "
            "ProfilerStep* count the same time more than once."
        )
    notes.append(
        "Self = time in the row itself; total = itself plus everything it called. "
        "Averages are totals divided by # of Calls."
    )
    return notes
