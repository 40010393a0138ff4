"""What a report says of memory at its peak, and the ops that only carry an allocation.

An op's memory is allocated by the allocation ops it calls (``aten::empty`` inside
``aten::mkldnn_convolution``); the op a block is charged to is the innermost one around its
``[memory]`` record that is not one of those.
"""

from __future__ import annotations

from typing import Final

#: Ops that allocate for the op around them: a block is that op's.
ALLOCATION_OPS: Final = frozenset(
    {
        "aten::empty",
        "aten::empty_strided",
        "aten::empty_like",
        "aten::new_empty",
        "aten::new_empty_strided",
        "aten::resize_",
        "aten::zeros",
        "aten::zeros_like",
        "aten::new_zeros",
        "aten::ones",
        "aten::full",
        "aten::to",
        "aten::_to_copy",
        "aten::clone",
        "aten::contiguous",
    }
)
#: Ops a report names as holding memory at the peak, most bytes first.
PEAK_OPS_SHOWN: Final = 8
MEMORY_PEAK_TITLE: Final = "Memory at the peak (what the window allocated and still holds)"
BEFORE_WINDOW: Final = "(allocated before the profiled window, or its record not kept)"
TORCH_CATEGORIES: Final = "torch's memory profiler, at its own peak"
HOLDERS_LINE: Final = "by the phase that allocated it, and whether it outlived the phase"
NO_BLOCKS: Final = (
    "the trace's [memory] records carry no Addr (torch < 1.10): a free cannot be matched "
    "to its allocation, so what is live at the peak is not known"
)

#: What the page says under its memory chart.
MEMORY_PAGE_TEXTS: Final[dict[str, str]] = {
    "intro": (
        "At each memory's peak: the ops whose allocations in the window it still held, most "
        "bytes first, and what it held from before the window (parameters, optimizer state, "
        "cached inputs)."
    ),
    "before_window": BEFORE_WINDOW,
    "no_blocks": NO_BLOCKS,
    "holders": HOLDERS_LINE,
}

#: What holds a trace's memory peak, by the step's phase at each block's allocation and
#: whether it outlived that phase's pass (the report's order; a snapshot's holders, with
#: the optimizer's state and temporaries told apart).
BEFORE_WINDOW_HOLDER: Final = "before the window"
TRACE_HOLDERS: Final = (
    BEFORE_WINDOW_HOLDER,
    "activations",
    "forward temporaries",
    "gradients",
    "backward temporaries",
    "optimizer state",
    "optimizer temporaries",
    "other",
)
#: Per phase (its value): the holder of a block that outlives its pass, and of one that
#: does not. A forward's block that outlives the forward is an activation saved for
#: backward (or the step's output).
PASS_HOLDERS: Final[dict[str, tuple[str, str]]] = {
    "forward": ("activations", "forward temporaries"),
    "backward": ("gradients", "backward temporaries"),
    "optimizer": ("optimizer state", "optimizer temporaries"),
}
