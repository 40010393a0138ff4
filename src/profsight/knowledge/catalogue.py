"""The finding catalogue: one `Rule` per finding category, as the docs site lists it.

Each rule says what fires the category's findings, what to change and where its thresholds
come from. The figures are read from the constants the analyses judge by
(`profsight.knowledge.advice`), so a threshold is written once, there; the catalogue only
words it. `tests/test_catalogue.py` holds the categories here equal to the findings'
(``profsight.model.findings.CATEGORIES``), and the docs build writes this registry out as
the page "Finding catalogue".

This module is knowledge: it imports the stdlib and other knowledge modules only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from profsight.knowledge import advice, graph_capture, precedence
from profsight.knowledge.phases import PHASE_LABELS, Phase

#: The families the catalogue groups categories in, in the order the page lists them.
DATA: Final = "data"
LOOP: Final = "training loop"
HOST: Final = "host"
DEVICE: Final = "device"
SYNC_COPIES: Final = "sync and copies"
COMPUTE: Final = "compute and precision"
COMMUNICATION: Final = "communication"
MEMORY: Final = "memory"
MODEL: Final = "model size"
SETUP: Final = "setup"
FAMILIES: Final = (DATA, LOOP, HOST, DEVICE, SYNC_COPIES, COMPUTE, COMMUNICATION, MEMORY, MODEL)
FAMILIES_ALL: Final = (*FAMILIES, SETUP)

#: Sources of thresholds that `advice` states in prose rather than as a constant.
OWN: Final = "profsight's own rule"
CUDA_DOCS: Final = 'documented behaviour (CUDA runtime API, "API synchronization behavior")'
ARITHMETIC: Final = "arithmetic on stated figures (1 MiB ~ 100 µs at host memory speed)"
VERDICT: Final = "the verdict's bounds (see the verdict's sources)"


@dataclass(frozen=True)
class Rule:
    """What fires one finding category, what to change, and where its thresholds come from."""

    category: str
    """The finding category (``Finding.category``)."""
    family: str
    """Which part of a run it concerns (one of `FAMILIES_ALL`)."""
    trigger: str
    """The conditions that fire it, with their thresholds."""
    fix: str
    """What to change (the advice the finding gives; some findings word it for the device)."""
    source: str
    """Where the thresholds come from."""


def _us(value: float) -> str:
    """A threshold in µs as the triggers print it (25 µs, 5 ms)."""
    return f"{value / 1000:g} ms" if value >= 1000 else f"{value:g} µs"


def _phase(phase: Phase) -> advice.PhaseRule:
    return advice.PHASE_RULES_BY_PHASE[phase]


def _phase_rule(phase: Phase, family: str) -> Rule:
    rule = _phase(phase)
    return Rule(
        category=rule.category,
        family=family,
        trigger=f"{PHASE_LABELS[rule.phase]} >= {rule.threshold_pct:g}% of the step",
        fix=rule.recommendation,
        source=rule.source,
    )


_OPTIMIZER = _phase(Phase.OPTIMIZER)
_ZERO_GRAD = _phase(Phase.ZERO_GRAD)

RULES: Final[tuple[Rule, ...]] = (
    _phase_rule(Phase.DATA_LOADING, DATA),
    Rule(
        category="optimizer",
        family=LOOP,
        trigger=f"the optimizer step >= {_OPTIMIZER.threshold_pct:g}% of the step, zero_grad "
        f">= {_ZERO_GRAD.threshold_pct:g}%, or >= {advice.FOR_LOOP_OPS_PER_STEP} "
        "per-parameter optimizer ops per step with no _foreach_/_fused_ op while the "
        f"optimizer takes >= {advice.FOR_LOOP_MIN_PCT:g}% of the step",
        fix=_OPTIMIZER.recommendation,
        source=_OPTIMIZER.source,
    ),
    _phase_rule(Phase.METRICS, LOOP),
    _phase_rule(Phase.VALIDATION, LOOP),
    _phase_rule(Phase.CALLBACKS_LOGGING, LOOP),
    Rule(
        category="per_step_overhead",
        family=HOST,
        trigger=f"time outside the model's math >= {advice.PER_STEP_OVERHEAD_PCT:g}% of a "
        f"step shorter than {_us(advice.SHORT_STEP_US)} (the replay prices "
        f"{advice.BATCH_SCALE}x the batch, per sample)",
        fix=advice.PER_STEP_ADVICE,
        source=advice.MEASURED,
    ),
    Rule(
        category="host_lead_in",
        family=HOST,
        trigger=f"host time from a GPU step's start to its first launch of device work >= "
        f"{advice.LEAD_IN_PCT:g}% of the step (of the device's idle time it can cost; the "
        "replay prices taking it out), one-time start-up aside; a lead-in at least "
        f"{advice.LEAD_IN_INPUT_FRACTION:.0%} in ops that make tensors (random, factories, "
        "stacking) builds the input on the host and is a data_loading finding",
        fix=advice.LEAD_IN_ADVICE,
        source=OWN,
    ),
    Rule(
        category="module_overhead",
        family=HOST,
        trigger=f"a module's own time >= {advice.MODULE_OWN_PCT:g}% of the step and >= "
        f"{advice.MODULE_OWN_FRACTION:.0%} of its total, or >= {advice.TINY_OPS_PER_STEP} "
        f"ops under {_us(advice.TINY_OP_US)} per step in forward holding >= "
        f"{advice.MODULE_OWN_PCT:g}% of the step (a Python loop of tiny ops)",
        fix=advice.MODULE_ADVICE,
        source=advice.MEASURED,
    ),
    Rule(
        category="gpu_idle",
        family=DEVICE,
        trigger=f"device busy < {advice.GPU_IDLE_PCT:g}% of the step (the idle time no sync "
        "finding explains), or idle time that is the step's largest share: the symptom every "
        "host-side cause shares, reported beside them and ranked after the one that explains "
        "most of it; in a job, at least half the ranks' own traces find their GPU idle",
        fix=advice.GPU_IDLE_ADVICE,
        source=advice.TB_PLUGIN,
    ),
    Rule(
        category="launch_overhead",
        family=DEVICE,
        trigger=f"device busy < {advice.GPU_IDLE_PCT:g}% of the step and at least "
        f"{advice.LAUNCH_BOUND_FRACTION:.0%} of the kernels outrun by the host's launches: "
        "each shorter than the time to the next launch, spent dispatching (inside ops for at "
        f"least {advice.LAUNCH_DISPATCH_FRACTION:.0%} of it): the device finishes each before "
        "the next arrives (a table: device work per launch < "
        f"{_us(advice.SHORT_KERNEL_US)})",
        fix=advice.LAUNCH_ADVICE,
        source=f"{advice.TB_PLUGIN} (utilisation); the launch's pace: {OWN}",
    ),
    Rule(
        category="gpu_held",
        family=DEVICE,
        trigger=f"launched work waiting >= {_us(advice.HELD_BACK_US)} with its device free, "
        f">= {advice.HELD_PCT:g}% of the step; past {advice.HELD_DOMINANT_PCT:g}% the verdict "
        "does not judge the model",
        fix=advice.HELD_ADVICE,
        source=advice.HELD_BASIS,
    ),
    Rule(
        category="host_device_sync",
        family=SYNC_COPIES,
        trigger=f"device idle during syncs (synchronize calls, reads back to the host) >= "
        f"{advice.SYNC_PCT:g}% of the step: the host, blocked, cannot queue more work; "
        f"{advice.ITEM_LOOP_PER_STEP} or more reads back per step are named a loop of "
        ".item()/.cpu(), whose fix (one read) the replay prices by collapsing each loop of ops "
        f"under {_us(advice.READ_BACK_OP_US)} with a wait in its iterations. Not a sync: the one "
        "synchronize that ends a profiled region, or a host waiting on a full launch queue (the "
        "device's time seen from the host); a table's bounded idle time ranks as an upper bound",
        fix=advice.SYNC_ADVICE,
        source=advice.MEASURED,
    ),
    Rule(
        category="memcpy",
        family=SYNC_COPIES,
        trigger="host-device copies as the device's main work (>= "
        f"{advice.COMPUTE_PCT:g}% of the step and more than the kernels' time: information, and "
        "the verdict names the transfer, not a heavy model); copies from pageable memory, or "
        f"peer-to-peer copies, >= {advice.COPY_PCT:g}% "
        "of the step (a table: copy calls whose host time is >= "
        f"{advice.BLOCKING_COPY_FRACTION:.0%} of their device time, or >= "
        f"{_us(advice.BLOCKING_CALL_US)} a call)",
        fix=f"{advice.PAGEABLE_ADVICE} Between GPUs: {advice.PEER_ADVICE} "
        f"{advice.COPY_BOUND_ADVICE}",
        source=CUDA_DOCS,
    ),
    Rule(
        category="compute_conv",
        family=COMPUTE,
        trigger=f"convolutions >= {advice.COMPUTE_PCT:g}% of the step (informational); a "
        "convolution with a bias followed by a batch norm",
        fix=advice.COMPUTE_ADVICE["compute_conv"][1].format(precision="mixed precision")
        + " "
        + advice.CONV_BIAS_ADVICE,
        source=OWN,
    ),
    Rule(
        category="compute_matmul",
        family=COMPUTE,
        trigger=f"matrix multiplies and attention >= {advice.COMPUTE_PCT:g}% of the step "
        "(informational)",
        fix=advice.COMPUTE_ADVICE["compute_matmul"][1].format(precision="mixed precision"),
        source=OWN,
    ),
    Rule(
        category="compute_other",
        family=COMPUTE,
        trigger=f"elementwise, normalisation and other ops >= {advice.COMPUTE_PCT:g}% of the "
        "step (informational)",
        fix=advice.COMPUTE_ADVICE["compute_other"][1],
        source=OWN,
    ),
    Rule(
        category="low_precision",
        family=COMPUTE,
        trigger=f"FP32 GEMM/convolution kernels >= {advice.FP32_ON_TENSOR_CORES_PCT:g}% of "
        "device time on a GPU with tensor cores (the replay prices them at the tensor cores' "
        "peak ratio: an upper bound)",
        fix="Mixed precision in the form the GPU's generation takes: BF16 and TF32 from Ampere, "
        "FP16 with a gradient scaler on Volta and Turing, FP8 from Ada and Hopper.",
        source=f"{advice.TB_PLUGIN} (tensor-core eligible work not on tensor cores)",
    ),
    Rule(
        category="communication",
        family=COMMUNICATION,
        trigger=f"exposed communication (a collective running while nothing computes) >= "
        f"{advice.COMMUNICATION_PCT:g}% of the step: the step waits for the links or a slower "
        "rank; collectives that compute hides, overlapped >= "
        f"{advice.COMMUNICATION_PCT:g}% of the step, are information with the exposed share; a "
        "printed table's collectives (kernels, nccl: labels and their ops counted once) >= "
        f"{advice.COMMUNICATION_BOUND_SHARE:g}% of the device's work bound the step; in a job, "
        "beyond the waiting for a slower rank, or on most ranks with the waiting named (ranked "
        "by the transfer alone)",
        fix=advice.COMMUNICATION_ADVICE,
        source=f"{advice.TB_PLUGIN} (counted on exposed time, not all communication)",
    ),
    Rule(
        category="straggler",
        family=COMMUNICATION,
        trigger=f"the other ranks wait >= {advice.STRAGGLER_PCT:g}% of the step for the last "
        "rank to arrive at the collectives (a job only); its cause is a phase or op taking "
        f">= {advice.STRAGGLER_CAUSE_SHARE:.0%} of the wait more than on the median rank",
        fix="The fix for its cause: "
        + " ".join(f"{why}: {fix}" for why, fix in advice.STRAGGLER_CAUSES.values()),
        source=f"{OWN} (tests/test_job.py: a rank slowed by 40 ms makes the others wait ~90%, "
        "an unslowed job under 5%)",
    ),
    Rule(
        category="memory",
        family=MEMORY,
        trigger=f"device memory peak > {advice.MEMORY_PEAK_FRACTION:.0%} of the device; >= "
        f"{advice.ALLOCATIONS_PER_STEP} allocations per step; or a copy op allocating >= "
        f"{advice.LARGE_COPY_BYTES // 2**20} MiB per call with >= {advice.COPY_CHURN_PCT:g}% "
        "of the step (a tensor grown by torch.cat)",
        fix=f"{advice.MEMORY_LIMIT_ADVICE.format(precision='bf16 or fp16')} "
        f"{advice.ALLOCATION_ADVICE} {advice.COPY_CHURN_ADVICE}",
        source=f"peak: {advice.TB_PLUGIN}; allocations and copies: {advice.MEASURED}, {ARITHMETIC}",
    ),
    Rule(
        category="model_complexity",
        family=MODEL,
        trigger="a conclusion from the causes, never ranked above them: the verdict judges the "
        "model too small (device busy < "
        f"{advice.STARVED_PCT:g}% with the host issuing work, or fixed cost outweighing the "
        f"model's work) or too heavy (device busy > {advice.SATURATED_PCT:g}% with its math at "
        f">= {advice.EFFICIENT_MFU_PCT:g}% of peak, memory at its limit, or on a CPU the "
        f"model's work > {advice.CPU_COMPUTE_PCT:g}% of the step) for its hardware",
        fix=f"Too small: {advice.SMALL_MODEL_ADVICE} Too heavy: {advice.HEAVY_MODEL_ADVICE}",
        source=f"{VERDICT}: {advice.TB_PLUGIN} (utilisation < 50%), saturation and MFU: {OWN} "
        "(healthy GPU runs 80-95% busy; large-model training reaches 40-60% of peak)",
    ),
    Rule(
        category="profiler_setup",
        family=SETUP,
        trigger="the profile itself: a trace cut off; a GPU shown but no device activity "
        "recorded; no ProfilerStep ranges; fewer than "
        f"{advice.MIN_STEPS} steps; a first step {advice.WARMUP_OUTLIER:g}x the others (of >= "
        f"{advice.WARMUP_MIN_STEPS}); matmuls or convolutions without input shapes; the "
        f"profiler's own work >= {advice.PROFILER_OVERHEAD_PCT:g}% of the steps; > "
        f"{advice.STACK_FRAMES_PER_STEP} Python frames per step (with_stack); one-time "
        f"start-up (a call {advice.STARTUP_FACTOR:g}x its kind's median and >= "
        f"{_us(advice.STARTUP_MIN_US)}, a first use of the device such as cudaFree creating "
        "the context, or torch.compile compiling; in a table, CUPTI's loading rows, first-use "
        f"calls averaging >= {_us(advice.STARTUP_MIN_US)}, or a device op spending that long a "
        f"call on the host, {advice.STARTUP_FACTOR:g}x its device time) >= "
        f"{advice.PROFILER_OVERHEAD_PCT:g}% of the window: a one-time cost, no part of the "
        "steady step, so it ranks after what is, and first, not judged, only where it "
        f"dominates the window (>= {advice.STARTUP_DOMINANT_PCT:g}%); in a table of one step, "
        f"a range called once whose own host time is >= {_us(advice.STALL_GAP_US)} per op call "
        "(no per-op Python costs that: a stall the profiler did not record), first and not "
        "judged where it dominates; a printed table cut to a fragment with no step (not "
        "judged, unless its rows' printed device shares name the collectives or a compute "
        "family); a CUDA-graph capture (a stream "
        "recording from cudaStreamBeginCapture to cudaStreamEndCapture, the graph's "
        "instantiation, vLLM's, SGLang's and torch.compile's capture ranges) >= "
        f"{advice.PROFILER_OVERHEAD_PCT:g}% of the window, first and not judged from "
        f"{graph_capture.CAPTURE_DOMINANT_PCT:g}% (no FLOP/s, utilisation or roofline "
        "from it)",
        fix=f"{advice.FEW_STEPS_ADVICE} {advice.STARTUP_ADVICE} {advice.NO_SHAPES_ADVICE} "
        f"{advice.STACK_TRACING_ADVICE} {advice.NO_DEVICE_ACTIVITY_ADVICE} "
        f"{graph_capture.CAPTURE_ADVICE}",
        source=f"{OWN}; start-up floor: above a 2-core machine's 1-2 ms scheduling jitter",
    ),
)

RULES_BY_CATEGORY: Final[dict[str, Rule]] = {rule.category: rule for rule in RULES}


#: How findings rank (`model.findings.ranked`), as the catalogue page states it.
RANKING: Final = (
    "Findings come first by what fixing them would save in the steady step, in one currency "
    "(the steady-state step time; per sample for a larger batch). A finding that says the "
    "profile cannot be read as it is (device activity not recorded, start-up or a CUDA-graph "
    "capture filling the window, a fragment of a table) comes before everything, and the "
    "verdict is then not judged. A measured or estimated saving ranks before an upper bound "
    "of the same size; information (where the time goes) comes next; then what saves less "
    f"than {advice.MINOR_PCT:g}% of the step, then what nothing prices. The verdict restated "
    f"as a finding ({precedence.VERDICT_CATEGORY}) is a conclusion drawn from the causes and "
    "comes after all of them; notes on the profile itself come last. Where several host-side "
    "findings explain the same idle device, the one that names what the device waits on "
    "comes first: " + ", then ".join(precedence.HOST_CAUSES) + ". A more "
    "specific finding explains a less specific one's time when the time their fixes remove "
    f"in common is at least {precedence.SAME_TIME_FRACTION:.0%} of what the other removes "
    "(replayed with both fixes made; a printed table takes the smaller saving as shared); it "
    "then ranks by that finding's saving. So a device-to-host copy with a stream sync per "
    "element is a sync, thousands of 2 µs kernels launched back to back are launch overhead, "
    "Python between ops with the launch queue empty is module overhead, and the idle device "
    "they leave is the symptom, reported after its cause."
)
