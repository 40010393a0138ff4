"""The finding catalogue: one `Rule` per finding category, as the docs site lists it.

Each rule says what fires the category's findings, what to change and where its thresholds
come from. The figures are read from the constants the analyses judge by
(`profsight.knowledge.advice`), so a threshold is written once, there; the catalogue only
words it. `tests/test_catalogue.py` holds the categories here equal to the findings'
(``profsight.model.findings.CATEGORIES``), and the docs build writes this registry out as
the page "Finding catalogue".

This module is knowledge: it imports the stdlib, msgspec (its records are Structs) and other
knowledge modules only.
"""

from __future__ import annotations

from typing import Final

import msgspec

from profsight.knowledge import advice, graph_capture, precedence
from profsight.knowledge.phases import PHASE_LABELS, Phase
from profsight.knowledge.threshold_sources import THRESHOLDS, Threshold

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


class Rule(msgspec.Struct, frozen=True):
    """What fires one finding category, what to change, and where its thresholds come from.

    Each condition is declared here once, with its thresholds: the analysis that detects it
    gives its text as the finding's trigger (`condition`), and the catalogue page lists the
    same texts, so the two cannot disagree (`tests/test_catalogue.py` checks every trigger
    the real profiles of `tests/data` give against them)."""

    category: str
    """The finding category (``Finding.category``)."""
    family: str
    """Which part of a run it concerns (one of `FAMILIES_ALL`)."""
    conditions: dict[str, str]
    """Each condition that fires it, by key, with its thresholds: a finding's ``trigger``."""
    fix: str
    """What to change (the advice the finding gives; some findings word it for the device)."""
    source: str
    """Where the thresholds come from."""
    note: str = ""
    """How its findings rank or what they leave to others, beyond what fires them."""
    name: str = ""
    """How a sentence names it ("" : its id with spaces, `label`)."""
    thresholds: tuple[Threshold, ...] = ()
    """Thresholds declared here with their value and basis (a new category's: `limit` reads
    them); the older categories' are constants of `advice`, their basis in
    `threshold_sources.THRESHOLDS`."""

    @property
    def label(self) -> str:
        return self.name or self.category.replace("_", " ")

    @property
    def trigger(self) -> str:
        """The conditions, as the catalogue page words them."""
        text = "; or ".join(self.conditions.values())
        return f"{text}. {self.note}" if self.note else text


def _us(value: float) -> str:
    """A threshold in µs as the triggers print it (25 µs, 5 ms)."""
    return f"{value / 1000:g} ms" if value >= 1000 else f"{value:g} µs"


def _phase(phase: Phase) -> advice.PhaseRule:
    return advice.PHASE_RULES_BY_PHASE[phase]


def phase_condition(rule: advice.PhaseRule) -> str:
    """The condition of a phase's rule (`condition(rule.category, rule.phase.value)`)."""
    return f"{PHASE_LABELS[rule.phase]} >= {rule.threshold_pct:g}% of the step"


def _phase_rule(phase: Phase, family: str, name: str = "") -> Rule:
    rule = _phase(phase)
    return Rule(
        category=rule.category,
        family=family,
        conditions={phase.value: phase_condition(rule)},
        fix=rule.recommendation,
        source=rule.source,
        name=name,
    )


_OPTIMIZER = _phase(Phase.OPTIMIZER)
_ZERO_GRAD = _phase(Phase.ZERO_GRAD)
_LEAD_IN = (
    f"host time from a GPU step's start to its first launch of device work >= "
    f"{advice.LEAD_IN_PCT:g}% of the step (of the device's idle time it can cost), one-time "
    "start-up aside"
)
_HOT_FUNCTION = (
    f"the step's top self-time function holds >= {advice.HOT_FUNCTION_PCT:g}% of the step "
    "(AdvancedProfiler's listing)"
)
_GPU_IDLE = (
    f"device busy < {advice.GPU_IDLE_PCT:g}% of the step, or idle time >= "
    f"{advice.IDLE_LARGEST_MIN_PCT:g}% of the step that no other finding names and more than "
    "any family of device work"
)


def _compute(
    category: str, name: str, what: str, fix: str, extra: dict[str, str] | None = None
) -> Rule:
    return Rule(
        category=category,
        family=COMPUTE,
        name=name,
        conditions={
            "share": f"{what} >= {advice.COMPUTE_PCT:g}% of the step (informational)",
            "fragment": f"a fragment's largest compute family, {what}, >= "
            f"{advice.COMPUTE_PCT:g}% of the device's time (informational)",
            **(extra or {}),
        },
        fix=fix,
        source=OWN,
    )


_STALL_GAP = Threshold(
    "STALL_GAP_US",
    "profiler_setup",
    "own",
    given=1_000.0,
    reason="A one-pass range's own host time (outside every recorded op) at this much or "
    "more per op call in its window is no per-op overhead but a stall the profiler did not "
    "record (`analyses.step.table_stall`): eager PyTorch spends ~5-20 µs a call in Python "
    "and the dispatcher, nn.Module's __call__ and hooks a few more; the ranges of the "
    "labelled corpus's tables that are read right hold 25-310 µs of own time per op call "
    "(310: a training loop's range that also holds its data loading), the stall 4.1 ms.",
)

RULES: Final[tuple[Rule, ...]] = (
    Rule(
        category="data_loading",
        family=DATA,
        conditions={
            Phase.DATA_LOADING.value: phase_condition(_phase(Phase.DATA_LOADING)),
            "lead_in": f"{_LEAD_IN}, at least {advice.LEAD_IN_INPUT_FRACTION:.0%} of it in ops "
            "that make tensors (random, factories, stacking): the step builds its input",
        },
        fix=_phase(Phase.DATA_LOADING).recommendation,
        source=_phase(Phase.DATA_LOADING).source,
    ),
    Rule(
        category="optimizer",
        family=LOOP,
        conditions={
            Phase.OPTIMIZER.value: phase_condition(_OPTIMIZER),
            Phase.ZERO_GRAD.value: phase_condition(_ZERO_GRAD),
            "for_loop": f">= {advice.FOR_LOOP_OPS_PER_STEP} per-parameter optimizer ops per "
            "step with no _foreach_/_fused_ op while the optimizer takes >= "
            f"{advice.FOR_LOOP_MIN_PCT:g}% of the step",
        },
        fix=_OPTIMIZER.recommendation,
        source=_OPTIMIZER.source,
    ),
    _phase_rule(Phase.METRICS, LOOP),
    _phase_rule(Phase.VALIDATION, LOOP),
    _phase_rule(Phase.CALLBACKS_LOGGING, LOOP, "callbacks and logging"),
    Rule(
        category="per_step_overhead",
        family=HOST,
        conditions={
            "short_step": f"time outside the model's math >= {advice.PER_STEP_OVERHEAD_PCT:g}% "
            f"of a step shorter than {_us(advice.SHORT_STEP_US)}",
        },
        fix=advice.PER_STEP_ADVICE,
        source=advice.MEASURED,
        note=f"The replay prices {advice.BATCH_SCALE}x the batch, per sample.",
    ),
    Rule(
        category="host_lead_in",
        family=HOST,
        conditions={"lead_in": _LEAD_IN},
        fix=advice.LEAD_IN_ADVICE,
        source=OWN,
        note="The replay prices taking it out; a lead-in that builds the input is a "
        "data_loading finding.",
    ),
    Rule(
        category="module_overhead",
        family=HOST,
        conditions={
            "own_time": f"a module's own time >= {advice.MODULE_OWN_PCT:g}% of the step and >= "
            f"{advice.MODULE_OWN_FRACTION:.0%} of its total",
            "tiny_ops": f">= {advice.TINY_OPS_PER_STEP} ops under {_us(advice.TINY_OP_US)} per "
            f"step holding >= {advice.MODULE_OWN_PCT:g}% of the step (a Python loop of tiny ops)",
            "hot_function": _HOT_FUNCTION,
        },
        fix=advice.MODULE_ADVICE,
        source=advice.MEASURED,
    ),
    Rule(
        category="gpu_idle",
        family=DEVICE,
        name="GPU idle time",
        conditions={
            "idle": _GPU_IDLE,
            "job": "at least half the ranks' own traces find their GPU idle",
        },
        fix=advice.GPU_IDLE_ADVICE,
        source=advice.TB_PLUGIN,
        note="The symptom every host-side cause shares: reported beside them and ranked after "
        "the one that explains most of it.",
    ),
    Rule(
        category="launch_overhead",
        family=DEVICE,
        conditions={
            "outrun": f"the GPU idle ({_GPU_IDLE}) and at least "
            f"{advice.LAUNCH_BOUND_FRACTION:.0%} of the kernels outrun by the host's launches: "
            "each shorter than the time to the next launch, spent dispatching (inside ops for "
            f"at least {advice.LAUNCH_DISPATCH_FRACTION:.0%} of it)",
            "short": f"in a table, the GPU idle and device work per launch < "
            f"{_us(advice.SHORT_KERNEL_US)}",
        },
        fix=advice.LAUNCH_ADVICE,
        source=f"{advice.TB_PLUGIN} (utilisation); the launch's pace: {OWN}",
    ),
    Rule(
        category="gpu_held",
        family=DEVICE,
        name="launched work the GPU held back",
        conditions={
            "held": f"launched work waiting >= {_us(advice.HELD_BACK_US)} with its device free, "
            f">= {advice.HELD_PCT:g}% of the step",
        },
        fix=advice.HELD_ADVICE,
        source=advice.HELD_BASIS,
        note=f"Past {advice.HELD_DOMINANT_PCT:g}% the verdict does not judge the model.",
    ),
    Rule(
        category="host_device_sync",
        family=SYNC_COPIES,
        name="host-device syncs",
        conditions={
            "sync": f"device idle during syncs (synchronize calls, reads back to the host) >= "
            f"{advice.SYNC_PCT:g}% of the step",
            "hot_function": _HOT_FUNCTION + ", a wait for the device",
        },
        fix=advice.SYNC_ADVICE,
        source=advice.MEASURED,
        note=f"The host, blocked, cannot queue more work. {advice.ITEM_LOOP_PER_STEP} or more "
        "reads back per step are named a loop of .item()/.cpu(), whose fix (one read) the "
        "replay prices by collapsing each loop of ops under "
        f"{_us(advice.READ_BACK_OP_US)} with a wait in its iterations. Not a sync: the one "
        "synchronize that ends a profiled region, or a host waiting on a full launch queue "
        "(the device's time seen from the host); a table's bounded idle time ranks as an "
        "upper bound.",
    ),
    Rule(
        category="memcpy",
        family=SYNC_COPIES,
        name="copies",
        conditions={
            "pageable": f"host-device copies from pageable memory >= {advice.COPY_PCT:g}% of "
            "the step",
            "blocking": f"host-device copies >= {advice.COPY_PCT:g}% of the step with as much "
            "host time in their calls as on the device (a table: host time >= "
            f"{advice.BLOCKING_COPY_FRACTION:.0%} of their device time, or >= "
            f"{_us(advice.BLOCKING_CALL_US)} a call)",
            "peer": f"peer-to-peer copies >= {advice.COPY_PCT:g}% of the step",
            "fragment": f"a fragment's largest family of device work, copies, >= "
            f"{advice.COMPUTE_PCT:g}% of the device's time (informational)",
            "copy_bound": f"host-device copies >= {advice.COMPUTE_PCT:g}% of the step and more "
            "than the kernels' busy time (information: the verdict names the transfer, not a "
            "heavy model)",
        },
        fix=f"{advice.PAGEABLE_ADVICE} Between GPUs: {advice.PEER_ADVICE} "
        f"{advice.COPY_BOUND_ADVICE}",
        source=CUDA_DOCS,
    ),
    _compute(
        "compute_conv",
        "convolutions",
        "convolutions",
        advice.COMPUTE_ADVICE["compute_conv"][1].format(precision="mixed precision")
        + " "
        + advice.CONV_BIAS_ADVICE,
        {"conv_bias": "aten::convolution with a bias whose next op is a batch norm"},
    ),
    _compute(
        "compute_matmul",
        "matrix multiplies",
        "matrix multiplies and attention",
        advice.COMPUTE_ADVICE["compute_matmul"][1].format(precision="mixed precision"),
    ),
    _compute(
        "compute_other",
        "elementwise compute",
        "elementwise, normalisation and other ops",
        advice.COMPUTE_ADVICE["compute_other"][1],
    ),
    Rule(
        category="low_precision",
        family=COMPUTE,
        conditions={
            "fp32": f"FP32 GEMM/convolution kernels >= {advice.FP32_ON_TENSOR_CORES_PCT:g}% of "
            "device time on a GPU with tensor cores",
        },
        fix="Mixed precision in the form the GPU's generation takes: BF16 and TF32 from Ampere, "
        "FP16 with a gradient scaler on Volta and Turing, FP8 from Ada and Hopper.",
        source=f"{advice.TB_PLUGIN} (tensor-core eligible work not on tensor cores)",
        note="The replay prices them at the tensor cores' peak ratio: an upper bound.",
    ),
    Rule(
        category="communication",
        family=COMMUNICATION,
        conditions={
            "exposed": f"exposed communication (a collective running while nothing computes) "
            f">= {advice.COMMUNICATION_PCT:g}% of the step",
            "overlapped": f"exposed communication < {advice.COMMUNICATION_PCT:g}% of the step "
            f"and overlapped >= {advice.COMMUNICATION_PCT:g}% (information, with the exposed "
            "share)",
            "table_bound": f"a printed table's collectives (kernels, nccl: labels and their ops "
            f"counted once) >= {advice.COMMUNICATION_BOUND_SHARE:g}% of the device's work",
            "table_noted": f"a printed table's collectives >= "
            f"{advice.COMMUNICATION_NOTED_PCT:g}% of the step and less than "
            f"{advice.COMMUNICATION_BOUND_SHARE:g}% of the device's work",
            "fragment": f"a fragment's collectives >= {advice.COMMUNICATION_BOUND_SHARE:g}% of "
            "the device's time, or its largest share (their rows' Self CUDA %)",
            "job_beyond": "in a job, exposed communication beyond the waiting for a slower rank "
            f">= {advice.COMMUNICATION_PCT:g}% of the step",
            "job_median": f"in a job, exposed communication >= {advice.COMMUNICATION_PCT:g}% of "
            "the step on the median rank, most of it waiting for other ranks (ranked by the "
            "transfer alone)",
        },
        fix=advice.COMMUNICATION_ADVICE,
        source=f"{advice.TB_PLUGIN} (counted on exposed time, not all communication)",
    ),
    Rule(
        category="straggler",
        family=COMMUNICATION,
        conditions={
            "wait": f"in a job, the other ranks wait >= {advice.STRAGGLER_PCT:g}% of the step "
            "for the last rank to arrive at the collectives",
            "longer": f"in a job, a rank's step >= {advice.STRAGGLER_PCT:g}% longer than the "
            "median rank's",
        },
        fix="The fix for its cause: "
        + " ".join(f"{why}: {fix}" for why, fix in advice.STRAGGLER_CAUSES.values()),
        source=f"{OWN} (tests/test_job.py: a rank slowed by 40 ms makes the others wait ~90%, "
        "an unslowed job under 5%)",
        note="Its cause is a phase or op taking >= "
        f"{advice.STRAGGLER_CAUSE_SHARE:.0%} of the wait more than on the median rank.",
    ),
    Rule(
        category="memory",
        family=MEMORY,
        conditions={
            "peak": f"device memory peak > {advice.MEMORY_PEAK_FRACTION:.0%} of the device",
            "allocations": f">= {advice.ALLOCATIONS_PER_STEP} allocations per step",
            "copy_churn": f"a copy op allocating >= {advice.LARGE_COPY_BYTES // 2**20} MiB per "
            f"call with >= {advice.COPY_CHURN_PCT:g}% of the step (a tensor grown by torch.cat)",
            "optimizer_state": advice.OPTIMIZER_STATE_TRIGGER.format(
                share=advice.OPTIMIZER_STATE_SHARE
            ),
        },
        fix=f"{advice.MEMORY_LIMIT_ADVICE.format(precision='bf16 or fp16')} "
        f"{advice.ALLOCATION_ADVICE} {advice.COPY_CHURN_ADVICE}",
        source=f"peak: {advice.TB_PLUGIN}; allocations and copies: {advice.MEASURED}, {ARITHMETIC}",
    ),
    Rule(
        category="model_complexity",
        family=MODEL,
        conditions={
            "verdict": "a conclusion from the causes, never ranked above them: the verdict "
            f"judges the model too small (device busy < {advice.STARVED_PCT:g}% with the host "
            "issuing work, or fixed cost outweighing the model's work) or too heavy (device "
            f"busy > {advice.SATURATED_PCT:g}% with its math at >= "
            f"{advice.EFFICIENT_MFU_PCT:g}% of peak, memory at its limit, or on a CPU the "
            f"model's work > {advice.CPU_COMPUTE_PCT:g}% of the step) for its hardware",
        },
        fix=f"Too small: {advice.SMALL_MODEL_ADVICE} Too heavy: {advice.HEAVY_MODEL_ADVICE}",
        source=f"{VERDICT}: {advice.TB_PLUGIN} (utilisation < 50%), saturation and MFU: {OWN} "
        "(healthy GPU runs 80-95% busy; large-model training reaches 40-60% of peak)",
    ),
    Rule(
        category="profiler_setup",
        family=SETUP,
        name="the profiler's setup",
        conditions={
            "check": "the profile itself: a trace cut off; no ProfilerStep ranges; fewer than "
            f"{advice.MIN_STEPS} steps; a first step {advice.WARMUP_OUTLIER:g}x the others (of "
            f">= {advice.WARMUP_MIN_STEPS}); matmuls or convolutions without input shapes; the "
            f"profiler's own work >= {advice.PROFILER_OVERHEAD_PCT:g}% of the steps; > "
            f"{advice.STACK_FRAMES_PER_STEP} Python frames per step (with_stack); a printed "
            "table cut to a fragment with no step (not judged, unless its rows' printed device "
            "shares name the collectives or a compute family)",
            "unrecorded": "a GPU shown (devices, runtime calls, GPU-only ops or a backward on a "
            "device thread) with no kernel, copy or memset recorded",
            "startup": f"one-time start-up >= {advice.PROFILER_OVERHEAD_PCT:g}% of the window: "
            f"a call {advice.STARTUP_FACTOR:g}x its kind's median and >= "
            f"{_us(advice.STARTUP_MIN_US)}, a first use of the device such as cudaFree creating "
            "the context, or torch.compile compiling; in a table, CUPTI's loading rows, "
            f"first-use calls averaging >= {_us(advice.STARTUP_MIN_US)}, or a device op "
            f"spending that long a call on the host, {advice.STARTUP_FACTOR:g}x its device "
            f"time; first, not judged, from {advice.STARTUP_DOMINANT_PCT:g}% of the window",
            "stall": "in a table of one step, a range called once whose own host time is >= "
            f"{_us(_STALL_GAP.value)} per op call (no per-op Python costs that: a stall the "
            f"profiler did not record) >= {advice.PROFILER_OVERHEAD_PCT:g}% of the window; "
            f"first, not judged, from {advice.STARTUP_DOMINANT_PCT:g}%",
            "capture": "a CUDA-graph capture (a stream recording from cudaStreamBeginCapture "
            "to cudaStreamEndCapture, the graph's instantiation, vLLM's, SGLang's and "
            f"torch.compile's capture ranges) >= {advice.PROFILER_OVERHEAD_PCT:g}% of the "
            f"window; first and not judged from {graph_capture.CAPTURE_DOMINANT_PCT:g}% (no "
            "FLOP/s, utilisation or roofline from it)",
        },
        fix=f"{advice.FEW_STEPS_ADVICE} {advice.STARTUP_ADVICE} {advice.NO_SHAPES_ADVICE} "
        f"{advice.STACK_TRACING_ADVICE} {advice.NO_DEVICE_ACTIVITY_ADVICE} "
        f"{graph_capture.CAPTURE_ADVICE}",
        source=f"{OWN}; start-up floor: above a 2-core machine's 1-2 ms scheduling jitter",
        thresholds=(_STALL_GAP,),
        note="One-time start-up is no part of the steady step: it ranks after what is, and "
        "first only where it dominates the window.",
    ),
)

RULES_BY_CATEGORY: Final[dict[str, Rule]] = {rule.category: rule for rule in RULES}


def limit(category: str, name: str) -> float:
    """The value of a threshold `category`'s rule declares (`Rule.thresholds`). Raises
    KeyError for one it does not declare."""
    for t in RULES_BY_CATEGORY[category].thresholds:
        if t.name == name:
            return t.value
    raise KeyError(f"{category} declares no threshold {name}")


def all_thresholds() -> tuple[Threshold, ...]:
    """Every threshold the rules judge by: `advice`'s constants and the rules' own."""
    return THRESHOLDS + tuple(t for r in RULES for t in r.thresholds)


def condition(category: str, key: str) -> str:
    """The text of one condition of `category`'s rule: the trigger of the findings it fires.
    Raises KeyError for a condition the catalogue does not declare."""
    return RULES_BY_CATEGORY[category].conditions[key]


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
