"""A GPU run whose device activity was not recorded.

The trace shows a GPU (devices listed in ``deviceProperties``, device runtime calls, ops
that run only on a GPU: cuDNN, fused attention, NCCL, Triton) but holds no kernel, copy or
memset: or only kernels CUPTI's range profiler measured, whose counters it holds and whose
run times it does not. Then every device figure would come from host times: the report
gives none, the verdict does not judge the run, and the first finding says how to record
it again.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from profsight.knowledge.advice import GPU_ONLY_OPS, RANGE_PROFILED
from profsight.knowledge.trace_schema import DEVICE_WORK_KINDS, LAUNCH_KINDS, EventKind
from profsight.model.profile import Profile

#: Op names quoted as evidence, at most.
_NAMED = 3


def unrecorded_device(profile: Profile) -> tuple[str, ...]:
    """What shows a GPU in a trace that recorded none of its work (empty: none, or the
    device's work is there)."""
    ev = profile.events
    if ev.mask(DEVICE_WORK_KINDS).any():
        return ()
    counted = counted_kernels(profile)
    if counted:
        return (RANGE_PROFILED.format(kernels=counted),)
    evidence = []
    names = sorted({str(d.get("name", "?")) for d in profile.meta.devices})
    if names:
        evidence.append(f"devices listed: {', '.join(names)}")
    calls = np.flatnonzero(ev.mask(LAUNCH_KINDS))
    if len(calls):
        counts = Counter(ev.names(calls)).most_common(2)
        evidence.append(
            f"{len(calls):,} device runtime calls ("
            + ", ".join(f"{name} x{n:,}" for name, n in counts)
            + ")"
        )
    ops = np.flatnonzero(ev.kind == EventKind.CPU_OP)
    ids = [i for i, s in enumerate(ev.strings) if GPU_ONLY_OPS.search(s)]
    gpu_ops = ops[np.isin(ev.name[ops], ids)]
    if len(gpu_ops):
        counts = Counter(ev.names(gpu_ops)).most_common(_NAMED)
        evidence.append("ops that run on a GPU: " + ", ".join(f"{n} x{k:,}" for n, k in counts))
    return tuple(evidence)


def counted_kernels(profile: Profile) -> int:
    """Kernels measured by CUPTI's range profiler (`EventKind.COUNTERS`): their counters are
    in the trace, their run times are not."""
    return int((profile.events.kind == EventKind.COUNTERS).sum())


__all__ = ["counted_kernels", "unrecorded_device"]
