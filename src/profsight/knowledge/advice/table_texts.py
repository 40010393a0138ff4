"""What a printed table's step model cannot tell, the step on two clocks, "could save" in one
currency, the module view and AdvancedProfiler's hot functions.
"""

from __future__ import annotations

from typing import Final

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


#: A replayed saving within the replay's resolution (`findings.Finding.gain_spread_pct`).
UNRESOLVED_SAVING: Final = "saves nothing the replay resolves ({gain:+.1f}% ± {spread:.1f}%)"


def saving_phrase(
    priced: str, gain: float | None, at_stake: float = 1.0, spread: float | None = None
) -> str:
    """``could save ~30% of the step`` (or per sample, at most, estimated, not estimated);
    "" for a finding about the profile itself that concerns no share of the step; a saving
    within its `spread` (the replay's resolution) says so, with both."""
    if gain is None and at_stake <= 0:
        return ""
    if gain is not None and spread is not None and abs(gain) < spread:
        return UNRESOLVED_SAVING.format(gain=gain, spread=spread)
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
HOOK_WAIT_TITLE: Final = "{action} waits for the GPU in {method}: {share:.0f}% of the step"
HOOK_WAIT_EXPLANATION: Final = (
    "AdvancedProfiler's listing of this action ends in Tensor.{method}() (through "
    "{path}): reading a GPU tensor's value on the host first waits for every kernel queued "
    "before it, so the action's time is the device's work seen from the host, a sync outside "
    "your training step (Lightning's progress bar and logger turn logged tensors into Python "
    "numbers this way)."
)
HOOK_WAIT_ADVICE: Final = (
    "Log fewer values to the progress bar each step (self.log(..., prog_bar=False), "
    "on_step=False, on_epoch=True), raise Trainer(log_every_n_steps=...), and read values "
    "with .item() only every n steps. The device's work does not go away: what a step "
    "saves is at most this wait, where the host has other work to overlap with it."
)
HOT_FUNCTION_CONFIDENCE: Final = (
    "From AdvancedProfiler's cProfile listing: host time of Python and C calls only; what the "
    "device did meanwhile is not in it"
)
