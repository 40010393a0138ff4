"""The hardware counters CUPTI's range profiler writes per kernel, and the FLOPs they count.

torch records them with ``experimental_config=torch.profiler._ExperimentalConfig(
profiler_metrics=[...], profiler_measure_per_kernel=True)``: Kineto then writes one
``cuda_profiler_range`` event per kernel (`EventKind.COUNTERS`) whose args are the metrics
asked for. The floating-point ones are Nsight Compute's per-instruction counts,
``smsp__sass_thread_inst_executed_op_{op}_pred_on.sum``: thread-level instructions that
executed with their predicate on, one counter per instruction (``hadd``, ``hmul``,
``hfma`` for half, ``f…`` for single, ``d…`` for double precision): the nine that
Kineto's metric alias ``kineto__cuda_core_flops`` asks for
(libkineto/src/CuptiRangeProfiler.cpp, ``kDerivedMetrics``). Nsight Compute's own
"achieved FLOP" formula counts a fused multiply-add as two FLOPs, an add or a multiply as
one: FLOPs = add + mul + 2 x fma (the roofline of its SpeedOfLight section). Tensor-core
instructions
(``HMMA``) are not among them: a kernel that multiplies matrices on the tensor cores
counts none of that work here.
"""

from __future__ import annotations

from typing import Final

#: The counter of one instruction.
COUNTER: Final = "smsp__sass_thread_inst_executed_op_{op}_pred_on.sum"

#: Precision name -> each of its instructions and the FLOPs one counts (an fma is a
#: multiply and an add: 2).
PRECISION_OPS: Final[dict[str, tuple[tuple[str, int], ...]]] = {
    "half": (("hadd", 1), ("hmul", 1), ("hfma", 2)),
    "single": (("fadd", 1), ("fmul", 1), ("ffma", 2)),
    "double": (("dadd", 1), ("dmul", 1), ("dfma", 2)),
}

__all__ = ["COUNTER", "PRECISION_OPS"]
