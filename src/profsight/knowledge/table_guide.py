"""How to read a profiler table, in the words of the tutorial profsight's users learn from
(``../shared/seed``: "Understand PyTorch Lightning's Profiler Table"): what each column and
each tag is, and what a row's self-vs-total pattern says."""

from __future__ import annotations

from typing import Final

from profsight.knowledge.rows import RowKind

#: Rows whose self time, in a Lightning table, holds other ranges' work.
OVERLAPPED_ROWS: Final = ("ProfilerStep", "Optimizer.step#")
LIGHTNING_SELF_TIME: Final = (
    "its self time is large because Lightning steps the profiler inside optimizer_step: the "
    "ranges overlap without nesting, and torch then counts as this row's own time the ops "
    "that ran in other ranges (training_step's forward, backward); the breakdown by phase "
    "reads the totals instead"
)
#: Said of a table whose ranges overlap without nesting on one thread; the Lightning form when
#: the table has Lightning rows (Lightning steps the profiler inside optimizer_step).
_OVERLAP_EFFECT: Final = (
    "torch then makes the ops after a step boundary children of the new ProfilerStep, so "
    "the self time of ProfilerStep* and of the ranges it cut holds ops that ran inside other "
    "ranges, and Self CPU time total can exceed the wall time. The step-time breakdown (by "
    "time window) is the reliable figure."
)
OVERLAP_NOTE: Final = (
    "Ranges on one thread overlap without nesting (a range opened in one step and closed in "
    "the next, or a profiler stepped inside a range): " + _OVERLAP_EFFECT
)
OVERLAP_NOTE_LIGHTNING: Final = (
    "Ranges on one thread overlap without nesting (Lightning steps the profiler inside "
    "optimizer_step): " + _OVERLAP_EFFECT
)
#: Said of a row whose self time is negative. torch computes self time as the total minus its
#: children's totals, and children can overlap each other (a range opened in one call and
#: closed in another, as ProfilerStep#N opens in prof.step() and closes in the next call);
#: torch's key_averages() prints the same negative number (tests/test_fidelity.py).
NEGATIVE_SELF: Final = (
    "self time {self} is negative, as torch prints it: torch subtracts each child's total, "
    "and its children overlap each other (a range opened in one call and closed in another, "
    "as ProfilerStep#N opens inside prof.step() and closes in the next call), so they add up "
    "to more than the row itself"
)
#: What a device-side sync row is (Kineto's ``cuda_sync``: Stream Sync, Event Sync, Context
#: Sync), which torch prints as a CUDA row.
DEVICE_SYNC_MEANING: Final = (
    "the device's record of a synchronisation (Kineto's cuda_sync): how long the wait lasted "
    "on the GPU's side; torch prints it as a CUDA row and adds it to the op that synced, but "
    "its time is waiting, not work"
)
#: What the device side of a ``record_function`` range is (Kineto's ``gpu_user_annotation``,
#: written for ``ProfilerStep#N``, ``DistributedDataParallel.forward``, torch.compile's
#: ``## Call CompiledFxGraph ... ##``, ``nccl:*`` and any user label): a span over the
#: kernels that ran inside the range, which torch prints as a CUDA row of its own and leaves
#: out of ``Self CUDA time total`` (torch/autograd/profiler_util.py, ``is_user_annotation``).
DEVICE_LABEL_MEANING: Final = (
    "the device-side span of a record_function label: a label over the kernels that ran "
    "inside the range, from the first one's start to the last one's end, not work of its own; "
    "torch prints it as a row of its own whose device time overlaps its kernels' (so its Self "
    "CUDA % can pass 100%), and leaves it out of the device total"
)
DEVICE_LABEL_READING: Final = (
    "spans {span} on the device in {calls} run(s){each}: a label; its kernels' own rows hold "
    "the device's work"
)
MODULE_INSIDE: Final = (
    "the time is inside, in its layers (for a ResNet block: its convolutions), not in the "
    "block's own Python"
)

COLUMNS: Final = (
    "Self CPU is the time spent in the row itself, without the rows it called; CPU total "
    "includes them. Self times add up to 'Self CPU time total'; totals overlap and never add.",
    "Self CUDA is the GPU time of the kernels the row launched itself; CUDA total adds its "
    "children's. This is the column where GPU bottlenecks show.",
    "# of Calls counts the calls in the profiled window; the averages are total / calls.",
)

#: What each tag marks, by the row kind it gives (the tutorial's "context tags").
TAGS: Final[dict[RowKind, str]] = {
    RowKind.STEP: "ProfilerStep* is one iteration of the profiling schedule: its total is the "
    "whole training step",
    RowKind.LIGHTNING: "[pl] rows are Lightning's execution engine: the loop, its hooks and "
    "actions around your code",
    RowKind.STRATEGY: "[Strategy] rows are the strategy (SingleDeviceStrategy, DDP, ...) "
    "running your training_step, backward and the batch transfer: how data and work flow "
    "between CPU and devices",
    RowKind.MODULE: "[module] rows are your nn.Modules (with_modules / record_module_names): "
    "the cost of each layer or block of the model",
    RowKind.ATEN: "aten:: rows are the operators that do the linear algebra; an op dispatches "
    "to others (conv2d -> convolution -> mkldnn_convolution), so the innermost one holds the "
    "self time",
    RowKind.BACKWARD: "autograd rows are the backward pass: one node per forward op",
    RowKind.OPTIMIZER: "Optimizer rows are optimizer.step() and zero_grad()",
    RowKind.KERNEL: "kernel rows are GPU code, named by their library: e.g. "
    "maxwell_sgemm_32x128_nn is cuBLAS's single-precision matrix multiply (tile 32x128), "
    "and a *_winograd kernel is a cuDNN convolution",
    RowKind.RUNTIME: "cuda* rows are the CPU's calls into the GPU runtime (launches, copies)",
    RowKind.SYNC: "synchronize rows are the CPU waiting for the GPU",
    RowKind.DATALOADER: "DataLoader rows are the wait for the next batch",
    RowKind.METRIC: "metric rows are torchmetrics computing a metric",
}

#: The seed's reading of a residual block: high self vs high total.
BLOCK_HIGH_SELF: Final = (
    "high self CPU for a block is its own Python in forward(): the skip connection's add "
    "and glue, a cost worth removing"
)
BLOCK_LOW_SELF: Final = (
    "low self CPU with a high total means the block's time is inside it, in its "
    "convolutions: the layers, not the block, are the cost"
)
#: Class names that are residual blocks (the seed's BasicBlock rule applies).
BLOCK_CLASSES: Final = ("BasicBlock", "Bottleneck", "ResidualBlock", "ResBlock")
QUESTION: Final = "Is this model too complex for its data and its hardware?"
#: training_step's time outside the model's modules is said when it passes this share of it.
OUTSIDE_MODEL_SHARE: Final = 0.2
