"""A GPU run printed from a profile that recorded no device activity.

``profile(activities=[ProfilerActivity.CPU])`` on a CUDA run prints a table without device
columns: it reads like a CPU-only run, and its host times hold the waits for the GPU (the
caller blocked in ``run_backward`` while autograd ran backward on the device's own thread,
``.item()`` and copies waiting for queued kernels). The rows still show the GPU: ops that run
only on one, and a backward that ran on another thread. Then the run is not judged on its
host times, and the first finding says how to record it again.
"""

from __future__ import annotations

from profsight.knowledge.advice import (
    GPU_ONLY_OPS,
    THREAD_WAIT_PCT,
    THREAD_WAIT_SELF_FRACTION,
)
from profsight.knowledge.rows import THREAD_WAIT_FRAMES
from profsight.lazy import regex
from profsight.model.table import ProfilerTable
from profsight.units import short_time

#: Op names quoted as evidence, at most.
_NAMED = 3
#: CUDA and HIP runtime calls (``cudaMemcpyAsync``, ``hipLaunchKernel``): CUPTI records
#: them when the device's activity is on, and a table of a CPU-only run holds none.
_DEVICE_RUNTIME = regex(r"^(?:cuda|hip)[A-Z]\w+$")


def unrecorded_device_rows(table: ProfilerTable) -> tuple[str, ...]:
    """What shows a GPU in a table that has no device column (empty: none, or device times
    are printed)."""
    if table.has_device or not table.self_cpu_total_us:
        return ()
    total = table.self_cpu_total_us
    evidence = []
    waits = [
        r
        for r in table.rows
        if THREAD_WAIT_FRAMES.match(r.name)
        and r.self_cpu_us >= THREAD_WAIT_SELF_FRACTION * r.cpu_total_us
        and r.self_cpu_us * 100 / total >= THREAD_WAIT_PCT
    ]
    for row in waits:
        evidence.append(
            f"{row.name.split(' of ')[0]}> holds {short_time(row.self_cpu_us)} of its own time "
            f"({row.self_cpu_us * 100 / total:.0f}% of the self CPU total): the caller waited "
            "while backward ran on another thread, which autograd does for a device's backward "
            "(a CPU backward runs on the caller's thread)"
        )
    runtime = sorted(
        (r for r in table.rows if _DEVICE_RUNTIME.match(r.name)), key=lambda r: -r.calls
    )
    if runtime:
        evidence.append(
            f"{sum(r.calls for r in runtime):,} device runtime calls ("
            + ", ".join(f"{r.name} x{r.calls:,}" for r in runtime[:2])
            + ")"
        )
    gpu_ops = sorted(
        (r for r in table.rows if GPU_ONLY_OPS.search(r.name)), key=lambda r: -r.cpu_total_us
    )
    if gpu_ops:
        evidence.append(
            "ops that run on a GPU: "
            + ", ".join(f"{r.name} x{r.calls:,}" for r in gpu_ops[:_NAMED])
        )
    return tuple(evidence)


__all__ = ["unrecorded_device_rows"]
