"""What findings say, shared by the trace's rules and the printed table's, and the texts and
thresholds the analyses and the what-if replay read.
"""

from __future__ import annotations

from typing import Final

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
#: A replayed saving smaller than the replay's own resolution (`replay.engine.saving_spread`:
#: what the steps lengthened by under the edit, per step).
WITHIN_RESOLUTION: Final = (
    " (within the replay's resolution of ±{spread:.1f}% of the step: the steps do not agree "
    "that it saves anything)"
)
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
