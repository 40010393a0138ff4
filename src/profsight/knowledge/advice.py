"""What to do about each kind of bottleneck: the rules' thresholds, sources and advice.

Thresholds cite where they come from: the TensorBoard profiler plugin's recommendation
rules (``torch_tb_profiler/profiler/data.py``: DataLoader > 5% of the step, communication
> 10%, GPU utilisation < 50%, tensor-core eligible work on FP32, memory > 90% of the
device), or profsight's own measurement on the planted-bottleneck runs of
``tests/scenarios.py`` (noted "measured").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from profsight.knowledge.generations import fp8_note, precision_phrase, takes
from profsight.knowledge.phases import Phase

TB_PLUGIN: Final = "TensorBoard profiler plugin rule"
MEASURED: Final = "profsight's planted-bottleneck runs (tests/scenarios.py)"
#: What a printed table cannot show, said with every finding read from one.
NO_TIMELINE: Final = "from the table alone: it has no timeline"

#: A finding's severity from the share of the step at stake: high from this share, medium
#: from the next (profsight's own bands).
HIGH_SEVERITY_PCT: Final = 30.0
MEDIUM_SEVERITY_PCT: Final = 10.0
#: Things to change with less than this share of the step to save rank after the
#: informational findings (where the compute goes): they are not what bounds the step.
MINOR_PCT: Final = 5.0


@dataclass(frozen=True)
class PhaseRule:
    """A phase that, past a share of the step, is a finding."""

    phase: Phase
    category: str
    threshold_pct: float
    source: str
    title: str
    explanation: str
    recommendation: str


#: The optimizer implementations that do the update in a few ops. Measured on this CPU
#: (ManyParams, 301 tensors, Adam, torch 2.13): for-loop 6.1 ms a step, foreach 3.4 ms, fused
#: 1.0 ms; under the profiler foreach gains nothing (its CPU fallback runs one recorded op
#: per tensor: 14.4 vs 14.1 ms) and fused saves 70% of the step.
OPTIMIZER_IMPLEMENTATION_ADVICE: Final = (
    "Use the fused implementation, one op over all parameters: torch.optim.Adam(params, "
    "fused=True) (AdamW, SGD too; CUDA, and CPU from torch 2.4), or foreach=True on CUDA (on "
    "CPU it still runs one op per tensor)."
)

PHASE_RULES: Final[tuple[PhaseRule, ...]] = (
    PhaseRule(
        Phase.DATA_LOADING,
        "data_loading",
        5.0,
        f"{TB_PLUGIN} (DataLoader > 5% of the step)",
        "The training loop waits for data",
        "Fetching the next batch (the DataLoader's __next__, the collate, the transfer to the "
        "device) runs on the training process itself, in series with the step.",
        "Load in background processes and overlap the copy: DataLoader(dataset, "
        "batch_size=..., num_workers=4 (up to the CPU cores), pin_memory=True, "
        "persistent_workers=True, prefetch_factor=2) and tensor.to(device, non_blocking=True); "
        "move heavy per-item work (decoding, augmentation) out of __getitem__ or cache it.",
    ),
    PhaseRule(
        Phase.OPTIMIZER,
        "optimizer",
        15.0,
        MEASURED,
        "The optimizer step takes a large share of the step",
        "The optimizer updates every parameter tensor each step; with many tensors and the "
        "per-parameter (for-loop) implementation, that is thousands of small ops.",
        OPTIMIZER_IMPLEMENTATION_ADVICE
        + " Fewer, larger parameter tensors; for very large models, an optimizer with less "
        "state (Adafactor, 8-bit Adam) or ZeRO sharding.",
    ),
    PhaseRule(
        Phase.ZERO_GRAD,
        "optimizer",
        3.0,
        MEASURED,
        "Clearing gradients costs time",
        "zero_grad() that fills gradients with zeros launches a memset per parameter.",
        "optimizer.zero_grad(set_to_none=True) (the default since torch 2.0) frees the "
        "gradients instead of zeroing them.",
    ),
    PhaseRule(
        Phase.METRICS,
        "metrics",
        5.0,
        MEASURED,
        "Metrics are computed every step",
        "Updating and computing a metric each step costs CPU time and, on a GPU, a "
        "synchronisation for every value that is logged.",
        "Update the metric in the step but compute it once per epoch: self.log('acc', "
        "self.acc, on_step=False, on_epoch=True); log every n steps (Trainer("
        "log_every_n_steps=50)); keep metric states on the device.",
    ),
    PhaseRule(
        Phase.VALIDATION,
        "validation",
        20.0,
        MEASURED,
        "Validation takes a large share of the profiled time",
        "Validation runs inside the training epoch and adds to its wall time.",
        "Validate less often or on fewer batches: Trainer(val_check_interval=1.0, "
        "check_val_every_n_epoch=..., limit_val_batches=0.25); use a larger validation batch "
        "size (no gradients are kept).",
    ),
    PhaseRule(
        Phase.CALLBACKS_LOGGING,
        "callbacks_logging",
        5.0,
        MEASURED,
        "Hooks, callbacks or logging slow every step",
        "Callbacks and hooks run in series with every batch; logging converts values to "
        "Python numbers (a sync on a GPU) and writes them out.",
        "Make per-batch callbacks cheap or run them every n batches; Trainer("
        "log_every_n_steps=50); move checkpointing and heavy logging to epoch ends.",
    ),
)

PHASE_RULES_BY_PHASE: Final[dict[Phase, PhaseRule]] = {r.phase: r for r in PHASE_RULES}

#: Said of the optimizer's share of a short step.
SHORT_STEP_OPTIMIZER: Final = (
    " The update costs the same whatever the batch size: on a step this short, a larger batch "
    "amortises it too."
)

#: Per-step fixed cost (framework, hooks, Python between ops) past this share, on short
#: steps, means the batch is too small for the fixed cost of a step (measured).
PER_STEP_OVERHEAD_PCT: Final = 25.0
#: Fixed per-step cost of this share of the step or more is high severity whatever the
#: bands: half the step does no model work.
PER_STEP_HIGH_PCT: Final = 50.0
SHORT_STEP_US: Final = 50_000.0
PER_STEP_ADVICE: Final = (
    "Give each step more work: a larger batch (DataLoader(batch_size=...), with the learning "
    "rate scaled), gradient accumulation does not help here (it keeps the per-step cost); "
    "torch.compile(model) removes Python overhead between ops."
)

#: A module whose own time (outside its child modules) is this share of the step and this
#: fraction of its total is doing work in Python or in glue ops (measured).
MODULE_OWN_PCT: Final = 8.0
MODULE_OWN_FRACTION: Final = 0.4
#: Many tiny ops: average CPU time per call under this, this many calls per step (measured).
TINY_OP_US: Final = 25.0
TINY_OPS_PER_STEP: Final = 200
#: Said of a ``DistributedDataParallel.forward`` row with high own time.
DDP_FORWARD_NOTE: Final = (
    " DistributedDataParallel.forward's own time includes everything its wrapped module runs "
    "outside ops: with Lightning, your training_step's Python (and any sleep, I/O or logging "
    "in it)."
)
MODULE_ADVICE: Final = (
    "Vectorise the Python in forward(): replace loops over slices or items with one tensor "
    "operation; fuse elementwise glue (torch.compile(model) does it); keep the skip "
    "connection a single in-place add (out += identity)."
)

#: GPU busy below this share of the step (TensorBoard plugin: utilisation < 50%).
GPU_IDLE_PCT: Final = 50.0
#: The verdict's bounds. Data loading past INPUT_BOUND_PCT of the step: the input pipeline
#: bounds it (four times the TensorBoard plugin's 5% "worth fixing" rule: the share at which
#: faster input gains more than any other single change in the planted runs, measured). The
#: device is starved below STARVED_PCT busy (the plugin's utilisation rule) and saturated
#: above SATURATED_PCT (profsight's own: the healthy GPU runs in tests/data/real run 80-95%
#: busy). On a CPU run, the model's work past CPU_COMPUTE_PCT of the step makes it
#: compute-bound, and work around the model (metrics, callbacks, ...) past DOMINANT_PCT
#: bounds the step instead of the model (measured on the planted runs).
INPUT_BOUND_PCT: Final = 20.0
#: A figure within this fraction of its threshold is borderline: recordings of one run vary
#: by up to ~10% (relative) in their step shares (measured: expensive_skip's module overhead
#: 30-36% and its per-step overhead 27-31% over five recordings), so the verdict names it.
BORDERLINE_FRACTION: Final = 0.1
#: A saturated device whose math reaches under this share of its peak is limited by its
#: kernels, not by its size: well-tuned large-model training reaches 40-60% of peak (PaLM
#: 46%, Megatron-LM 50-52% model FLOPs utilisation, as their papers report).
EFFICIENT_MFU_PCT: Final = 30.0
STARVED_PCT: Final = 50.0
SATURATED_PCT: Final = 80.0
CPU_COMPUTE_PCT: Final = 50.0
DOMINANT_PCT: Final = 30.0
#: Median kernel shorter than this (µs) with the device idle waiting for the host.
SHORT_KERNEL_US: Final = 10.0
#: On a trace, launch overhead is judged kernel by kernel: a kernel shorter than the time to
#: the host's next launch on its thread, when the host spent that time dispatching (inside
#: ops for at least LAUNCH_DISPATCH_FRACTION of it, a majority), is done before the next
#: arrives: the per-op cost of eager execution sets the pace. Time between launches spent
#: outside ops (Python, CPU work, a sleep) is other host work: the idle finding's. Launch
#: overhead bounds the step when at least LAUNCH_BOUND_FRACTION of the kernels are outrun
#: (a majority) and the host, not a sync or the input, idles the device.
LAUNCH_BOUND_FRACTION: Final = 0.5
LAUNCH_DISPATCH_FRACTION: Final = 0.5
#: Device-to-host reads per step past which they are values read back one by one in a loop
#: (.item(), .cpu(), print): a training step reads its loss once or a few times.
ITEM_LOOP_PER_STEP: Final = 10
#: An op reading one value back (dispatch, a copy of a few bytes, the sync's round trip on an
#: idle device: 10-20 µs each, `scripts/launch_latency.py`) takes well under this; a loop of
#: such ops with a wait in each is a read per element, which the sync fix reads at once.
READ_BACK_OP_US: Final = 100.0
#: The ops that read one device value back to the host (each waits for the device).
ITEM_OPS: Final = ("aten::item", "aten::_local_scalar_dense")
ITEM_LOOP_READING: Final = "values read back one by one in a loop (.item(), .cpu(), print)"
#: Host-device syncs past this share of the step (measured).
SYNC_PCT: Final = 2.0
#: Exposed communication (no compute meanwhile) past this share of the step (the TensorBoard
#: plugin's rule counts all communication; profsight counts the part that costs).
COMMUNICATION_PCT: Final = 10.0
#: A printed table's collectives bound the step when they are at least this share of the
#: device's work: then no other work can hide more than the rest of them (an even split is
#: where "mostly" begins; issue 36: "a step spent mostly in all-reduce").
COMMUNICATION_BOUND_SHARE: Final = 50.0
#: ... and are reported as information (hidden or not) from this share of the step: the
#: rounding of a table's shares (profsight's own).
COMMUNICATION_NOTED_PCT: Final = 1.0
TABLE_COMMUNICATION_BOUND_TITLE: Final = (
    "Collectives are {of_work:.0f}% of the device's work: the step is spent mostly in communication"
)
TABLE_COMMUNICATION_HIDDEN_TITLE: Final = (
    "Collectives take {share:.0f}% of the step on the device, hidden behind compute or not"
)
TABLE_COMMUNICATION_HIDDEN_EXPLANATION: Final = (
    "The collectives run on a stream of their own: while compute runs they cost nothing, and "
    "the step waits for them only where nothing else runs. They are less than the rest of the "
    "device's work, so compute can hide them; how much it does, a table cannot tell (a trace "
    "of the same steps measures it)."
)
TABLE_COMMUNICATION_CONFIDENCE: Final = (
    "from the table alone: it has no timeline: the exposed time is bounded (at least the "
    "collectives' time beyond all other device work, at most all of it), not measured"
)
SYNC_TITLE_START: Final = "Host-device syncs"
FRAMEWORK_SYNC_TITLE_START: Final = "{framework}'s own syncs"
FRAMEWORK_SYNC_EXPLANATION: Final = (
    "{framework} shards the model: it gathers parameters and reduces gradients with "
    "collectives of its own, and synchronises the host with its streams around them. These "
    "syncs are the framework's, not an .item() or .cpu() in your step: removing those would "
    "not remove them. While the host waits, it cannot queue the next work."
)
#: What shortens a sharding framework's own waits, by framework (their docs: DeepSpeed's ZeRO
#: config, deepspeed.ai/docs/config-json; FSDP's constructor arguments, pytorch.org/docs
#: torch.distributed.fsdp).
FRAMEWORK_SYNC_ADVICE: Final[dict[str, str]] = {
    "DeepSpeed's ZeRO": (
        "Let ZeRO overlap its collectives and gather less often: overlap_comm: true, larger "
        "reduce_bucket_size and stage3_prefetch_bucket_size, stage3_max_live_parameters and "
        "stage3_max_reuse_distance large enough to keep parameters gathered between uses, "
        "contiguous_gradients: true; a lower stage (2 gathers no parameters) when the model fits; "
        "more samples per step (gradient accumulation) to gather once for more work."
    ),
    "FSDP": (
        "Let FSDP prefetch and gather less often: forward_prefetch=True, "
        "backward_prefetch=BackwardPrefetch.BACKWARD_PRE, limit_all_gathers=True, a coarser "
        "auto_wrap_policy (fewer, larger units), ShardingStrategy.SHARD_GRAD_OP or HYBRID_SHARD "
        "when memory allows; more samples per step to gather once for more work."
    ),
}
COMMUNICATION_ADVICE: Final = (
    "Hide and shrink communication: let DDP start all-reducing while backward runs (the "
    "default; keep find_unused_parameters=False and set static_graph=True when the graph does "
    "not change), tune the bucket size (DDPStrategy(bucket_cap_mb=...): larger buckets for many "
    "small gradients), communicate less often (gradient accumulation with no_sync / "
    "accumulate_grad_batches), compress gradients (the bf16/fp16 compression comm hook), "
    "and on GPUs use NCCL, not gloo; with FSDP, prefetch (backward_prefetch, forward_prefetch)."
)
COMMUNICATION_WAIT_NOTE: Final = (
    "A single rank cannot tell the transfer from waiting for a slower rank: explain all ranks "
    "together (profsight job DIR) to see whether one rank holds the others up."
)
#: A rank that arrives last at the collectives is a straggler when the others wait for it this
#: share of the step or more (profsight's own; a 2-rank gloo job in tests/test_job.py with one
#: rank slowed by 40 ms waits ~90%, an unslowed one under 5%).
STRAGGLER_PCT: Final = 5.0
#: A straggler's phase (or op) counts as the cause when it takes this many µs per step more than
#: on the median rank and explains at least this share of the wait.
STRAGGLER_CAUSE_SHARE: Final = 0.3
STRAGGLER_CAUSES: Final[dict[str, tuple[str, str]]] = {
    "data_loading": (
        "its data loading takes longer",
        "Balance the input: the same number of samples per rank (DistributedSampler with "
        "drop_last=True), batches of similar cost (bucket variable-length samples by length), "
        "enough DataLoader workers on that host, and its data on local disk.",
    ),
    "compute": (
        "the same model work takes longer there",
        "Look at that host: a slower or throttled GPU (nvidia-smi -q -d PERFORMANCE,CLOCK), other "
        "processes on its CPUs or GPU, a different CPU binding or NUMA placement; if its inputs "
        "are larger (variable sequence length), balance them.",
    ),
    "untraced": (
        "it spends time outside any op (Python work, I/O or a wait that no op records)",
        "Find the work on that rank that no op records (Python in its training_step or "
        "forward, rank-0-only logging, checkpoint writes or evaluation, printing, time.sleep, "
        "slow disk or network reads) and move it off the training step, or share it across "
        "ranks.",
    ),
    "other": (
        "its steps take longer outside the collectives",
        "Compare that rank's explanation with another's (profsight diff RANK_A RANK_B): the "
        "rows that grew say what it does differently.",
    ),
}
#: The title of the finding that the device runs at its memory limit (the verdict's
#: "too heavy: memory" reads it; other memory findings, such as allocation churn, do not).
MEMORY_LIMIT_TITLE: Final = "Device memory peaks at"
MEMORY_LIMIT_EXPLANATION: Final = (
    "At this level the caching allocator fragments and retries, and a larger batch or model "
    "will not fit."
)
MEMORY_LIMIT_ADVICE: Final = (
    "Reduce activation memory: mixed precision ({precision}), activation checkpointing "
    "(torch.utils.checkpoint), a smaller micro-batch with gradient accumulation, or shard the "
    "model (FSDP)."
)
#: Device memory peak above this fraction of capacity (TensorBoard plugin rule).
MEMORY_PEAK_FRACTION: Final = 0.9
#: The memory finding's evidence of what to shrink first: the ops whose allocations the
#: peak held (at most this many), and what it held from before the window.
PEAK_OPS_IN_EVIDENCE: Final = 3
HELD_AT_PEAK: Final = "held at the peak by"
HELD_BEFORE_WINDOW: Final = (
    "held at the peak from before the window (parameters, optimizer state, inputs)"
)
#: Optimizer state larger than the parameters, holding at least this share of the memory
#: peak (torch's memory profiler's categories): Adam's two moments are twice the model.
OPTIMIZER_STATE_SHARE: Final = 0.2
OPTIMIZER_STATE_TITLE: Final = (
    "The optimizer's state is {ratio:.1f}x the model's parameters: {pct:.0f}% of the {memory} "
    "memory peak"
)
OPTIMIZER_STATE_EXPLANATION: Final = (
    "Adam and AdamW keep two moments per parameter, in the parameter's dtype: 8 bytes per "
    "fp32 parameter, twice the model, live for the whole run. torch's memory profiler "
    "counted them at the peak."
)
OPTIMIZER_STATE_ADVICE: Final = (
    "Shrink the state: an 8-bit optimizer (bitsandbytes' Adam8bit) keeps the moments in a "
    "quarter of the bytes; shard it over the ranks (ZeroRedundancyOptimizer, FSDP); or use an "
    "optimizer with less state (Adafactor's factored moments, SGD with momentum's one buffer)."
)
OPTIMIZER_STATE_TRIGGER: Final = (
    "optimizer state > parameters and >= {share:.0%} of the memory peak (torch's "
    "MemoryProfile categories of a live profiler)"
)
#: FP32 GEMM/convolution kernels past this share of device time on a tensor-core GPU.
FP32_ON_TENSOR_CORES_PCT: Final = 20.0
#: Allocations per step above which allocation churn is reported (measured on the scenarios:
#: healthy runs allocate a few hundred times per step).
ALLOCATIONS_PER_STEP: Final = 2000
#: A copy op (cat, clone, contiguous, ...) that allocates this much per call moves enough
#: memory that the copy, not the op's dispatch, is its cost: 1 MiB takes ~100 µs at the
#: ~10 GB/s of a host memory copy, 10-50x the 2-10 µs an op's dispatch costs in the tables
#: of tests/data. Past COPY_CHURN_PCT of the step (the module-overhead threshold: glue work
#: worth changing, measured) it is a finding.
LARGE_COPY_BYTES: Final = 2**20
COPY_CHURN_PCT: Final = 8.0
COPY_CHURN_ADVICE: Final = (
    "Do not grow tensors by concatenation inside the step: preallocate once and write into "
    "slices (buf[i : i + n] = x), or keep a Python list of tensors and torch.cat them once "
    "when needed (a ring buffer for a fixed-size bank); avoid .clone()/.contiguous() of large "
    "tensors in the loop."
)
#: Reading printed tables. A table whose printed rows hold this share of ``Self CPU time
#: total`` is taken as whole (torch's rounding leaves up to ~0.5% unaccounted); only then are a
#: module's children found by their paths (a child cut from a top-N table would read as the
#: parent's own time).
FULL_TABLE_PCT: Final = 99.0
#: Below this share of the self time printed, a table is partial (its notes say so, and a
#: phase none of whose rows is printed is reported as not printed rather than 0%); below
#: READABLE_TABLE_PCT, without any phase row, it is too little to judge the step on.
PARTIAL_TABLE_PCT: Final = 95.0
READABLE_TABLE_PCT: Final = 50.0
#: Phase rows whose totals overshoot the step by more than this nest in ways the table does
#: not show: said in the notes (beyond torch's rounding of a few rows).
OVERSHOOT_NOTED: Final = 0.05
#: Optimizer.step# shorter than this fraction of training_step runs inside it (Lightning's
#: manual optimisation), not around it: the closure's training_step is at least a forward.
MANUAL_OPTIMIZATION_FRACTION: Final = 0.9
#: A step whose calls are shorter than one call of a metric cannot hold it; with this slack
#: for timing noise (calls of one metric on the same inputs differ by a few percent: 2.5%
#: between an AUROC's training_step and validation_step calls in one recorded run).
METRIC_HOLDER_SLACK: Final = 0.9
#: Copies past this share of the step are a finding (the trace rule's threshold).
COPY_PCT: Final = 1.0
#: A copy call whose host time per call reaches this waited for the device: an asynchronous
#: copy from pinned memory costs the host a launch (a few µs; cudaLaunchKernel averages
#: 3.1-3.5 µs in the tables of tests/data/gpu_tables).
BLOCKING_CALL_US: Final = 20.0
#: A copy call (cudaMemcpyAsync, ...) whose host time is at least this fraction of the copies'
#: device time waited for them: an asynchronous copy from pinned memory returns in a few
#: microseconds whatever its size (CUDA runtime API, "API synchronization behavior").
BLOCKING_COPY_FRACTION: Final = 0.5
#: A function holding this share of an AdvancedProfiler action is on its hot path: a
#: majority, so at most one function per depth can hold it.
HOT_FUNCTION_SHARE: Final = 0.5
#: One-time start-up inside the profiled window: a host call lasting STARTUP_FACTOR times the
#: median of its name's calls (of at least STARTUP_MIN_CALLS) and at least STARTUP_MIN_US
#: does not do the same work as its siblings: lazy loading of GPU code in a first
#: cudaLaunchKernel (630 ms against a 6 µs median in a real A100 trace), cuDNN autotuning,
#: a torch.compile compilation, allocator growth. The floor keeps a 2-core machine's
#: scheduling jitter (1-2 ms) out. CUPTI's own start-up rows count whatever their length.
#: Past STARTUP_DOMINANT_PCT of the window the profile mostly shows start-up, and the
#: verdict says so instead of judging the model.
STARTUP_FACTOR: Final = 20.0
STARTUP_MIN_CALLS: Final = 3
STARTUP_MIN_US: Final = 5_000.0
STARTUP_DOMINANT_PCT: Final = 50.0
#: A one-pass range's own host time (outside every recorded op) at this much or more per op
#: call in its window is no per-op overhead but a stall the profiler did not record
#: (`analyses.step.table_stall`): eager PyTorch spends ~5-20 µs a call in Python and the
#: dispatcher, nn.Module's __call__ and hooks a few more; the ranges of the labelled
#: corpus's tables that are read right hold 25-310 µs of own time per op call (310: a
#: training loop's range that also holds its data loading), the stall 4.1 ms.
STALL_GAP_US: Final = 1_000.0
#: A long call during which the device is busy this fraction of the time or more is the host
#: waiting for the device (a sync, a blocking copy), not start-up: start-up (loading code,
#: autotuning, compiling) happens before the device has the work.
STARTUP_MAX_BUSY: Final = 0.5
#: Without ProfilerStep ranges the loop's thread is the first to start work among the threads
#: busy at least this fraction of the busiest (profsight's own rule: autograd's thread of a
#: GPU run can hold more host time than the loop's thread that started it).
STEP_TRACK_BUSY_FRACTION: Final = 0.25
#: Compute categories that take this share of the step are reported (informational).
COMPUTE_PCT: Final = 20.0


#: The profiler's own host work (Kineto's ``Activity Buffer Request``) past this share of the
#: profiled steps distorts them (profsight's own; the triton_practice table in
#: tests/data/tables shows 23.7% of its CPU time in it).
PROFILER_OVERHEAD_PCT: Final = 2.0
#: Python frames per step past which ``with_stack=True`` is named as a cost of the host
#: times (each recorded frame adds host time; the two-layer MLP of tests/test_diagnose.py
#: records 78 inside each step; real models hundreds).
STACK_FRAMES_PER_STEP: Final = 50

#: What each compute finding says the model spends its time on, and what makes it cheaper.
COMPUTE_ADVICE: Final[dict[str, tuple[str, str]]] = {
    "compute_conv": (
        "Convolutions do the work, as they should in a conv net",
        "On a GPU: channels_last memory format (model.to(memory_format=torch.channels_last)), "
        "torch.backends.cudnn.benchmark = True for fixed input sizes, {precision}; drop conv "
        "bias before BatchNorm (bias=False). On a "
        "CPU: channels_last and torch.compile help oneDNN; a GPU is the real fix.",
    ),
    "compute_matmul": (
        "Matrix multiplies do the work, as they should in a transformer or MLP",
        "Use tensor cores: {precision}, or torch.backends.cuda.matmul.allow_tf32 = True for "
        "FP32 on Ampere and later; fused attention "
        "(F.scaled_dot_product_attention); dimensions that are multiples of 8.",
    ),
    "compute_other": (
        "Elementwise, normalisation and memory-bound ops take most of the compute",
        "Fuse them: torch.compile(model) merges elementwise chains into few kernels; use fused "
        "implementations (fused LayerNorm/Adam); check for needless copies (.contiguous(), "
        ".to()).",
    ),
}


def mixed_precision(arch: str | None) -> str:
    """What to change when FP32 matrix math runs on a GPU of `arch` that has tensor cores
    (`knowledge.generations`: BF16 and TF32 from Ampere on, FP16 with a gradient scaler on
    Volta and Turing, FP8 from Ada and Hopper on)."""
    if takes(arch, "tf32"):
        return (
            f"Mixed precision: {precision_phrase(arch)} or torch.autocast('cuda', "
            "dtype=torch.bfloat16); and for what stays FP32, "
            "torch.backends.cuda.matmul.allow_tf32 = True and torch.backends.cudnn.allow_tf32 = "
            "True (or torch.set_float32_matmul_precision('high'))." + fp8_note(arch)
        )
    if takes(arch, "bf16"):
        return f"Mixed precision: {precision_phrase(arch)}."
    return (
        f"Mixed precision: {precision_phrase(arch)}; in plain PyTorch, torch.autocast('cuda', "
        "dtype=torch.float16) with a torch.amp.GradScaler."
    )


def compute_advice(category: str, arch: str | None) -> tuple[str, str]:
    """`COMPUTE_ADVICE` for a GPU of `arch` (its precision named for that generation)."""
    title, text = COMPUTE_ADVICE[category]
    return title, text.format(precision=precision_phrase(arch)) + (
        fp8_note(arch) if category == "compute_matmul" else ""
    )


def memory_limit_advice(arch: str | None) -> str:
    return MEMORY_LIMIT_ADVICE.format(precision=precision_phrase(arch))


def optimizer_advice(optimizer: str, on_gpu: bool) -> str:
    """The implementation to switch a for-loop optimizer to: fused on both, foreach also on
    CUDA (measured on CPU, `OPTIMIZER_IMPLEMENTATION_ADVICE`)."""
    if on_gpu:
        return (
            f"torch.optim.{optimizer}(params, ..., fused=True) (Adam, AdamW, SGD), or "
            "foreach=True (the default on CUDA since torch 2.0)."
        )
    return (
        f"torch.optim.{optimizer}(params, ..., fused=True) (Adam, AdamW, SGD; CPU from torch "
        "2.4): foreach=True gains nothing on CPU, where it still runs one op per tensor."
    )


#: A finding that is the cause behind another: the other steps aside when the cause takes at
#: least half of its share (the per-step rule's own guard, `phase_findings._per_step_overhead`).
#: Fixed per-step cost can be a module's Python loop; a module's own time can be a copy it
#: makes on every call. (An optimizer is not made the cause of the per-step overhead: in a
#: tiny batch its step is fixed cost that a larger batch amortises, and the tiny_batch
#: scenario's printed table then named the optimizer.)
EXPLAINED_BY: Final[dict[str, tuple[str, ...]]] = {
    "per_step_overhead": ("module_overhead", "memory"),
    "host_lead_in": ("data_loading",),
    "module_overhead": ("memory",),
}


# ---- what findings say, shared by the trace's rules and the printed table's -----------

#: Host time from a GPU step's start to its first launch of device work past this share of
#: the step (of the device's idle time it can cost) is a finding: profsight's own rule, a
#: quarter of the step in which the host gives the GPU nothing to do.
LEAD_IN_PCT: Final = 25.0
#: The part of the lead-in in no recorded op is named when at least this fraction of it.
LEAD_IN_UNNAMED_FRACTION: Final = 0.2
LEAD_IN_TITLE: Final = (
    "The host works {lead} of each step before it launches any GPU work: {share:.0f}% of the step"
)
LEAD_IN_LABEL: Final = "from the step's start to its first launch"
LEAD_IN_EXPLANATION: Final = (
    "Each step begins with host work that launches nothing on the GPU: preprocessing in the "
    "training or inference loop (decoding, resizing, tokenising, building the batch), or "
    "Python between the recorded ops. The GPU has nothing to run until it ends, unless work "
    "from the step before is still queued. The evidence names the ops and ranges it ran in."
)
LEAD_IN_ADVICE: Final = (
    "Move per-batch preprocessing into the Dataset and load in background workers "
    "(DataLoader(num_workers=4, pin_memory=True)) so the next batch is ready when the step "
    "starts, or do it on the GPU; name what is left with torch.profiler.record_function"
    "('...') or profile(with_stack=True) to see its Python."
)
LEAD_IN_NO_OP: Final = "in no recorded op (Python between them)"
#: A lead-in whose named host time is at least this fraction in ops making tensors
#: (`rows.INPUT_MAKING_OPS`) is the step building its input on the host: a data-loading
#: finding (the device waits on the input), priced by taking the lead-in out.
LEAD_IN_INPUT_FRACTION: Final = 0.5
LEAD_IN_INPUT_TITLE: Final = (
    "Each step builds its input on the host for {lead} before it launches any GPU work: "
    "{share:.0f}% of the step"
)

#: A CUDA graph replaces the launches of a stretch between two syncs by one graph launch,
#: which costs what one kernel launch does (CUDA programming guide, "CUDA Graphs": launch
#: overhead is paid once per graph): a stretch that launches fewer than this gains nothing.
GRAPH_MIN_LAUNCHES: Final = 2

#: Said of a printed table whose only sync is one call in one profiled window: the host
#: waiting, at the region's end, for the work it queued.
ENDING_SYNC_EVIDENCE: Final = (
    "one call, at the end of the profiled region: the host waiting for the work it queued, "
    "the device's time seen from the host, not idle time"
)
#: A fragment of a printed table (`analyses.findings.fragment`): what its rows' printed
#: shares still say, and what to paste for the rest.
FRAGMENT_TITLE: Final = "Not judged: the table is a fragment ({rows}, no step or totals)"
FRAGMENT_EXPLANATION: Final = (
    "A table pasted in part (cut mid-row, without its header or its footer) gives no step: "
    "where the step's time goes, how busy the device was and what each fix saves cannot be "
    "measured. Only the shares its rows print (each row's % of the whole run's totals) hold."
)
FRAGMENT_ADVICE: Final = (
    "Paste the whole table, from its first dashed rule down to its footer (Self CPU time "
    "total, Self CUDA time total), or share the trace (prof.export_chrome_trace)."
)
FRAGMENT_CONFIDENCE: Final = (
    "from a fragment of a table: its rows' printed shares of the run's device time; the step, "
    "and whether compute hid any of it, are not in it"
)
FRAGMENT_SHARES_NOTE: Final = (
    " The printed rows' Self CUDA % are shares of the whole run's device time, so they hold "
    "in a fragment."
)
FRAGMENT_COMMUNICATION_TITLE: Final = (
    "Collectives take {share:.0f}% of the device's time in the printed rows"
)
FRAGMENT_COMPUTE_TITLE: Final = (
    "{family} take {share:.0f}% of the device's time in the printed rows"
)

#: Copies between host and device as the device's main work (`findings.sync_copies`).
COPY_BOUND_PREFIX: Final = "Copies are the device's work"
COPY_BOUND_TITLE: Final = COPY_BOUND_PREFIX + ": {share:.0f}% of the step moves data"
COPY_BOUND_VERDICT: Final = (
    "The GPU is busy {busy:.0f}% of the step, mostly copying between host and device: the "
    "transfers bound the step, not the model's arithmetic, so the model is neither heavy nor "
    "light for this hardware. Move less data, or overlap it with compute."
)
COPY_BOUND_EXPLANATION: Final = (
    "The device spends more of the step copying between host and device than computing: the "
    "step is bound by the PCIe or NVLink transfer, not by the model's arithmetic, so a faster "
    "GPU or a lighter model would not shorten it."
)
COPY_BOUND_ADVICE: Final = (
    "Move less: keep tensors on the device across steps, copy once and reuse, send a smaller "
    "dtype (uint8 images, bf16); overlap what must move with compute (pinned memory, "
    ".to(device, non_blocking=True), a side stream)."
)

LAUNCH_EXPLANATION: Final = (
    "Kernels shorter than the time it takes the CPU to launch them leave the GPU waiting "
    "for the next launch: the step is bound by the host."
)

LAUNCH_ADVICE: Final = (
    "Fewer, larger kernels: torch.compile(model) (fuses ops), CUDA graphs "
    "(torch.compile(mode='reduce-overhead')), a larger batch."
)

GPU_IDLE_EXPLANATION: Final = (
    "The device waits for the host: for data, for a synchronisation, or for the CPU to "
    "issue the next work."
)

#: A job whose GPUs idle on most ranks: each rank's own reading names its cause.
JOB_IDLE_EXPLANATION: Final = (
    "Most ranks' devices wait for their host to issue work for much of each step; each rank's "
    "own reading (in the evidence) says what it waits on."
)

GPU_IDLE_ADVICE: Final = (
    "Remove what the host does in series with the device (see the other findings); give the"
    " GPU more work per step (larger batch, larger model)."
)

SYNC_ADVICE: Final = (
    "Keep values on the GPU inside the loop: remove .item()/.cpu() from the step "
    "(accumulate losses as tensors, log every n steps, self.log(..., on_step=False, "
    "on_epoch=True)); copy with non_blocking=True from pinned memory."
)

PAGEABLE_EXPLANATION: Final = (
    "A copy from pageable (not pinned) memory is staged by the driver and blocks the CPU: "
    "it cannot overlap with compute."
)

PAGEABLE_ADVICE: Final = (
    "DataLoader(..., pin_memory=True) and batch.to(device, non_blocking=True); keep tensors"
    " that are reused on the device."
)

PEER_EXPLANATION: Final = (
    "Peer-to-peer copies move tensors between GPUs over NVLink or PCIe. While one runs on the "
    "stream the compute waits behind it; at PCIe speed (no NVLink path between the two GPUs, "
    "or peer access off) it takes many times longer."
)

PEER_ADVICE: Final = (
    "Keep each tensor on the GPU that uses it; move what must move with NCCL collectives or "
    "on a side stream (torch.cuda.Stream) that overlaps compute; check the topology "
    "(nvidia-smi topo -m) and that peer access is on."
)

PEER_COPY_TITLE: Final = "Copies between GPUs take"
#: Peer copies slower than this fraction of the PCIe link ran at PCIe speed or below.
PCIE_SPEED_FRACTION: Final = 1.1

FP32_EXPLANATION: Final = (
    "These GEMM/convolution kernels run in plain FP32 on the CUDA cores; the tensor cores, "
    "several times faster, sit unused."
)

MODULE_OWN_EXPLANATION: Final = (
    "A module's own time is its forward()'s Python and the ops it calls directly (a skip "
    "connection's add, reshapes, loops), not its child layers. High own time with low time "
    "in its layers means the glue, not the layers, costs."
)

TINY_OPS_EXPLANATION: Final = (
    "Hundreds of ops of a few microseconds each are what a Python loop over slices or items"
    " produces: each op pays dispatch (and on a GPU, a kernel launch) for little work."
)

ALLOCATION_EXPLANATION: Final = (
    "Every temporary tensor is an allocation; thousands per step cost allocator time and, "
    "on a GPU, fragment the cache."
)

ALLOCATION_ADVICE: Final = (
    "Reuse buffers (out= arguments, in-place ops), fuse elementwise chains (torch.compile),"
    " zero_grad(set_to_none=True)."
)

# --- what-if replay ----------------------------------------------------------------------

#: The larger batch the per-step-overhead fix is replayed with (per sample): a step's fixed
#: cost is shared by this many times the samples. 4x is one power-of-two step up the usual
#: batch ladder from a small batch (4 -> 16, 8 -> 32).
BATCH_SCALE: Final = 4


# --- texts and thresholds the analyses read ------------------------------------------

COMMUNICATION_EXPLANATION: Final = (
    "While a collective runs and nothing else computes, the step waits: for the data to cross "
    "the links, or for a slower rank to arrive. "
)
#: Collectives that compute hides are said (information) when their device time is at least
#: COMMUNICATION_PCT of the step: the overlap is working, and how much is left exposed is
#: what to watch (issue 36: "communication hidden behind compute is reported").
HIDDEN_COMMUNICATION_TITLE: Final = (
    "Communication is hidden behind compute: {overlapped} per step overlapped, "
    "{exposed_pct:.0f}% of the step exposed ({backend})"
)
HIDDEN_COMMUNICATION_EXPLANATION: Final = (
    "The collectives run on their own streams while kernels compute, so the step does not "
    "wait for most of them: the overlap the framework was built for. Only the exposed part, "
    "when nothing computes meanwhile, costs the step."
)
HIDDEN_COMMUNICATION_ADVICE: Final = (
    "Nothing to change while the exposed part stays small; if compute gets faster "
    "(lower precision, fused kernels), the collectives will show: then tune bucket sizes "
    "or the overlap schedule."
)


def compute_explanation(where: str) -> str:
    return (
        f"These ops' own {where} is the largest share of the step: the model's arithmetic, not "
        "overhead around it."
    )


SYNC_EXPLANATION: Final = (
    "A synchronisation stops the CPU until the GPU has finished everything queued: the CPU "
    "cannot queue the next work meanwhile, and the GPU then waits for it. .item(), .cpu(), "
    "printing or logging a GPU tensor, and torch.cuda.synchronize() all do this; so does any "
    "copy to the host or from pageable memory, even where no synchronize call appears."
)


COPY_CHURN_EXPLANATION: Final = (
    "Each call makes a new tensor and copies into it. Growing a tensor with torch.cat copies "
    "everything it already holds every time, so the cost grows with its size; the allocations "
    "also churn the allocator (and on a GPU fragment its cache)."
)


PER_STEP_EXPLANATION: Final = (
    "Every step pays the same fixed cost (the training loop, hooks, Python between ops, zeroing "
    "gradients) whatever the batch size; with little work per step that cost dominates."
)


CONV_BIAS_EXPLANATION: Final = (
    "BatchNorm subtracts the channel mean right after the convolution, so the convolution's "
    "bias has no effect: it costs a kernel (or a fused epilogue) and a parameter for nothing."
)
CONV_BIAS_ADVICE: Final = "nn.Conv2d(..., bias=False) for convolutions followed by BatchNorm."


FOR_LOOP_OPTIMIZER_EXPLANATION: Final = (
    "The single-tensor (for-loop) implementation issues several small ops per parameter "
    "tensor; the fused one (and, on CUDA, the multi-tensor foreach one) does the same math in a "
    "few large ops."
)


#: Per-parameter optimizer ops per step above which a for-loop optimizer is reported (a
#: for-loop Adam issues ~10 ops per tensor: 50 is five tensors, below any real model) ...
FOR_LOOP_OPS_PER_STEP: Final = 50
#: ... and only when the optimizer takes at least this share of the step (`MINOR_PCT`).
FOR_LOOP_MIN_PCT: Final = 5.0


#: A first step this much slower than the median was profiled without a warm-up (steps of
#: one run vary by ~10% (`BORDERLINE_FRACTION`); 1.5x is five times that spread).
WARMUP_OUTLIER: Final = 1.5
#: Fewer profiled steps than this cannot show step-to-step variation.
MIN_STEPS: Final = 2


STARTUP_EXPLANATION: Final = (
    "Calls that ran once for much longer than their kind ever runs again ({calls}): lazy "
    "loading of GPU code on a first launch, autotuning, compilation or allocator growth. "
    "Inside the window they read as launch overhead or an idle GPU; the other findings judge "
    "the steady state without them."
)
COMPILE_STARTUP: Final = (
    "torch.compile compiled the model inside the profiled window ({seconds:.1f} s of "
    "compile ranges: Dynamo tracing, AOTAutograd, Inductor code generation). It happens once "
    "(again on a recompile); inside the window it reads as the model's own work, and the "
    "other findings judge the steady state without it."
)
STARTUP_ADVICE: Final = (
    "Warm up before profiling: schedule(wait=1, warmup=1, active=3), or run a few steps "
    "before entering the profiler (the first call of a compiled model compiles it; "
    "CUDA_MODULE_LOADING=EAGER loads GPU code up front; torch.backends.cudnn.benchmark "
    "autotunes on the first step)."
)
#: Said first of a trace with no backward, optimizer step or zero_grad: it is judged as
#: inference, by the latency of a profiled step (a call, a decode step) and what bounds it.
INFERENCE_NOTE: Final = (
    "An inference run (no backward or optimizer step in the window), {latency} per profiled "
    "step: the question is what bounds that latency. "
)
#: Launched work that waits this long (µs) with its device free was held back by something
#: the trace does not show. Basis (scripts/launch_latency.py over the real GPU traces of
#: ../shared/data/real, K80 to B200, RTX 2080 Ti to 4090, MI300X, MTIA): in the 35 traces
#: without such waits, an item launched to a free device starts within 26 µs at the 99th
#: percentile of each, 90 µs at most (MTIA); the held items of the other traces wait 1.1 to
#: 463 ms (a 4090 shared with something else, sglang and vLLM steps whose work queues behind
#: work launched before the window, HTA's sampled traces). A millisecond is ten times the
#: largest normal wait. Reported past HELD_PCT of the step, like syncs (SYNC_PCT).
HELD_BACK_US: Final = 1_000.0
HELD_PCT: Final = 2.0
HELD_BASIS: Final = "scripts/launch_latency.py on 35 real traces by others"
#: Past this share of the step (most of it), the step's time is mostly work the trace does
#: not show, and the verdict says so instead of judging the model (as with start-up).
HELD_DOMINANT_PCT: Final = 50.0
HELD_VERDICT: Final = (
    "Most of the step ({held:.0f}%) the GPU held this process's launched work back while "
    "running nothing of it: the trace does not show what the GPU did (another process on it, "
    "work queued before the profiler started, dropped device events). Profile again on a "
    "GPU of its own, with a warm-up step before the active ones, before judging the model"
)
HELD_EXPLANATION: Final = (
    "Work launched to a free GPU starts within tens of microseconds (26 µs at the 99th "
    "percentile of 35 real traces by others, 90 µs at most). Here launched kernels or copies "
    "waited milliseconds with nothing of this process running on the GPU: something the "
    "trace does not show held them: another process sharing the GPU, work queued before the "
    "profiler started (the window opened in the middle of a step), a driver that batches "
    "submissions (Windows WDDM, WSL2), or device events the profiler sampled or dropped. "
    "That time is neither the model's nor a sync's, and removing a sync does not get it back."
)
HELD_ADVICE: Final = (
    "See what else runs on the GPU (nvidia-smi, rocm-smi) and profile on a GPU of its own "
    "(on Windows, under Linux or in TCC mode); open the window after a warm-up step "
    "(schedule(wait=1, warmup=1, active=3)) so no earlier work is still queued; then profile "
    "again before judging the model."
)


# --- the profile itself (analyses/setup.py, analyses/printed_setup.py) --------------------

TRUNCATED_TITLE: Final = "The trace is cut off"
TRUNCATED_ADVICE: Final = (
    "Let the profiler finish writing (exit the `with` block, or wait for on_trace_ready) "
    "before the job ends."
)
#: The profile of a GPU run holds no device activity (no kernel, copy or memset) although
#: it shows a GPU: devices listed, launch calls, or ops that run only on one.
NO_DEVICE_ACTIVITY_TITLE: Final = (
    "The GPU's run times were not recorded: record the profile again with its device activity"
)
NO_DEVICE_ACTIVITY_EXPLANATION: Final = (
    "The {where} shows a GPU ({evidence}) but not one kernel, copy or memset with its run "
    "time: the profiler ran without device activities, or CUPTI could not record them. "
    "Every device figure (GPU time, busy share, FLOP/s, what bounds the step) would be read "
    "from host times alone, so none is given, and the host's times are not a CPU-only run's."
)
NO_DEVICE_ACTIVITY_ADVICE: Final = (
    "torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) (ROCm "
    "GPUs too); with Lightning, PyTorchProfiler(activities=[...]) or profsight's "
    "ExplainingProfiler. If CUDA was among the activities, CUPTI recorded nothing: look in "
    "the log for CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (run as a user allowed to profile, or "
    "in a container with --cap-add=SYS_ADMIN) and check that torch's CUDA build matches "
    "the driver."
)
#: Added when only the listed devices show a GPU: nothing was launched to it.
NOTHING_LAUNCHED: Final = (
    " Not one call launched work to the GPU: the model and its data may not be on it "
    "(model.to('cuda'), batch.to('cuda')), and then this is a CPU run on a GPU machine."
)
#: Op names that run only on a GPU (cuDNN, fused attention kernels, NCCL): seen without any
#: device activity, they say the run used a GPU the profile did not record: ops of a
#: namespace (``aten::cudnn_convolution``, ``flash_attn::…``, ``nccl:all_reduce``) and
#: Triton kernels called from a compiled graph; not torch.compile's own passes
#: (``pass.post_grad_passes.move_constructors_to_cuda``), nor torch's CPU kernels of the
#: same ops (``_scaled_dot_product_flash_attention_for_cpu``).
GPU_ONLY_OPS: Final = re.compile(
    # not the checks every device makes before choosing a kernel: nn.GRU/LSTM call
    # aten::cudnn_is_acceptable and aten::_use_cudnn_rnn_flatten_weight on a CPU too
    r"^(?!.*for_?cpu)(?!.*(?:cudnn_is_acceptable|_use_cudnn))(?:\w+::?\w*(?:cudnn|miopen|flash|efficient_attention|_cuda\b|cuda_|"
    r"nccl|rccl|triton|deep_?gemm|cutlass|fused_moe)|(?:nccl|rccl|flash_attn|sgl_kernel)\w*::?|"
    r"triton_)",
    re.IGNORECASE,
)
#: The evidence of a trace whose kernels CUPTI's range profiler measured.
RANGE_PROFILED: Final = (
    "{kernels:,} kernels measured by CUPTI's range profiler (cuda_profiler_range: hardware "
    "counters per kernel; the times Kineto gives them are the profiling session spread "
    "evenly, not run times): record a second profile without profiler_metrics for timing"
)
NO_DEVICE_VERDICT: Final = (
    "The GPU's run times were not recorded ({evidence}): how busy it was, what bounds the step "
    "and whether the model suits the hardware cannot be told from this profile. Record it "
    "again with device activity (see the first finding) before judging the run."
)
NO_SHAPES_TITLE: Final = "Input shapes were not recorded"
NO_SHAPES_EXPLANATION: Final = (
    "The trace has matrix multiplications or convolutions but no input shapes, so their "
    "FLOPs, the achieved throughput and the table grouped by shape are unknown."
)
NO_SHAPES_ADVICE: Final = (
    "profile(..., record_shapes=True) (Lightning: PyTorchProfiler(record_shapes=True))."
)
NO_STEPS_TITLE: Final = "No ProfilerStep ranges: the whole trace is read as one step"
NO_STEPS_EXPLANATION: Final = (
    "Without prof.step() the profiler records no step boundaries, so the numbers cover the "
    "whole trace, start-up and warm-up included, and per-step findings are off."
)
NO_STEPS_ADVICE: Final = (
    "Call prof.step() once per iteration (Lightning's PyTorchProfiler does), with "
    "schedule=torch.profiler.schedule(wait=1, warmup=1, active=3)."
)
FEW_STEPS_TITLE: Final = "Only {steps} step was profiled"
FEW_STEPS_EXPLANATION: Final = "One step cannot tell a steady-state cost from a one-off."
FEW_STEPS_ADVICE: Final = (
    "schedule=torch.profiler.schedule(wait=1, warmup=1, active=3) and call prof.step() every "
    "iteration (Lightning's PyTorchProfiler does it for you)."
)
#: The first step is judged against the median of the others (`WARMUP_OUTLIER`) only when
#: at least this many steps were profiled, so that there are at least two others to take the
#: median of (profsight's own choice: it keeps one other step, itself perhaps an outlier,
#: from standing for the norm).
WARMUP_MIN_STEPS: Final = 3
WARMUP_TITLE: Final = "The first profiled step took {ratio:.1f}x the others"
WARMUP_EXPLANATION: Final = (
    "The first step pays one-off costs (allocator growth, cuDNN autotuning, lazy "
    "initialisation): profiled without a warm-up, it skews averages."
)
WARMUP_ADVICE: Final = "Add a warm-up to the schedule: schedule(wait=1, warmup=1, active=3)."
#: What a trace says about its schedule. torch numbers every step from 0, ``prof.step()``
#: after ``prof.step()``, whatever the schedule does with it: the range of step N is
#: ``"ProfilerStep#" + str(self.step_num)`` (torch/profiler/profiler.py, ``profile.start``
#: and ``profile.step``). ``schedule(wait, warmup, active, repeat, skip_first)`` gives the
#: first ``skip_first`` steps and then ``wait`` steps of each cycle ``ProfilerAction.NONE``,
#: the next ``warmup`` ``ProfilerAction.WARMUP`` (the profiler runs, its events are dropped)
#: and the ``active`` ones ``RECORD`` (torch/profiler/profiler.py, ``schedule_fn``), so the
#: first step a trace keeps is ``ProfilerStep#{skip_first + wait + warmup}``: #0 is a run
#: with no schedule (``_default_schedule_fn`` records every step) or one with nothing before
#: its active steps; #1 has one step before them, a wait or a warm-up one (the trace does
#: not say which); from #2 on, the first iteration of the program and the profiler's start
#: ran before the recorded steps. Lightning's PyTorchProfiler uses
#: ``schedule(wait=1, warmup=1, active=3)`` unless given one (its ``_default_schedule``,
#: lightning/pytorch/profilers/pytorch.py): its traces start at ProfilerStep#2.
#: Steps before the first recorded one from which the trace shows a warm-up ran.
WARMED_UP_STEPS: Final = 2
WARMUP_AFTER_ONE_ADVICE: Final = (
    "One step ran before ProfilerStep#1, a wait or a warm-up one (the trace does not say "
    "which): if it was a wait step (schedule(wait=1, warmup=0, ...)), make it a warm-up: "
    "schedule(wait=1, warmup=1, active=3)."
)
WARMED_UP_TITLE: Final = (
    "The first profiled step took {ratio:.1f}x the others, after {before} unrecorded steps"
)
WARMED_UP_EXPLANATION: Final = (
    "The first recorded step is ProfilerStep#{before}: torch numbers every step, those the "
    "schedule skips, waits or warms up on included, so {before} iterations ran before it and "
    "paid the one-off costs of a first iteration (allocator growth, autotuning, lazy "
    "initialisation). Its extra time is something that happened in that step alone: a "
    "recompile, a checkpoint, validation or logging every N steps, a new epoch's data loader "
    "starting its workers. The averages include it."
)
WARMED_UP_ADVICE: Final = (
    "The schedule already warms up: look at what ran only in that step (its timeline: "
    "profsight slice), and judge the steady state from the other steps."
)
#: Start-up inside the profiled steps of a schedule that warmed up (`WARMED_UP_STEPS`).
STARTUP_AFTER_WARMUP_ADVICE: Final = (
    "The schedule already ran {before} steps before the recorded ones, so this start-up comes "
    "with work those steps did not do: a first call of a kernel or a shape (a recompile of a "
    "compiled model: torch._dynamo.config / TORCH_LOGS=recompiles say why), validation or a "
    "checkpoint inside the window. Load GPU code up front with CUDA_MODULE_LOADING=EAGER, or "
    "open the window later (schedule(skip_first=N, ...))."
)
LAUNCHED_BEFORE_WINDOW_TITLE: Final = "Device work from before the profiled window is in the trace"
STARTUP_TITLE: Final = "One-time start-up takes {share:.0f}% of the profiled window"
#: ... when it dominates the window (`analyses.step.startup.dominates`): the profile shows
#: start-up, not the run, and nothing else in it is judged first.
STARTUP_DOMINANT_TITLE: Final = (
    "Not judged: one-time start-up takes {share:.0f}% of the profiled window"
)
#: Said of start-up that does not dominate: a one-time cost is no part of the steady step,
#: so its fix saves nothing there and it ranks after what does.
STARTUP_ONE_TIME: Final = "one-time: it lengthens this window, not the steady step"
PROFILER_COST_TITLE: Final = "The profiler's own work is {share:.1f}% of the profiled steps"
PROFILER_COST_EXPLANATION: Final = (
    "{names}: {ms:.1f} ms of profiler bookkeeping (Kineto handing the device tracer new "
    "buffers) ran inside the steps; it is not your program's cost, and the steps that contain "
    "it read slower."
)
PROFILER_COST_ADVICE: Final = (
    "Keep a warm-up step in the schedule (schedule(wait=1, warmup=1, active=3)), profile "
    "fewer steps per trace, and judge step time from the steps without it."
)
STACK_TRACING_TITLE: Final = "Python stack tracing (with_stack=True) adds to the host times"
STACK_TRACING_EXPLANATION: Final = (
    "{frames:.0f} Python frames were recorded per step; recording each costs host time, so "
    "CPU times and a host-bound verdict read high."
)
STACK_TRACING_ADVICE: Final = (
    "Measure timing with with_stack=False and keep with_stack=True for a separate run when "
    "you need the Python call sites."
)
PRINTED_PROFILER_COST_TITLE: Final = "The profiler's own work is {share:.1f}% of the self CPU time"
PRINTED_PROFILER_COST_EXPLANATION: Final = (
    "{names}: profiler bookkeeping (Kineto handing the device tracer new buffers) inside the "
    "profiled window; it is not your program's cost."
)
PRINTED_STARTUP_TITLE: Final = "One-time start-up is {share:.1f}% of the self CPU time"
PRINTED_STARTUP_EXPLANATION: Final = (
    "{names}: loading GPU code on first use happens once per process; inside the profiled "
    "window it reads as step time."
)
STALL_TITLE: Final = (
    "{share:.0f}% of the window is host time in one call of {name} that no recorded op holds"
)
#: ... when it dominates the window (`analyses.step.startup.dominates`).
STALL_DOMINANT_TITLE: Final = "Not judged: " + STALL_TITLE
STALL_EXPLANATION: Final = (
    "{name} ran once and spent {own} of its own time outside every recorded op, {per_op} per "
    "op call in the window: Python between ops costs tens of microseconds a call, so this is a "
    "few long stalls the profiler did not record: a first pass's start-up (the CUDA context, "
    "cuDNN and cuBLAS handles, loading GPU code), reading or preparing data outside torch ops, "
    "a sleep or a wait on another process. One pass cannot show whether it recurs each step, "
    "so what the device did beside it is not judged from this window."
)
STALL_ADVICE: Final = (
    "Profile again after a warm-up pass, calling prof.step() once per iteration with "
    "schedule=torch.profiler.schedule(wait=1, warmup=1, active=3); with_stack=True shows which "
    "Python lines hold the time, and a stall that recurs in every step is then the step's own."
)
PRINTED_STARTUP_ADVICE: Final = (
    "Run a few steps before the profiled ones (schedule(wait=1, warmup=1, active=3)), or set "
    "CUDA_MODULE_LOADING=EAGER for the profiling run."
)
EVALUATION_TABLE_TITLE: Final = "This table holds validation steps, not training steps"
EVALUATION_TABLE_EXPLANATION: Final = (
    "Lightning's PyTorchProfiler prints fit-*.txt from the events of its last profiled "
    "window; after fit that is often the validation loop, so the table says nothing about the "
    "training step."
)
EVALUATION_TABLE_ADVICE: Final = (
    "Explain the training_step trace Lightning wrote beside it (profsight explain "
    "'fit-...training_step...pt.trace.json'), or profile fit with limit_val_batches=0 to get "
    "a table of training steps."
)
WHOLE_TABLE_TITLE: Final = "No row marks a training step: the whole table is read as one step"
WHOLE_TABLE_EXPLANATION: Final = (
    "Without ProfilerStep* (prof.step()), training_step or Optimizer.step# rows, the table's "
    "totals cover the whole profiled window, start-up included, and per-step figures are "
    "figures for the window."
)
WHOLE_TABLE_ADVICE: Final = (
    "Call prof.step() once per iteration with schedule=torch.profiler.schedule(wait=1, "
    "warmup=1, active=3) (Lightning's PyTorchProfiler does it for you)."
)
#: Why a printed run without device figures is judged on host times (`HOST_TIMES_RUN`).
LIGHTNING_REPORT_HOST_ONLY: Final = "a Lightning report does not say whether a GPU ran"
UNREADABLE_DEVICE_HOST_ONLY: Final = "this table's device times cannot be read"
DEVICE_ONLY_HOST_ONLY: Final = (
    "this table prints only the device's columns: its host time, and so how busy the device "
    "was, are unknown"
)
PRINTED_FLOPS_UNKNOWN: Final = (
    "FLOPs unknown: a printed table shows them only in its Total FLOPs column "
    "(profile(with_flops=True))"
)


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
#: Ranges torch.compile runs its code in: Dynamo's frame (``"Torch-Compiled Region: " +
#: compile_id_str``, torch/_dynamo/convert_frame.py), Inductor's graph call (``## Call
#: CompiledFxGraph {key} ##``, torch/_inductor/output_code.py), AOTAutograd's autograd
#: function (``CompiledFunction``, ``CompiledFunctionBackward``). Inductor's fused kernels
#: inside them are launched by generated code, not by aten ops, so no input shapes are
#: recorded for them even with ``record_shapes=True``.
COMPILED_REGION_ROWS: Final = re.compile(
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


# --- what a printed table's step model cannot tell (analyses/printed_step.py) -------------

NO_STEP_ROW_NOTE: Final = (
    "No ProfilerStep* row: the step is the summed self time over {steps} calls of {what}; "
    "self times of every thread add up, so a run whose backward has a thread of its own reads "
    "long."
)
NO_STEP_ACTION_NOTE: Final = (
    "The report has no step action: the step is the sum of the phases it records."
)
THREAD_WAIT_NOTE: Final = (
    "Self times of every thread add up: {waited} of the total is the main thread waiting in "
    "{frame} while backward ran on autograd's device thread, counted once here, so the "
    "window is {window} of wall time, not the {total} the footer sums."
)
#: The categories of the compute findings (where the compute goes) start with this.
COMPUTE_PREFIX: Final = "compute_"
#: A thread-wait frame counts as a wait when at least this share of its time is its own.
THREAD_WAIT_SELF_FRACTION: Final = 0.5
#: ... and, in a table without device columns, shows a device run when its self time is at
#: least this share of the self CPU total (a CPU backward's frame holds a few µs per call).
THREAD_WAIT_PCT: Final = 5.0
DEVICE_BOUND_TABLE_NOTE: Final = (
    "The device's work per step ({device}) outlasts the host's range ({host}): the device ran "
    "behind the host, so the step is the device's (an upper bound if kernels of several "
    "streams overlapped)."
)
DEVICE_ONLY_TABLE_NOTE: Final = (
    "The table prints only the device's columns (Self CUDA, CUDA total): the window is the "
    "device's own time, and how long the host took, how busy the device was and what it "
    "waited for are not judged. Print the whole table (CPU columns included) to judge them."
)
WHOLE_WINDOW_NOTE: Final = (
    "No row marks a step (no ProfilerStep*, training_step or Optimizer.step#): the whole "
    "profiled window is read as one step."
)
ADVANCED_PROFILER_NOTE: Final = (
    "AdvancedProfiler loses an action's time once an action inside it starts its own profiler "
    "(Python has one profiler at a time): outer actions and backward read short, so the step "
    "is at least the sum shown."
)
LIGHTNING_HOST_TIMING_NOTE: Final = (
    "Lightning's Simple and Advanced profilers time actions on the host: on a GPU run the "
    "first action that waits for the device (an .item(), logging a tensor, an optimizer step "
    "that syncs) also holds the device work queued before it. They time every batch of the "
    "run, the first one's one-time costs (lazy initialisation, allocator growth) included: "
    "over few batches these weigh on the averages."
)
EVALUATION_ONLY: Final = (
    "The table holds validation (or test) steps only, no training step: Lightning's "
    "PyTorchProfiler writes its report from the last profiled window, here the evaluation "
    "loop. Its steps are judged as evaluation steps."
)
FORWARD_HOLDS_BACKWARD_NOTE: Final = (
    "The forward here is what the printed rows do not name, so it also holds the backward "
    "pass when its rows (autograd::engine::evaluate_function) are not printed."
)
PARTIAL_TABLE_NOTE: Final = (
    "The table prints only part of the rows ({coverage:.0f}% of the self time): the phases "
    "and op families of the rows left out are unknown."
)
OVERSHOOT_NOTE: Final = (
    "The rows' totals add up to {ratio:.2f}x the step: some of them nest in ways the table "
    "does not show; the phases are scaled down to the step."
)
ONE_LIGHTNING_STEP_NOTE: Final = (
    "One step profiled under Lightning: its window opens inside an optimizer step and ends "
    "inside the next, so the one recorded optimizer range holds no update and the update's "
    "time cannot be read (profile 3 or more steps)."
)
CLOSURE_NOT_PRINTED_NOTE: Final = (
    "Lightning runs training_step and backward inside the optimizer step, and the table "
    "prints no backward row or no forward: the optimizer's own update cannot be told from the "
    "forward and backward passes."
)
UPDATE_IN_NOISE_NOTE: Final = (
    "The optimizer's own update is within the noise of the closure's time (the optimizer step "
    "less the closure's parts < 0): read as 0."
)


# --- what a printed table cannot be judged on (analyses/__init__.py) ---------------------

#: Said of a fragment of rows with neither a step row nor the table's totals.
TOO_LITTLE: Final = (
    "Too little to judge: these rows name no phase of a step, or carry neither a step "
    "(ProfilerStep*, training_step) nor the table's totals (its footer), so no share of a "
    "step can be measured; paste the whole table for a diagnosis."
)
#: Said of a torch <= 1.6 table, whose device columns are judged unreadable.
INCLUSIVE_DEVICE: Final = (
    "torch <= 1.6 printed inclusive CUDA times only, and its 'CUDA time total' sums them over "
    "nested ops (counting a kernel once per op around it); no printed op without ops inside "
    "it ran device work, so the device's work and idle time cannot be read from this table, "
    "and it is judged on its CPU columns."
)
#: Said of a torch <= 1.6 table read from its leaf ops (`analyses.step.table_legacy`).
LEAF_DEVICE: Final = (
    "torch <= 1.6 printed inclusive CUDA times only (CUDA events around each op: about the "
    "larger of its device and host time), and its 'CUDA time total' counts a kernel once per "
    "op around it: the device's work is read from the ops with no op inside them (self CPU = "
    "CPU total), whose device time is their own, so how busy the device was is an upper bound."
)
#: Said of a trace whose profiled steps hold nothing but themselves: no op, no range, no
#: device work (a schedule whose active steps recorded nothing, a window closed at once).
TOO_LITTLE_TRACE: Final = (
    "Too little to judge: the profiled steps hold no op, no range and no device work, so "
    "there is no step to break down; record a window with work in it (record_shapes=True, "
    "a schedule whose active steps run the training loop, on_trace_ready exporting each "
    "cycle)."
)


# ------------------------------------------------------------------ the step on two clocks

#: How a report names the clock that bounds the steps (`analyses.clocks.clock_bound`).
CLOCK_NAMES: Final = {"host": "the host's", "device": "the device's"}
#: The breakdown's line on the two clocks.
CLOCKS_LINE: Final = (
    "two clocks: the host spends {host} in each step's range, {lag}; steps complete every "
    "{step}: {clock} clock bounds them"
)
#: The verdict's line on the clocks, when the device's bounds the step.
CLOCK_EVIDENCE: Final = (
    "the device's clock bounds the step: the host's range is {host} of it, its device work "
    "ends {lag} after that range"
)
CLOCK_LAG: Final = "its device work ends {lag} after it on average"
CLOCK_NO_LAG: Final = "its device work ends inside it"
#: ... and on the launch queues, when the host blocked on a full one.
QUEUE_LINE: Final = (
    "launch queue: up to {depth} items waited on a stream ({limit}); the host blocked "
    "{blocked} per step launching into a full queue"
)
QUEUE_LIMIT_MEASURED: Final = "its limit, as this trace shows it"
QUEUE_LIMIT_DEFAULT: Final = "the driver holds {limit}"


# ------------------------------------------------------------------ "could save", one currency

#: How each pricing of a finding's saving (`findings.Finding.priced`) reads.
SAVING_PHRASES: Final = {
    "replayed": "could save ~{gain:.0f}% of the step",
    "per_sample": "could save ~{gain:.0f}% of the time per sample",
    "upper_bound": "could save at most ~{gain:.0f}% of the step",
    "estimated": "could save ~{gain:.0f}% of the step, estimated from its share",
    "not_estimated": "saving not estimated",
}


def saving_phrase(priced: str, gain: float | None, at_stake: float = 1.0) -> str:
    """``could save ~30% of the step`` (or per sample, at most, estimated, not estimated);
    "" for a finding about the profile itself that concerns no share of the step."""
    if gain is None and at_stake <= 0:
        return ""
    return SAVING_PHRASES.get(priced, SAVING_PHRASES["estimated"]).format(gain=gain or 0.0)


# ------------------------------------------------------------------ the module view

#: ``table --group-by module`` of a trace with no module ranges: everything is "outside any
#: module". torch writes ``nn.Module: Linear_0`` ranges (cat ``python_function``) only with
#: ``with_stack=True``: its python tracer records them (checked on torch 2.13's CPU build).
#: ``with_modules=True`` alone writes none: its docstring says it is "only for TorchScript
#: models" (torch/profiler/profiler.py). Lightning's ``PyTorchProfiler`` writes
#: ``[pl][module]`` ranges through ``record_function`` while ``record_module_names=True``, its
#: default (lightning/pytorch/profilers/pytorch.py, ``RegisterRecordFunction``).
NO_MODULE_RANGES: Final = (
    "the trace has no module ranges, so every row is outside any module: record with "
    "torch.profiler.profile(..., with_stack=True) (torch then writes 'nn.Module: ...' "
    "ranges; with_modules=True alone does not, outside TorchScript), or with Lightning's "
    "PyTorchProfiler (its default record_module_names=True writes '[pl][module]' ranges)"
)


# ------------------------------------------------------------ AdvancedProfiler: hot functions

#: A report's actions nest (Lightning <= 2.5, `lightning_names`) when the batch action holds
#: at least this share of the training step's code inside it: measured, the batch action read
#: 1.00-1.01 times its optimizer_step (tests/test_advanced_nesting.py); from Lightning 2.6 it
#: reads near 0.
NESTED_HOLDS: Final = 0.9
ADVANCED_NESTED_NOTE: Final = (
    "AdvancedProfiler (Lightning <= 2.5) times an action with the actions inside it: the "
    "total is the outermost actions' time and each action's own part is its time less those "
    "inside it; an outer action's listing shows only the calls made before the first inner "
    "action started."
)
#: The hot functions of training_step named when the first holds at least this % of the step.
HOT_FUNCTION_PCT: Final = 5.0
HOT_FUNCTION_TITLE: Final = "training_step's time goes to {location}"
HOT_FUNCTION_EXPLANATION: Final = (
    "In AdvancedProfiler's listing of your training step, this function has the most self "
    "time (tottime: its own lines, not the functions it calls)."
)
HOT_FUNCTION_ADVICE: Final = (
    "Make this function cheaper or call it less often: cache what does not change between "
    "steps, move per-sample Python work into the DataLoader (num_workers) or into batched "
    "tensor ops."
)
HOST_WAIT_EXPLANATION: Final = (
    "This call's time is the host waiting: Tensor.{method}() on a GPU tensor (a .to(device), "
    ".cpu(), .item(), .tolist(), .numpy()) copies to or reads from the host and first waits "
    "for every kernel queued before it, so its time is the device's work seen from the host, "
    "a sync. A .to(device, non_blocking=True) from pinned memory is not one: it returns at "
    "once. On a CPU-only run a .to() is a real copy (another dtype, a copy of a big tensor)."
)
HOST_WAIT_ADVICE: Final = (
    "Find the .to()/.item()/.cpu() calls in training_step: move the batch with the "
    "DataLoader's pin_memory=True and .to(device, non_blocking=True) (Lightning moves the "
    "batch itself); create tensors on the device (torch.zeros(..., device=self.device)) "
    "instead of copying them each step; keep losses and metrics as tensors and log them "
    "with self.log(..., on_step=False, on_epoch=True) instead of .item() each step. Then "
    "profile the device side (PyTorchProfiler) to see what the wait was for."
)
HOT_FUNCTION_CONFIDENCE: Final = (
    "From AdvancedProfiler's cProfile listing: host time of Python and C calls only; what the "
    "device did meanwhile is not in it"
)
