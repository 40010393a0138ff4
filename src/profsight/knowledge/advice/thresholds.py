"""The rules' thresholds and their sources: severity bands, the phases' rules, the limits every
family judges by.
"""

from __future__ import annotations

from typing import Final

import msgspec

from profsight.knowledge.generations import fp8_note, precision_phrase, takes
from profsight.knowledge.phases import Phase

TB_PLUGIN: Final = "TensorBoard profiler plugin rule"
MEASURED: Final = (
    "profsight's planted-bottleneck runs (tests/scenarios.py, scripts/threshold_margins.py)"
)
#: What a printed table cannot show, said with every finding read from one.
NO_TIMELINE: Final = "from the table alone: it has no timeline"

#: A finding's severity from the share of the step at stake: high from this share, medium
#: from the next (profsight's own bands).
HIGH_SEVERITY_PCT: Final = 30.0
MEDIUM_SEVERITY_PCT: Final = 10.0
#: Things to change with less than this share of the step to save rank after the
#: informational findings (where the compute goes): they are not what bounds the step.
MINOR_PCT: Final = 5.0


class PhaseRule(msgspec.Struct, frozen=True):
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
#: steps, means the batch is too small for the fixed cost of a step (measured on the planted
#: runs: scripts/threshold_margins.py).
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
#: fraction of its total is doing work in Python or in glue ops (measured on the planted runs:
#: scripts/threshold_margins.py).
MODULE_OWN_PCT: Final = 8.0
MODULE_OWN_FRACTION: Final = 0.4
#: Many tiny ops: average CPU time per call under this, this many calls per step (profsight's
#: own: eager dispatch costs 5-20 µs a call, so a 25 µs op is mostly that cost).
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
#: faster input gains more than any other single change in the planted runs, profsight's own
#: reading of them: no script measures it). The
#: device is starved below STARVED_PCT busy (the plugin's utilisation rule) and saturated
#: above SATURATED_PCT (profsight's own: the healthy GPU runs in tests/data/real run 80-95%
#: busy). On a CPU run, the model's work past CPU_COMPUTE_PCT of the step makes it
#: compute-bound, and work around the model (metrics, callbacks, ...) past DOMINANT_PCT
#: bounds the step instead of the model (profsight's own, as the severity bands).
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
#: Host-device syncs past this share of the step (profsight's own: no planted run syncs, so
#: nothing here measures it; a sync costs the device its queue, so a small share is worth it).
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
#: Allocations per step above which allocation churn is reported (profsight's own: the healthy
#: scenarios of tests/scenarios.py allocate a few hundred times per step).
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
        "Elementwise, normalisation and memory-bound ops take a large share of the compute",
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
