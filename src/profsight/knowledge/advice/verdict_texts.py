"""The verdict's bounds and sentences, and the model-level findings'."""

from __future__ import annotations

from typing import Final

from profsight.lazy import regex

# --- the verdict (analyses/verdict.py) ---------------------------------------------------

#: How the verdict names a run judged on host times alone: known to be CPU-only, or not
#: (the reason: `LIGHTNING_REPORT_HOST_ONLY`, ...).
CPU_ONLY: Final = "A CPU-only run"
HOST_TIMES_RUN: Final = "A run judged on host times ({reason})"
#: The device's busy time split (computing, copying) and the overlap of its streams are
#: named from this share of the step: below it the figure rounds to 0% in the evidence's
#: whole percents (profsight's own choice).
BUSY_SPLIT_SHOWN_PCT: Final = 0.5
#: Said of the figures within `BORDERLINE_FRACTION` of the threshold they are judged by.
BORDERLINE_FIGURE: Final = "{label} {value:.1f}{unit} against the {threshold:g}{unit} threshold"
BORDERLINE_NOTE: Final = (
    " Borderline: {figures}: another recording of the same run may fall on the other side."
)
#: Ends `HELD_VERDICT` and `STARTUP_VERDICT` when the device's busy share is known.
REST_BUSY: Final = "; of the rest, the device is busy {busy:.0f}%."
STALL_VERDICT: Final = (
    "Most of the profiled window ({stall:.0f}%) is host time in one pass that no recorded op "
    "holds (start-up, reading data, a wait): profile again after a warm-up, several steps, "
    "before judging the model"
)
STARTUP_VERDICT: Final = (
    "Most of the profiled window ({startup:.0f}%) is one-time start-up (lazy loading of GPU "
    "code, autotuning, compilation), not training: profile again after a warm-up before "
    "judging the model"
)
STARVED_VERDICT: Final = (
    "The model is starved by its data pipeline: {data:.0f}% of each step waits for the next "
    "batch. Faster input (workers, pinned memory, prefetching) speeds training more than any "
    "model change."
)
COMMUNICATION_BOUND_VERDICT: Final = (
    "Communication bounds the step: {exposed:.0f}% of it waits for collectives that compute "
    "does not hide. Fix that first (the findings say whether it is the transfer or a slower "
    "rank); the model's own cost comes after."
)
MEMORY_VERDICT: Final = (
    "The model is too heavy for this GPU's memory: it runs at the memory limit ({figures}). "
    "Mixed precision, activation checkpointing, a smaller batch per step or more devices give "
    "it room."
)
KERNEL_BOUND_VERDICT: Final = (
    "The GPU is busy {busy:.0f}% of the step, but its math reaches only {mfu:.1f}% of the "
    "device's peak: the kernels, not the device, are the limit (memory-bound ops, small "
    "matrices, FP32 on tensor cores). Faster kernels (fusion with torch.compile, mixed "
    "precision, larger matrices per call) come before a bigger GPU."
)
SATURATED_VERDICT: Final = (
    "The GPU is saturated ({busy:.0f}% busy): the model keeps this hardware fully occupied, "
    "so it is heavy for it. To go faster, do less work per step (mixed precision, a smaller "
    "or more efficient model) or add devices."
)
SYNC_VERDICT: Final = (
    "The GPU is busy only {busy:.0f}% of the step and idles mostly while the CPU synchronises "
    "with it: remove the syncs before judging the model."
)
HOST_BOUND_VERDICT: Final = (
    "The model is too small for this GPU: the device is busy only {busy:.0f}% of the step and "
    "waits for the CPU to issue work. A larger batch, fused ops (torch.compile) or CUDA graphs "
    "keep it fed."
)
COMMUNICATION_VERDICT: Final = (
    "Communication between devices bounds the step; overlap it with the backward pass or send "
    "less of it."
)
BALANCED_GPU_VERDICT: Final = (
    "The GPU is busy {busy:.0f}% of the step: neither starved nor saturated. The findings "
    "below say where the remaining idle time goes."
)
#: Profiled steps shorter than this in all are too little to judge the model against its
#: hardware (profsight's own rule): a kernel launch costs 5-20 µs and the profiler 1-2 µs per
#: event, so under a millisecond those costs and a handful of items are the measurement.
TOO_LITTLE_WORK_US: Final = 1000.0
TOO_LITTLE_WORK_VERDICT: Final = (
    "Too little was profiled to judge the model against its hardware ({profiled} in all): "
    "launch latency and the profiler's own cost weigh on every figure of so short a window. "
    "Profile a few whole steps after a warm-up (schedule(wait=1, warmup=1, "
    "active=3), prof.step() each step) before judging."
)
#: The balanced verdict when no finding names a cause of the idle time.
BALANCED_UNEXPLAINED_VERDICT: Final = (
    "The GPU is busy {busy:.0f}% of the step: neither starved nor saturated. No finding "
    "names what the remaining idle time waits for; a trace's timeline shows when the GPU "
    "idles."
)
#: The balanced verdict of a table whose host waited on a full launch queue.
BALANCED_QUEUE_FULL_VERDICT: Final = (
    "The GPU is busy at most {busy:.0f}% of the step, and the host waited on a full launch "
    "queue {queue:.0f}% of it: the GPU had a backlog then, so the host is ahead of it and "
    "its idle time falls elsewhere (between steps, while the input loads). A trace's "
    "timeline shows when."
)
#: Finding categories that name a cause of device idle time.
IDLE_CAUSE_CATEGORIES: Final = frozenset(
    {
        "gpu_idle",
        "launch_overhead",
        "host_device_sync",
        "data_loading",
        "per_step_overhead",
        "host_lead_in",
    }
)
#: The launch queue full for at least this share of the step: the host runs ahead of the
#: device (CUPTI records ``Command Buffer Full`` when a launch blocks on a full queue).
QUEUE_FULL_PCT: Final = 5.0
#: An idle device is a finding above GPU_IDLE_PCT busy too when its idle time is the
#: step's largest share (more than any family of device work) and at least this much.
IDLE_LARGEST_MIN_PCT: Final = 20.0
QUEUE_FULL_SYNC_EVIDENCE: Final = (
    "the host waited on a full launch queue {queue:.0f}% of the step: it runs ahead of the "
    "GPU, so its syncs wait for a busy GPU (counted only where the device's work cannot "
    "cover them)"
)
AROUND_MODEL_VERDICT: Final = (
    "{run} bound by {label} ({share:.0f}% of the step), not by the model itself: fix that "
    "first (see the findings), then judge the model against the hardware."
)
FIXED_COST_VERDICT: Final = (
    "{run} where each step is mostly fixed cost ({share:.0f}% outside the model's math): the "
    "model and batch are too small for the per-step overhead; a larger batch amortises it."
)
SHORT_COMPUTE_VERDICT: Final = (
    "{run} whose steps are short ({step}) and mostly the model's own work ({compute:.0f}%): "
    "the hardware keeps up with this model, and neither its data nor its fixed per-step cost "
    "holds it back; a larger batch would use the hardware more fully."
)
CPU_HEAVY_VERDICT: Final = (
    "{run}: the model's own work takes {compute:.0f}% of each step, so the CPU is the limit. "
    "The model is heavy for this hardware: a GPU (or a smaller model) is the way to go faster."
)
HOST_HEAVY_VERDICT: Final = (
    "{run}: the model's own work takes {compute:.0f}% of each step, so its compute is the "
    "limit: heavy for this hardware (a trace, or a torch >= 1.7 table with device columns, "
    "would tell how busy the GPU was)."
)
SMALL_FOR_OVERHEAD_VERDICT: Final = (
    "{run} where the fixed cost of each step ({fixed:.0f}%) outweighs the model's work: the "
    "model is small for the per-step overhead; a larger batch amortises it."
)
UNDOMINATED_VERDICT: Final = (
    "{run} whose steps ({step}) are neither dominated by the model's work ({compute:.0f}%) "
    "nor short: much of each step is in no recorded range or outside the model (see the "
    "breakdown)."
)
FLOPS_UNCOUNTED: Final = (
    "FLOPs unknown: {uncounted} matrix or convolution ops lack the shapes or arguments to "
    "count them (record_shapes=True with torch >= 2.0 records them)"
)
FLOPS_UNKNOWN: Final = "FLOPs unknown (record_shapes=True lets profsight count them)"
#: The FLOPs line of a trace whose kernels CUPTI's range profiler measured
#: (`analyses.measured_flops`): over the whole trace, per precision.
MEASURED_FLOPS: Final = (
    "measured FLOPs from hardware counters: {figures} ({kernels:,} kernels; add, multiply "
    "and fma instructions, not tensor-core work)"
)
#: ... beside the FLOPs counted from the ops' shapes, when those are known.
MEASURED_BESIDE_COUNTED: Final = "; counted from the ops' shapes: {counted}"
#: A range whose kernel Kineto could not name (``__missing__``).
UNNAMED_KERNEL: Final = "(a kernel the trace does not name)"
#: Ranges torch.compile runs its code in: Dynamo's frame (``"Torch-Compiled Region: " +
#: compile_id_str``, torch/_dynamo/convert_frame.py), Inductor's graph call (``## Call
#: CompiledFxGraph {key} ##``, torch/_inductor/output_code.py), AOTAutograd's autograd
#: function (``CompiledFunction``, ``CompiledFunctionBackward``). Inductor's fused kernels
#: inside them are launched by generated code, not by aten ops, so no input shapes are
#: recorded for them even with ``record_shapes=True``.
COMPILED_REGION_ROWS: Final = regex(
    r"^(?:Torch-Compiled Region: |## Call CompiledFxGraph |CompiledFunction(?:Backward)?$)"
)
#: FLOPs unknown in a trace recorded with ``record_shapes=True`` whose compute runs in
#: compiled regions: asking for record_shapes would ask for what the user already did.
COMPILED_FLOPS_UNKNOWN: Final = (
    "FLOPs unknown: the shapes of compiled regions are not recorded; FLOPs for their kernels "
    "are unknown (the trace was recorded with record_shapes=True: torch.compile's generated "
    "code launches them, not aten ops)"
)


# --- model-level findings (analyses/complexity.py) ---------------------------------------------

CONV_BIAS_TITLE: Final = "{per_step} convolutions per step add a bias that BatchNorm removes"
SMALL_MODEL_TITLE: Final = "The model is small for this hardware"
SMALL_MODEL_ADVICE: Final = (
    "Give each step more work: a larger batch, fused ops (torch.compile), CUDA graphs; or run "
    "on smaller hardware."
)
HEAVY_MODEL_TITLE: Final = "The model is heavy for this hardware"
HEAVY_MODEL_ADVICE: Final = (
    "Do less work per step or spread it: mixed precision (bf16), a more efficient "
    "architecture, activation checkpointing for memory, more devices."
)
FOR_LOOP_OPTIMIZER_TITLE: Final = (
    "The optimizer updates parameters one tensor at a time ({per_step:.0f} ops per step)"
)
#: A for-loop optimizer taking this share of the step or more is of medium severity, else
#: low: the medium bound of `findings.severity_for` (profsight's own choice; the finding is
#: never rated high, its fix being one argument).
FOR_LOOP_MEDIUM_PCT: Final = 10.0
#: The optimizer class named in `optimizer_advice` when no ``Optimizer.step#`` row names it.
OPTIMIZER_PLACEHOLDER: Final = "YourOptimizer"
ALLOCATION_TITLE: Final = "{per_step:.0f} memory allocations per step"
