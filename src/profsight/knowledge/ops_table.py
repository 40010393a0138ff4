"""The op glossary's data: what each operator, autograd node and runtime call does.

`GLOSSARY` maps exact names, as traces and printed tables spell them, to one sentence each
(no final full stop): what the op computes and, where it helps reading a profile, what its
self and total time say. `profsight.knowledge.ops` derives the names this table leaves out
(overloads, in-place forms, backward nodes, HIP mirrors of CUDA calls, ...) from it.

Categories keep ATen-level work with the kind of computation it does, even in backward
(``aten::convolution_backward`` is "convolution"), so a breakdown by category shows where
compute goes; only autograd's own nodes (``ConvolutionBackward0``) are "autograd". Host API
calls are split by what they do to the host: "runtime" (launches, queries), "sync" (the CPU
waits for the device), "memcpy" (copies and fills of device memory) and "allocation".
The tables after it (notes, backward costs, collectives, name prefixes, runtime-call
keywords) are the data of `ops.lookup_op`'s rules. Written from the PyTorch sources and the
traces in ../shared/data/real; tests/data/top_ops.txt lists the names that must stay covered.
"""

from __future__ import annotations

import os
from typing import Final

import msgspec

# (read beside this file: `importlib.resources` would import zipfile, ~5 ms of start-up;
# msgspec decodes it in half json's time)
with open(os.path.join(os.path.dirname(__file__), "data", "ops_glossary.json"), "rb") as _fh:
    _DATA = msgspec.json.decode(_fh.read())
#: Category (a member of ``ops.CATEGORIES``) -> exact name -> meaning (data/ops_glossary.json).
GLOSSARY: Final[dict[str, dict[str, str]]] = _DATA["glossary"]
#: An op -> the same call seen at deeper levels (outermost first).
CHAINS: Final[dict[str, tuple[str, ...]]] = {k: tuple(v) for k, v in _DATA["chains"].items()}

# -- notes appended when a meaning is adapted to a variant of the name --------------------
IN_PLACE_NOTE: Final = (
    " (in place: this trailing-underscore variant overwrites its first operand instead of"
    " allocating a new tensor)"
)
OUT_NOTE: Final = " (out= variant: writes into a preallocated output tensor)"
PRIMS_NOTE: Final = (
    " (here as its prims:: primitive, recorded when PyTorch's Python reference"
    " decompositions in torch._refs run it)"
)
VERSIONED_NOTE: Final = " (a versioned or per-thread-default-stream variant of the same call)"

# -- autograd ------------------------------------------------------------------------------

#: Backward-node stems whose forward op is not ``aten::`` + the stem in snake case.
BACKWARD_FORWARD_OPS: Final[dict[str, str]] = {
    "SlowConv2D": "aten::_slow_conv2d_forward",
    "NllLoss2D": "aten::nll_loss2d_forward",
    "GridSampler2D": "aten::grid_sampler_2d",
    "Im2Col": "aten::im2col",
    "Col2Im": "aten::col2im",
    "Log1P": "aten::log1p",
    "NumpyT": "aten::numpy_T",
}

#: What the backward of an op of each category costs, for backward-node meanings.
BACKWARD_COST: Final[dict[str, str]] = {
    "convolution": "two convolutions, one for the input gradient and one for the weight "
    "gradient, plus a sum for the bias: about twice the forward's time",
    "matmul": "two matrix multiplies, the output gradient times the weight for the input "
    "gradient and the transposed input times it for the weight gradient, so about twice the "
    "forward's FLOPs",
    "normalization": "reduction-heavy, memory-bound passes that use the saved statistics to "
    "form the input, weight and bias gradients",
    "activation": "one elementwise pass over the gradient and the saved input or output",
    "pointwise": "one or two elementwise passes over the gradient",
    "reduction": "a broadcast of the gradient back to the input's shape, or a scatter to the "
    "selected positions",
    "softmax": "one row-wise pass using the saved output",
    "loss": "elementwise work over the loss inputs, usually cheap",
    "pooling": "routing or spreading each output gradient back over its window",
    "dropout": "a multiply of the gradient by the saved mask and scale",
    "embedding": "accumulating gradient rows into the table's gradient, a full-size zeroed "
    "tensor unless sparse=True",
    "attention": "recomputing attention blocks to form the query, key and value gradients, "
    "about twice the forward's work",
    "indexing": "a scatter or gather of the gradient to the indexed positions",
    "view": "only a reshape or re-stride of the gradient, cheap unless a copy is needed",
    "copy": "a copy of the gradient back, converting dtype or device as the forward did",
}
BACKWARD_COST_DEFAULT: Final = "the backward computation of that op"

# -- collectives ---------------------------------------------------------------------------

#: Name prefix -> (who runs the collective, what its CPU range covers).
COLLECTIVE_PREFIXES: Final[dict[str, tuple[str, str]]] = {
    "nccl:": (
        "NCCL",
        "the CPU range only enqueues the work on NCCL's stream; the transfer runs as an nccl "
        "kernel on the GPU and blocks the CPU only when something waits for it",
    ),
    "gloo:": (
        "Gloo",
        "Gloo runs collectives on CPU threads, so this range covers the whole transfer "
        "including the wait for the slowest rank",
    ),
    "mpi:": ("MPI", "MPI collectives block the calling thread, so the range covers the transfer"),
    "ucc:": ("UCC", "the CPU range covers posting the collective to UCC's progress engine"),
    "xccl:": (
        "oneCCL (XPU)",
        "the CPU range enqueues the collective; the transfer runs on the XPU",
    ),
    "c10d::": (
        "c10d dispatcher op for",
        "torch.distributed hands the call to the process group's backend here; for NCCL its "
        "CPU time is the enqueue, and the backend's own range (nccl:..., record_param_comms) "
        "nests inside",
    ),
    "_c10d_functional::": (
        "functional collective (DTensor, FSDP2, torch.compile) for",
        "it issues the collective and returns at once; _c10d_functional::wait_tensor waits "
        "for the result",
    ),
}

#: Collective -> what it does.
COLLECTIVES: Final[dict[str, str]] = {
    "all_reduce": "reduces (by default sums) a tensor across all ranks and leaves the result "
    "on every rank, e.g. DDP's gradient averaging",
    "all_gather": "gathers every rank's tensor onto every rank (FSDP gathers sharded "
    "parameters this way before using them)",
    "reduce_scatter": "reduces across ranks and leaves each rank one shard of the result "
    "(FSDP's gradient reduction)",
    "broadcast": "copies a tensor from one rank to all others (DDP syncs parameters and "
    "buffers from rank 0)",
    "all_to_all": "each rank sends a distinct slice to every other rank (TorchRec embedding "
    "exchange, mixture-of-experts token routing)",
    "send": "sends a tensor to one peer rank (point-to-point, e.g. pipeline parallelism)",
    "recv": "receives a tensor from one peer rank (point-to-point); its time includes "
    "waiting for the sender",
    "barrier": "waits until every rank reaches this point; its time is the wait for the "
    "slowest rank, a straggler indicator",
    "reduce": "reduces a tensor across ranks onto one destination rank",
    "gather": "collects every rank's tensor onto one destination rank",
    "scatter": "splits a tensor on one rank and sends one piece to each rank",
    "coalesced": "a group of collectives issued together and launched as one NCCL group",
    "wait_tensor": "waits for an asynchronous collective's result before it is used (on NCCL "
    "a stream wait, not a CPU block)",
}

#: Spellings of collectives across backends and torch versions -> a key of `COLLECTIVES`.
COLLECTIVE_ALIASES: Final[dict[str, str]] = {
    "allreduce": "all_reduce",
    "allreduce_coalesced": "all_reduce",
    "all_reduce_coalesced": "all_reduce",
    "all_reduce_barrier": "barrier",
    "allgather": "all_gather",
    "allgather_base": "all_gather",
    "all_gather_base": "all_gather",
    "allgather_coalesced": "all_gather",
    "allgather_into_tensor_coalesced": "all_gather",
    "all_gather_into_tensor": "all_gather",
    "all_gather_into_tensor_coalesced": "all_gather",
    "reduce_scatter_base": "reduce_scatter",
    "reduce_scatter_tensor": "reduce_scatter",
    "reduce_scatter_tensor_coalesced": "reduce_scatter",
    "alltoall": "all_to_all",
    "alltoall_base": "all_to_all",
    "all_to_all_single": "all_to_all",
    "recv_any_source": "recv",
    "monitored_barrier": "barrier",
}

# -- name families ---------------------------------------------------------------------------

#: (prefix, category, meaning); ``{rest}`` is the part of the name after the prefix.
PREFIX_RULES: Final[tuple[tuple[str, str, str], ...]] = (
    (
        "ProfilerStep#",
        "profiler",
        "step {rest} of the profiler's schedule (the range between two prof.step() calls); "
        "its total is the whole training step and its self time the loop's Python work "
        "outside any other op",
    ),
    (
        "Optimizer.step#",
        "optimizer",
        "the optimizer step {rest} (torch.optim wraps every step() in this range); its "
        "children are the per-parameter (for-loop), _foreach_ (multi-tensor) or _fused_ ops "
        "of the update, and its self time is the Python loop over parameter groups",
    ),
    (
        "Optimizer.zero_grad#",
        "optimizer",
        "Optimizer.zero_grad() of {rest}: with set_to_none=True (the default since torch "
        "2.0) it only drops the .grad references and has no children; with False it zeroes "
        "every gradient",
    ),
    (
        "enumerate(DataLoader)#",
        "other",
        "the training loop waiting in next() on the DataLoader ({rest}): "
        "_SingleProcessDataLoaderIter loads and collates in the main process, "
        "_MultiProcessingDataLoaderIter waits for worker processes; a long one means the step "
        "is starved for input data",
    ),
    (
        "Torch-Compiled Region",
        "other",
        "a frame compiled by torch.compile running its generated code (the numbers are the "
        "frame id and its recompilation count); its total is the compiled graph's execution, "
        "with the kernels it launches as triton_* or aten rows inside",
    ),
    (
        "sglang_profiler::",
        "profiler",
        "a range sglang's profiler wraps around one model function (module_function_line: "
        "{rest}); its total is that function's time, and the op doing the work is its child",
    ),
    (
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
        "runtime",
        "asks how many blocks of a kernel fit on one SM, to size a grid (PyTorch's "
        "reductions, cuDNN and cuBLAS use it); host-only, no device work",
    ),
    (
        "fbgemm::split_embedding",
        "embedding",
        "FBGEMM table-batched embedding (TBE) kernel used by TorchRec: looks up and pools many "
        "embedding tables in one call (backward variants fuse the optimizer update)",
    ),
)

#: Inductor's Triton kernel prefixes -> (category, kind of kernel).
TRITON_KINDS: Final[dict[str, tuple[str, str]]] = {
    "poi": ("pointwise", "pointwise"),
    "red": ("reduction", "reduction"),
    "per": ("reduction", "persistent reduction"),
    "tem": ("matmul", "template (GEMM or convolution)"),
    "for": ("optimizer", "foreach (multi-tensor)"),
}
# -- device runtime calls ------------------------------------------------------------------

#: Runtime API family (name prefix) -> how to call it in a meaning.
RUNTIME_FAMILIES: Final[dict[str, str]] = {
    "cuda": "CUDA runtime",
    "cu": "CUDA driver",
    "hip": "HIP (ROCm)",
    "ur": "Intel XPU (Unified Runtime)",
    "pi": "Intel XPU (SYCL plugin interface)",
    "ze": "Intel XPU (Level Zero)",
    "nvrtc": "NVRTC (runtime compilation)",
}

#: (word in the call's name, category, meaning with ``{api}``), first match wins; calls with
#: none of these words are host-side queries and setup.
RUNTIME_KEYWORDS: Final[tuple[tuple[str, str, str], ...]] = (
    (
        "Synchronize",
        "sync",
        "{api} call that blocks the CPU until the device work it names "
        "has finished, so its time is time spent waiting for the device",
    ),
    (
        "Finish",
        "sync",
        "{api} call that blocks the CPU until a queue's work has finished, so "
        "its time is time spent waiting for the device",
    ),
    (
        "EnqueueEventsWait",
        "sync",
        "{api} call that orders later device work after events (a "
        "cross-queue dependency); the CPU does not block",
    ),
    (
        "WaitEvent",
        "sync",
        "{api} call that makes a stream wait, on the device, for an event "
        "(a cross-stream dependency); the CPU does not block",
    ),
    (
        "Wait",
        "sync",
        "{api} call that blocks the CPU until events complete, so its time is "
        "time spent waiting for the device",
    ),
    (
        "Launch",
        "runtime",
        "{api} launch: enqueues device work and returns without waiting, "
        "so its CPU time is launch overhead",
    ),
    (
        "Memcpy",
        "memcpy",
        "{api} memory copy between host and device or within the device; "
        "the CPU waits unless it is an asynchronous copy involving pinned memory",
    ),
    ("Copy", "memcpy", "{api} memory copy between host and device or within the device"),
    ("Memset", "memcpy", "{api} fill of device memory with a value, like cudaMemsetAsync"),
    ("Fill", "memcpy", "{api} fill of device memory with a pattern, like cudaMemsetAsync"),
    (
        "Alloc",
        "allocation",
        "{api} memory allocation, slow compared with PyTorch's caching "
        "allocators, so it should be rare once their caches are warm",
    ),
    (
        "Free",
        "allocation",
        "{api} release of memory; releasing device memory can synchronise the device",
    ),
)
RUNTIME_DEFAULT: Final = (
    "runtime",
    "{api} call made on the host (a query, setup or bookkeeping call); it runs on the CPU and "
    "launches no device work by itself",
)
