"""FLOPs that CUPTI's range profiler measured: the hardware counters of each kernel.

A trace recorded with ``profiler_metrics`` (torch's ``_ExperimentalConfig``) holds no
kernel run times; per kernel it holds instruction counts (`EventKind.COUNTERS`,
`knowledge.flop_counters`), which the loader turns into FLOPs per precision. Here they are
added up per precision and per kernel name, and set beside the FLOPs counted from the ops'
shapes where those are known.

They are not given per op: a range record carries no ``correlation`` or ``External id``,
and no flow ends on one (Kineto gives them no link: libkineto/src/CuptiRangeProfiler.cpp,
``addRangeEvents``; in HTA's cupti_profiler trace the 77 ``cudaLaunchKernel`` calls start
``ac2g`` flows whose ids no flow end has, every flow end lies on the host thread), so the
trace does not say which op launched which kernel.
"""

from __future__ import annotations

import msgspec
import numpy as np

from profsight.knowledge.advice import MEASURED_BESIDE_COUNTED, MEASURED_FLOPS, UNNAMED_KERNEL
from profsight.knowledge.trace_schema import EventKind
from profsight.model.profile import Profile
from profsight.units import short_flops

#: Kernel names quoted as evidence, at most.
_NAMED = 3
#: The name Kineto gives a range whose kernel it could not name.
_MISSING_NAME = "__missing__"


class MeasuredFlops(msgspec.Struct, frozen=True):
    """The counted FLOPs of a range-profiled trace."""

    kernels: int
    """Kernels the range profiler measured."""
    by_precision: dict[str, float]
    """Precision (``half``, ``single``, ``double``) -> FLOPs over the whole trace."""
    by_kernel: tuple[tuple[str, float, int], ...]
    """(kernel name, FLOPs of every precision, kernels of that name), most FLOPs first."""

    @property
    def total(self) -> float:
        return sum(self.by_precision.values())


def measured_flops(profile: Profile) -> MeasuredFlops | None:
    """The trace's measured FLOPs; None when no kernel was measured by the range profiler."""
    ev = profile.events
    where = np.flatnonzero(ev.kind == EventKind.COUNTERS)
    if not len(where):
        return None
    columns = {
        "half": ev.measured_flops_half,
        "single": ev.measured_flops_single,
        "double": ev.measured_flops_double,
    }
    per_kernel = np.zeros(len(where), np.float64)
    by_precision = {}
    for precision, column in columns.items():
        values = column[where] if len(column) == len(ev) else np.zeros(len(where))
        by_precision[precision] = float(values.sum())
        per_kernel += values
    names = np.asarray(ev.name)[where]
    distinct, inverse = np.unique(names, return_inverse=True)
    flops = np.bincount(inverse, weights=per_kernel, minlength=len(distinct))
    counts = np.bincount(inverse, minlength=len(distinct))
    order = np.argsort(-flops, kind="stable")
    by_kernel = tuple(
        (_label(ev.strings[int(distinct[k])]), float(flops[k]), int(counts[k]))
        for k in order.tolist()
    )
    return MeasuredFlops(len(where), by_precision, by_kernel)


def measured_figures(measured: MeasuredFlops) -> str:
    """The measured FLOPs per precision, most first (``79.7 GFLOP single, 552 MFLOP half``)."""
    figures = [
        f"{short_flops(flops)} {precision}"
        for precision, flops in sorted(measured.by_precision.items(), key=lambda kv: -kv[1])
        if flops > 0
    ]
    return ", ".join(figures) or short_flops(0.0)


def measured_line(measured: MeasuredFlops, counted: float | None = None) -> str:
    """The verdict's FLOPs line: the measured FLOPs per precision, and the FLOPs counted
    from the ops' shapes beside them when `counted` (over the same window)."""
    line = MEASURED_FLOPS.format(figures=measured_figures(measured), kernels=measured.kernels)
    if counted:
        line += MEASURED_BESIDE_COUNTED.format(counted=short_flops(counted))
    return line


def top_kernels(measured: MeasuredFlops) -> tuple[tuple[str, str], ...]:
    """(kernel name, its FLOPs and count) of the kernels that did the most, for evidence."""
    return tuple(
        (name, f"{short_flops(flops)} over {n:,} kernel{'s' if n > 1 else ''}")
        for name, flops, n in measured.by_kernel[:_NAMED]
        if flops > 0
    )


def _label(name: str) -> str:
    return UNNAMED_KERNEL if name == _MISSING_NAME else name


__all__ = ["MeasuredFlops", "measured_figures", "measured_flops", "measured_line", "top_kernels"]
