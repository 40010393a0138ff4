"""The device side of a printed table: how busy the device can have been, and where the host
waited for it.

``Self CUDA time total`` (torch's footer) sums the device work of the window: kernels, copies
and memsets, without the device-side spans of ``record_function`` labels. Per step, against
the step's wall time, it bounds how busy the device was from above: kernels on several
streams may overlap, and the table cannot show it. The host's waits are the self CPU time of
the calls that block it: synchronisations, copies that return only when the device is done,
and a full launch queue.
"""

from __future__ import annotations

import msgspec

from profsight.analyses.step.printed_parts import PrintedStep
from profsight.analyses.step.table_legacy import (
    LEAF_BASIS,
    device_leaves,
    leaf_families,
    leaf_work_us,
)
from profsight.knowledge.advice import BLOCKING_CALL_US, BLOCKING_COPY_FRACTION
from profsight.knowledge.collectives import COMM_LABEL
from profsight.knowledge.hardware import TENSOR_CORE_ARCHS
from profsight.knowledge.kernels import decode_kernel
from profsight.knowledge.op_families import COPIES, kernel_family, op_family
from profsight.knowledge.ops import lookup_op
from profsight.knowledge.rows import (
    BLOCKING_COPY_CALLS,
    LAUNCH_CALLS,
    QUEUE_FULL_ROWS,
    RowKind,
)
from profsight.model.row_kind import row_kind
from profsight.model.table import ProfilerTable, Row

#: The family basis when no printed row has self device time (`_families_by_totals`).
TOTALS_BASIS = "ops' device totals, innermost printed level"
#: Host waits by what the host waits in.
SYNC = "sync"
BLOCKING_COPY = "blocking_copy"
QUEUE_FULL = "queue_full"
#: Architectures in the order they came (a kernel built for one runs only on it or later).
_ARCH_ORDER = ("maxwell", "pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell")


class PrintedDevice(msgspec.Struct, frozen=True):
    name: str
    """``CUDA``, ``XPU``, ... as the table's columns name it."""
    work_us: float
    """Device work per step: the footer's device time total over the steps."""
    busy_pct: float
    """`work_us` as a share of the step, at most 100: an upper bound on how busy it was."""
    family_us: dict[str, float]
    """Device time per step by family, from the kernel rows or the ops' self device time
    (whichever covers more of the total)."""
    family_rows: dict[str, tuple[Row, ...]]
    family_basis: str
    launches: float
    """Kernel launch calls per step (0 when the table shows none)."""
    launch_rows: tuple[Row, ...]
    waits: dict[str, float]
    """Host time per step blocked in `SYNC`, `BLOCKING_COPY` or `QUEUE_FULL` calls."""
    wait_rows: dict[str, tuple[Row, ...]]
    copy_us: float
    """Device time per step of copies."""
    memcpy_rows: tuple[Row, ...]
    """The device's copy rows (``Memcpy HtoD (Pageable -> Device)``), whichever rows the
    families were read from."""
    fp32_matrix_us: float
    """Device time per step of FP32 GEMM/convolution kernels not on tensor cores."""
    fp32_rows: tuple[Row, ...]
    arch: str | None
    """The newest architecture a kernel in the table was built for (the GPU is at least
    that); None when no kernel name tells."""
    labels_us: float = 0.0
    """Per step, the device-side spans of labels (``record_function`` ranges, ``nccl:``
    ranges) that the table's device total counts and `work_us` leaves out."""

    @property
    def reads_totals(self) -> bool:
        """The families were read from rows' device totals, not their self device time."""
        return self.family_basis in (TOTALS_BASIS, LEAF_BASIS)

    @property
    def idle_pct(self) -> float:
        return max(100.0 - self.busy_pct, 0.0)

    @property
    def mean_kernel_us(self) -> float | None:
        return self.work_us / self.launches if self.launches else None

    @property
    def tensor_cores(self) -> bool:
        return self.arch in TENSOR_CORE_ARCHS


def printed_device(
    table: ProfilerTable, step: PrintedStep, inclusive: bool = False
) -> PrintedDevice | None:
    """The device facts of a table with device columns and device time; else None.
    `inclusive`: the table prints inclusive device times only (torch <= 1.6): the device's
    work is its leaf ops' (`table_legacy`), None when no leaf ran any."""
    if not table.has_device or table.self_device_total_us <= 0 or not step.step_us:
        return None
    steps = step.steps
    kinds = {id(r): row_kind(r, table) for r in table.rows}
    if inclusive:
        leaves = device_leaves(table, kinds)
        if not leaves:
            return None
        labels = 0.0
        work = leaf_work_us(table, leaves) / steps
        families, family_rows, basis = leaf_families(leaves, steps)
    else:
        labels = counted_labels_us(table, kinds)
        work = (table.self_device_total_us - labels) / steps
        families, family_rows, basis = _families(table, kinds, steps)
    waits: dict[str, float] = {}
    wait_rows: dict[str, list[Row]] = {}
    copy_us = families.get(COPIES, 0.0)
    for row in table.rows:
        what = _wait(row, kinds[id(row)], copy_us * steps)
        if what is not None:
            waits[what] = waits.get(what, 0.0) + row.self_cpu_us / steps
            wait_rows.setdefault(what, []).append(row)
    launches = [r for r in table.rows if r.name in LAUNCH_CALLS]
    fp32, arch = _fp32_matrix(table, kinds)
    return PrintedDevice(
        name=table.device_name,
        work_us=work,
        # the step is bounded by the device's clock where its work is longer
        # (`step.printed_step.device_bound`): not clamped here
        busy_pct=work * 100.0 / step.step_us,
        family_us=families,
        family_rows=family_rows,
        family_basis=basis,
        launches=sum(r.calls for r in launches) / steps,
        launch_rows=tuple(launches),
        waits=waits,
        wait_rows={k: tuple(v) for k, v in wait_rows.items()},
        copy_us=copy_us,
        memcpy_rows=tuple(r for r in table.rows if kinds[id(r)] is RowKind.MEMCPY),
        fp32_matrix_us=sum(r.self_device_us for r in fp32) / steps,
        fp32_rows=tuple(sorted(fp32, key=lambda r: -r.self_device_us)),
        arch=arch,
        labels_us=labels / steps,
    )


def is_device_label(row: Row, kind: RowKind) -> bool:
    """A label's device-side span (a ``record_function`` range, ``ProfilerStep#``, a
    backend's ``nccl:all_reduce``): device time without CPU time, and no kernel, copy or
    memset of its own: its time is its kernels' time, from the first's start to the last's
    end."""
    if row.cpu_total_us > 0 or row.self_device_us <= 0:
        return False
    if kind is RowKind.COMMUNICATION:
        return bool(COMM_LABEL.match(row.name))
    return kind in _LABEL_KINDS


#: Row kinds whose device-only rows are labels, not work.
_LABEL_KINDS = frozenset({RowKind.USER, RowKind.STEP, RowKind.LIGHTNING, RowKind.MODULE})
#: Rounding of the printed shares: two decimals on each of at most a few hundred rows.
_SHARE_SLACK_PCT = 0.5


def counted_labels_us(table: ProfilerTable, kinds: dict[int, RowKind]) -> float:
    """The labels' device time that the table's device total counts (0 when it does not).

    torch 1.12 to 2.4 summed the labels' device-side spans into ``Self CUDA time total``
    along with the kernels and copies (pytorch#130730, fixed by pytorch#130733 in 2.5). The
    shares tell which: a total that counts them has every label and device item within its
    100%; one that does not shows a label's span above 100% (a step's span holds its
    kernels and the gaps between them) or labels and items together above 100%."""
    labels = [r for r in table.rows if is_device_label(r, kinds[id(r)])]
    if not labels or any(r.self_device_pct > 100.0 for r in labels):
        return 0.0
    items = [
        r
        for r in table.rows
        if r.cpu_total_us <= 0 and r.self_device_us > 0 and not is_device_label(r, kinds[id(r)])
    ]
    shares = sum(r.self_device_pct for r in (*labels, *items))
    if shares > 100.0 + _SHARE_SLACK_PCT:
        return 0.0
    return sum(r.self_device_us for r in labels)


def _families(
    table: ProfilerTable, kinds: dict[int, RowKind], steps: int
) -> tuple[dict[str, float], dict[str, tuple[Row, ...]], str]:
    """Device time by family from the kernel rows and from the ops' self device time; the
    two count the same work, so the one that covers more of the total is used."""
    by_kernel: dict[str, list[Row]] = {}
    by_op: dict[str, list[Row]] = {}
    for row in table.rows:
        if row.self_device_us <= 0:
            continue
        kind = kinds[id(row)]
        if kind in (RowKind.KERNEL, RowKind.MEMCPY, RowKind.MEMSET, RowKind.COMMUNICATION):
            if row.cpu_total_us <= 0:
                family = (
                    COPIES
                    if kind is RowKind.MEMCPY
                    else kernel_family(decode_kernel(row.name).operation)
                )
                by_kernel.setdefault(family, []).append(row)
        elif kind is RowKind.ATEN:
            info = lookup_op(row.name)
            by_op.setdefault(op_family(info.category if info else None), []).append(row)

    def covered(groups: dict[str, list[Row]]) -> float:
        return sum(r.self_device_us for rows in groups.values() for r in rows)

    if not covered(by_kernel) and not covered(by_op):
        return _families_by_totals(table, kinds, steps)
    use, basis = (
        (by_kernel, "kernel rows")
        if covered(by_kernel) >= covered(by_op)
        else (by_op, "ops' self device time")
    )
    spent = {f: sum(r.self_device_us for r in rows) / steps for f, rows in use.items()}
    ordered = {f: tuple(sorted(rows, key=lambda r: -r.self_device_us)) for f, rows in use.items()}
    return spent, ordered, basis


def _families_by_totals(
    table: ProfilerTable, kinds: dict[int, RowKind], steps: int
) -> tuple[dict[str, float], dict[str, tuple[Row, ...]], str]:
    """Device time by family when no printed row has self device time (the kernel rows fell
    past the row limit): the ops' device totals, each call counted at the innermost printed
    level of its dispatch chain (``aten::linear`` holds ``aten::addmm``'s kernels: only the
    latter counts when both are printed)."""
    ops = [r for r in table.rows if kinds[id(r)] is RowKind.ATEN and r.device_total_us > 0]
    printed = {r.name for r in ops}
    inner = []
    for row in ops:
        info = lookup_op(row.name)
        if info is None or not printed.intersection(info.chain):
            inner.append(row)
    groups: dict[str, list[Row]] = {}
    for row in inner:
        info = lookup_op(row.name)
        groups.setdefault(op_family(info.category if info else None), []).append(row)
    spent = {f: sum(r.device_total_us for r in rows) / steps for f, rows in groups.items()}
    ordered = {
        f: tuple(sorted(rows, key=lambda r: -r.device_total_us)) for f, rows in groups.items()
    }
    return spent, ordered, TOTALS_BASIS


def _wait(row: Row, kind: RowKind, copies_device_us: float) -> str | None:
    if row.cpu_total_us <= 0:
        return None
    if row.name in QUEUE_FULL_ROWS:
        return QUEUE_FULL
    if kind is RowKind.SYNC:
        return SYNC
    if row.name not in BLOCKING_COPY_CALLS or not row.calls:
        return None
    # a copy call waited: its host time is not far below its copies' device time, or (no
    # copy printed to compare with) each call took longer than an asynchronous one does
    if copies_device_us > 0:
        blocked = row.self_cpu_us >= BLOCKING_COPY_FRACTION * copies_device_us
    else:
        blocked = row.self_cpu_us / row.calls >= BLOCKING_CALL_US
    return BLOCKING_COPY if blocked else None


def _fp32_matrix(table: ProfilerTable, kinds: dict[int, RowKind]) -> tuple[list[Row], str | None]:
    fp32: list[Row] = []
    newest = -1
    for row in table.rows:
        if kinds[id(row)] is not RowKind.KERNEL:
            continue
        k = decode_kernel(row.name)
        if k.arch in _ARCH_ORDER:
            newest = max(newest, _ARCH_ORDER.index(k.arch))
        if k.fp32_off_tensor_cores:
            fp32.append(row)
    return fp32, (_ARCH_ORDER[newest] if newest >= 0 else None)
