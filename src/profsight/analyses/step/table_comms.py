"""Communication on the device, as far as a printed table's rows tell it.

A collective shows up in a table in up to three rows that count the same transfer
(`profsight.knowledge.collectives`): the NCCL/RCCL kernel (``ncclDevKernel_AllGather_...``,
no CPU time), the backend's device-side label (``nccl:_all_gather_base``, no CPU time, its span
on the device) and the ops that launched it (``record_param_comms``, ``c10d::...``, whose self
device time is the kernel they launched). Their device times are not added: the largest of
the three sums is the collectives' device time.

A table has no timeline, so how much of that time compute hid is unknown; two bounds hold
all the same. Collectives can hide only behind other device work, so at least the time by
which they exceed all other device work is exposed; at most all of it is.
"""

from __future__ import annotations

import msgspec

from profsight.analyses.step.printed_parts import PrintedStep
from profsight.analyses.step.table_device import PrintedDevice, is_device_label
from profsight.knowledge.collectives import FRAMEWORK_COMMS
from profsight.knowledge.rows import RowKind
from profsight.model.row_kind import row_kind
from profsight.model.table import ProfilerTable, Row


class PrintedComms(msgspec.Struct, frozen=True):
    device_us: float
    """Device time per step of the collectives (the largest of the three forms' sums)."""
    rows: tuple[Row, ...]
    """The rows that sum gave, largest first."""
    basis: str
    """Which form gave it: kernel rows, device-side labels or the ops that launched them."""
    other_us: float
    """Every other device work per step (compute, copies): what the collectives can hide
    behind."""
    host_rows: tuple[Row, ...]
    """The collective ops on the host (``record_param_comms``, ``c10d::``, ``nccl:`` with CPU
    time), whatever their device time."""
    framework: str
    """The framework whose rows show it shards the model and runs the collectives itself
    (DeepSpeed's ZeRO, FSDP), or ""."""

    @property
    def least_exposed_us(self) -> float:
        """At least this much of the collectives' time per step runs while nothing else
        does: the other device work is too short to hide it all."""
        return max(self.device_us - self.other_us, 0.0)


def printed_comms(
    table: ProfilerTable, step: PrintedStep, device: PrintedDevice | None
) -> PrintedComms | None:
    """The collectives of a table; None when it prints none."""
    kinds = {id(r): row_kind(r, table) for r in table.rows}
    comm = [r for r in table.rows if kinds[id(r)] is RowKind.COMMUNICATION]
    framework = next(
        (
            name
            for pattern, name in FRAMEWORK_COMMS
            if any(pattern.search(r.name) for r in table.rows)
        ),
        "",
    )
    if not comm:
        return None
    host = tuple(r for r in comm if r.cpu_total_us > 0)
    labels = [r for r in comm if is_device_label(r, kinds[id(r)])]
    kernels = [r for r in comm if r.cpu_total_us <= 0 and r not in labels]
    forms = (
        (kernels, "the collectives' kernel rows"),
        (labels, "the collectives' device-side labels (nccl:...)"),
        (list(host), "the device time of the ops that launched them (record_param_comms, c10d::)"),
    )
    rows, basis = max(forms, key=lambda f: sum(r.self_device_us for r in f[0]))
    steps = step.steps
    device_us = sum(r.self_device_us for r in rows) / steps
    work = device.work_us if device is not None else 0.0
    return PrintedComms(
        device_us=device_us,
        rows=tuple(sorted(rows, key=lambda r: -r.self_device_us)),
        basis=basis,
        other_us=max(work - device_us, 0.0),
        host_rows=host,
        framework=framework,
    )


__all__ = ["PrintedComms", "printed_comms"]
