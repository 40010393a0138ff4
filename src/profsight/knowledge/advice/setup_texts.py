"""What is said of the profile itself: start-up, missing activity, steps, the profiler's own
cost.
"""

from __future__ import annotations

import re
from typing import Final

from profsight.lazy import regex

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
GPU_ONLY_OPS: Final = regex(
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
#: The finding of a trace whose kernels CUPTI's range profiler measured: the device activity
#: was on, but ``profiler_metrics`` replaces each kernel's timing with its counters (with
#: ``profiler_measure_per_kernel`` Kineto runs CUPTI in auto-range mode with kernel replay,
#: and writes the session's span split evenly over the ranges as their times:
#: libkineto/src/CuptiRangeProfiler.cpp), so asking for CUDA activity would ask for what the
#: user already did.
RANGE_PROFILED_TITLE: Final = (
    "The kernels were measured by CUPTI's range profiler: their run times need a second "
    "profile without profiler_metrics"
)
RANGE_PROFILED_EXPLANATION: Final = (
    "The trace holds {kernels:,} kernels measured by CUPTI's range profiler "
    "(cuda_profiler_range events, recorded with _ExperimentalConfig(profiler_metrics=...)): "
    "their hardware counters, not their run times. In that mode CUPTI replays each kernel to "
    "read its counters and Kineto gives the kernels the profiling session split evenly as "
    "their times, and the host's times are stretched by the replays: GPU time, busy "
    "share, FLOP/s and what bounds the step cannot be read from this profile. Each record "
    "names its kernel but not the call that launched it, so the measured FLOPs are given "
    "per kernel, not per op."
)
RANGE_PROFILED_ADVICE: Final = (
    "Keep this profile for its counters, and record a second one for the run times with "
    "the same activities but without experimental_config's profiler_metrics: "
    "torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], "
    "record_shapes=True); then profsight can set the counted FLOPs beside the measured ones."
)
RANGE_PROFILED_VERDICT: Final = (
    "The kernels' run times were not recorded: CUPTI's range profiler measured their "
    "hardware counters instead (profiler_metrics), so how busy the GPU was, what bounds the "
    "step and whether the model suits the hardware cannot be told from this profile. Record "
    "a second profile without profiler_metrics (see the range profiler's finding) for its "
    "timing."
)
NO_DEVICE_VERDICT: Final = (
    "The GPU's run times were not recorded ({evidence}): how busy it was, what bounds the step "
    "and whether the model suits the hardware cannot be told from this profile. Record it "
    "again with device activity (see the first finding) before judging the run."
)
NO_CPU_ACTIVITY_TITLE: Final = "The host's work was not recorded: only its runtime calls"
NO_CPU_ACTIVITY_EXPLANATION: Final = (
    "The trace holds no op, no record_function range and no Python frame on the host, only "
    "the CUDA runtime's calls: it was recorded without CPU activity. What the host did while "
    "the device idled (loading data, preprocessing, waiting) is unknown, and the table has no "
    "op rows."
)
NO_CPU_ACTIVITY_ADVICE: Final = (
    "torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])."
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

#: A figure that breaks physics (`analyses.physics`): its diagnostic's code and remedy.
PHYSICS_CODE: Final = "physics"
PHYSICS_REMEDY: Final = (
    "a figure no hardware can give: please report it with the trace, and read the figures "
    "it touches as unreliable"
)
#: The verdict's evidence where the trace's audit (`model.trace_audit`) found problems.
AUDIT_CAVEAT: Final = (
    "the trace's audit found {problems} (see its diagnostics): the figures that cross between "
    "host and device are uncertain by as much"
)
