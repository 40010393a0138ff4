"""What a memory snapshot's frames say: where an allocation was made, and in which part of
a training step.

``torch.cuda.memory._record_memory_history(context=..., stacks="all")`` keeps, per
allocator event, the frames of the thread that asked (innermost first): C++ frames
(``filename`` a ``.cpp`` file, ``??`` or empty) and Python frames (a ``.py`` file, a
notebook cell's ``/tmp/ipykernel_<pid>/<hash>.py``). With ``stacks="python"`` only the
Python ones. Backward runs on the autograd engine's own thread, which has no Python frame:
its C++ frames name the node (``torch::autograd::generated::MmBackward0::apply``).
"""

from __future__ import annotations

from typing import Final

from profsight.lazy import regex

#: A segment's blocks the allocator still holds for the program: allocated, and freed by
#: the program but not yet reusable (``record_stream``: the free waits for another stream).
HELD_STATES: Final = frozenset({"active_allocated", "active_pending_free"})
#: A phase in a sentence ("reached in ...").
PHASE_PHRASE: Final[dict[str, str]] = {
    "forward": "the forward",
    "backward": "the backward",
    "optimizer": "the optimizer's step",
    "other": "none of forward, backward and the optimizer's step",
}
#: What holds memory at the peak, by where and when it was allocated; the report's order.
HOLDERS: Final = (
    "before recording",
    "activations",
    "gradients",
    "backward temporaries",
    "optimizer",
    "other",
)
#: A holder in a sentence ("12.7 GiB of it ...").
HOLDER_PHRASE: Final[dict[str, str]] = {
    "before recording": "from before the recording",
    "activations": "activations",
    "gradients": "gradients",
    "backward temporaries": "backward's temporaries",
    "optimizer": "made in the optimizer's step",
    "other": "made outside forward, backward and the step",
}
HOLDER_MEANING: Final[dict[str, str]] = {
    "before recording": "allocated before the history's first event: the recording began "
    "after them, or its buffer dropped older events (max_entries); parameters, and optimizer "
    "state from earlier steps",
    "activations": "allocated in a module's forward: its outputs and what autograd saved "
    "for backward",
    "gradients": "allocated by backward and still held when it ends: the gradients (autograd "
    "keeps the buffer an op's backward made, so its node may be MmBackward0)",
    "backward temporaries": "allocated by backward and freed before it ended",
    "optimizer": "allocated in the optimizer's step: its state (Adam's two moments are "
    "twice the parameters) and the step's temporaries",
    "other": "allocated outside a module's forward, backward and the optimizer's step "
    "(the loss, the batch, your own code between them)",
}

#: What to shrink first when a holder has the most of the peak.
HOLDER_ADVICE: Final[dict[str, str]] = {
    "before recording": "what existed before the recording holds the most: with Adam, "
    "parameters and moments are 12 bytes per fp32 parameter; shard them (FSDP, ZeRO) or keep "
    "the moments in 8 bits",
    "activations": "activations hold the most: recompute them in backward "
    "(torch.utils.checkpoint), run the forward in bf16 (torch.autocast), or shorten the "
    "batch or the sequence",
    "gradients": "gradients hold the most: they are as large as the parameters; shard them "
    "(FSDP, ZeRO-2), or step the optimizer per parameter as each gradient is made "
    "(register_post_accumulate_grad_hook)",
    "backward temporaries": "backward's temporaries hold the most: an op's backward that "
    "materialises a large intermediate (attention scores, a loss over a large vocabulary) "
    "has fused versions (scaled_dot_product_attention, a chunked cross-entropy)",
    "optimizer": "the optimizer's step holds the most: its state (Adam: two moments, twice "
    "the parameters) and the step's temporaries; an 8-bit or sharded optimizer shrinks the "
    "state, foreach=False or fused=True the temporaries",
    "other": "allocations outside forward, backward and the step hold the most: look at "
    "the lines below",
}

#: A C++ frame of the autograd engine: the event was made by backward.
AUTOGRAD_ENGINE: Final = regex(r"torch::autograd::(?:python::Python)?Engine::")
#: The autograd node a backward allocation was made in.
AUTOGRAD_NODE: Final = regex(r"torch::autograd::(?:generated::)?(\w+)::apply\b")
#: A part of the autograd engine that allocates on its own (``InputBuffer::add`` sums two
#: gradients of one input, ``InputMetadata::reduce_grad`` reduces one to its shape).
AUTOGRAD_PART: Final = regex(r"torch::autograd::((?:InputBuffer|InputMetadata)::\w+)")
#: Python frames of backward called from Python (on the main thread, before the engine).
BACKWARD_FILES: Final = (
    "torch/autograd/__init__.py",
    "torch/autograd/graph.py",
    "torch/_tensor.py",
)
BACKWARD_FUNCTIONS: Final = frozenset({"backward", "_engine_run_backward", "run_backward"})
#: A module's call: the allocation is made in some module's forward.
MODULE_CALL_FILE: Final = "torch/nn/modules/module.py"
#: torch's optimizers' own files.
OPTIMIZER_FILES: Final = regex(r"[\\/]torch[\\/]optim[\\/]")
#: An optimizer's step as torch names its range (kept as the snapshot's annotations).
OPTIMIZER_STEP_RANGE: Final = regex(r"^Optimizer\.step#")
#: A Python frame's file.
PYTHON_FILE: Final = regex(r"\.py$|^<")

#: How an allocation's site reads in a report.
NODE_LABEL: Final = "autograd node {node}"
ENGINE_LABEL: Final = "autograd engine {part}"
NO_PYTHON_FRAME: Final = "(no Python frame recorded)"
#: Sites a report lists at a device's peak, most bytes first.
SITES_SHOWN: Final = 12
SITES_TEXT_SHOWN: Final = 8
#: Points of a device's allocated-bytes-over-time series.
TIMELINE_POINTS: Final = 400

SNAPSHOT_TITLE: Final = "Memory snapshot: the peak, and what holds it"
SNAPSHOT_PAGE_TEXTS: Final[dict[str, str]] = {
    "intro": (
        "Per device: the most the caching allocator held, as memory_viz's active memory "
        "timeline draws it, and what it held then. Each block is charged to the innermost "
        "frame of your own code when it was allocated (torch's, Python's and libraries' "
        "frames folded in), or to the autograd node that made it."
    ),
    "holders_intro": "By where and when it was allocated:",
}
REPLAY_MISMATCH: Final = (
    "replaying the allocator's history does not end with the blocks the snapshot's segments "
    "hold ({replayed} live against {held}): the two disagree (another thread allocated "
    "while the snapshot was taken, or the file was edited); the peak may be off by that much"
)
NO_TRACE: Final = (
    "holds the allocator's segments but no event history (recorded without "
    "_record_memory_history, or with context=None): only the end state is known, not the peak"
)
