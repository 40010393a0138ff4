"""The ops profsight places on a roofline: their families, where each keeps its operands,
and the ceilings' constants (the formulas are `analyses.roofline`'s).

The roofline (Williams, Waterman and Patterson, "Roofline: an insightful visual performance
model for multicore architectures", CACM 52(4), 2009) bounds an op's throughput by
``min(peak FLOP/s, intensity x memory bandwidth)``, intensity being FLOPs per byte moved.
Bytes are the op's compulsory traffic: each operand read once, each result written once, as
TraceLens' perf model counts them (AMD-AGI/TraceLens ``TraceLens/PerfModel/perf_model.py``:
``GEMM.bytes_func``, ``CONV.bytes_func``, ``SDPA.bytes_func``, ``BinaryElementwise``,
``Reduce``, ``Normalization``). A kernel that finds its inputs in cache moves fewer bytes
from memory than that, so its rate can read above the memory's bandwidth.

The loader keeps the ``Input type`` of these ops only (`needs_types`), and the ``Concrete
Inputs`` of the reductions and normalisations (their dimensions, `needs_concrete`).
"""

from __future__ import annotations

from typing import Final

import msgspec

from profsight.knowledge import flop_ops

GEMM: Final = "gemm"
CONVOLUTION: Final = "convolution"
ATTENTION: Final = "attention"
ELEMENTWISE: Final = "elementwise"
REDUCTION: Final = "reduction"
NORMALISATION: Final = "normalisation"
EMBEDDING: Final = "embedding"
COPY: Final = "copy"

#: Families whose math runs on the matrix (tensor) cores where the precision allows; the
#: others run on the vector units, whose ceiling is the FP32 rate.
MATRIX_FAMILIES: Final = frozenset({GEMM, CONVOLUTION, ATTENTION})

#: Elementwise ops of two tensors (or a tensor and a scalar): the output has the operands'
#: broadcast shape; 1 FLOP per output element (TraceLens' ``BinaryElementwise.flops_func``).
BINARY: Final = frozenset(
    f"aten::{op}"
    for base in (
        "add",
        "sub",
        "mul",
        "div",
        "maximum",
        "minimum",
        "pow",
        "eq",
        "ne",
        "lt",
        "le",
        "gt",
        "ge",
        "remainder",
        "fmod",
        "bitwise_and",
        "bitwise_or",
        "logical_and",
        "logical_or",
        "masked_fill",
        "threshold_backward",
        "gelu_backward",
        "silu_backward",
        "sigmoid_backward",
        "tanh_backward",
        "hardtanh_backward",
        "leaky_relu_backward",
    )
    for op in (base, f"{base}_")
)
#: Elementwise ops of one tensor: output the input's shape; 1 FLOP per element (TraceLens'
#: ``UnaryElementwise.flops_func``; a transcendental takes more instructions, which the
#: vector ceiling does not count).
UNARY: Final = frozenset(
    f"aten::{op}"
    for base in (
        "relu",
        "gelu",
        "silu",
        "sigmoid",
        "tanh",
        "exp",
        "log",
        "neg",
        "abs",
        "sqrt",
        "rsqrt",
        "reciprocal",
        "clamp",
        "clamp_min",
        "clamp_max",
        "hardtanh",
        "leaky_relu",
        "elu",
        "mish",
        "sin",
        "cos",
        "erf",
        "sign",
        "square",
        "fill",
        "zero",
        "bernoulli",
        "native_dropout",
    )
    for op in (base, f"{base}_")
)
#: Reductions: 1 FLOP per input element (TraceLens' ``Reduce.flops_func``); the reduced
#: dimensions and ``keepdim`` are the first two ``Concrete Inputs`` after the tensor, none
#: meaning all.
REDUCTIONS: Final = frozenset(
    f"aten::{op}"
    for op in (
        "sum",
        "mean",
        "amax",
        "amin",
        "max",
        "min",
        "prod",
        "norm",
        "linalg_vector_norm",
        "var",
        "std",
        "var_mean",
        "std_mean",
        "all",
        "any",
        "argmax",
        "argmin",
        "logsumexp",
    )
)
#: Where a reduction keeps its dimensions and ``keepdim`` in ``Concrete Inputs``
#: (``native_functions.yaml``): ``sum(self, dim, keepdim, dtype)`` and most; ``norm(self, p,
#: dim, keepdim)`` and ``linalg_vector_norm(self, ord, dim, keepdim)`` put the order first;
#: ``var(self, dim, correction, keepdim)`` and its kin the correction.
REDUCTION_DIMS: Final[dict[str, tuple[int, int]]] = {
    "aten::norm": (2, 3),
    "aten::linalg_vector_norm": (2, 3),
    "aten::var": (1, 3),
    "aten::std": (1, 3),
    "aten::var_mean": (1, 3),
    "aten::std_mean": (1, 3),
}
DEFAULT_REDUCTION_DIMS: Final = (1, 2)
#: Softmax reads its input and writes its output once; about 5 FLOPs per element (the
#: maximum, the subtraction, the exponential, the sum, the division).
SOFTMAX: Final = frozenset(
    {
        "aten::_softmax",
        "aten::_log_softmax",
        "aten::_softmax_backward_data",
        "aten::_log_softmax_backward_data",
    }
)
SOFTMAX_FLOPS_PER_ELEMENT: Final = 5.0


class Norm(msgspec.Struct, frozen=True):
    """Where a normalisation op keeps its operands in ``Input Dims``."""

    x_at: int
    """The activation (forward: the input; backward: the output's gradient, the input
    following it)."""
    weight_at: int | None
    bias_at: int | None
    backward: bool = False


#: Normalisations, as ATen dispatches them (``aten/src/ATen/native/native_functions.yaml``):
#: ``native_layer_norm(input, normalized_shape, weight, bias, eps)``,
#: ``native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
#: eps)`` (cuDNN's and MIOpen's alike), ``native_group_norm(input, weight, bias, N, C, HxW,
#: group, eps)``, ``_fused_rms_norm(input, normalized_shape, weight, eps)``; the backward ops
#: take the output's gradient first and the input second
#: (``_fused_rms_norm_backward(grad_out, input, normalized_shape, rstd, weight, mask)``).
NORMS: Final[dict[str, Norm]] = {
    "aten::native_layer_norm": Norm(0, 2, 3),
    "aten::native_batch_norm": Norm(0, 1, 2),
    "aten::cudnn_batch_norm": Norm(0, 1, 2),
    "aten::miopen_batch_norm": Norm(0, 1, 2),
    "aten::_native_batch_norm_legit": Norm(0, 1, 2),
    "aten::_native_batch_norm_legit_no_training": Norm(0, 1, 2),
    "aten::native_group_norm": Norm(0, 1, 2),
    "aten::_fused_rms_norm": Norm(0, 2, None),
    "aten::native_layer_norm_backward": Norm(0, 5, 6, backward=True),
    "aten::native_batch_norm_backward": Norm(0, 2, None, backward=True),
    "aten::cudnn_batch_norm_backward": Norm(0, 2, None, backward=True),
    "aten::miopen_batch_norm_backward": Norm(0, 2, None, backward=True),
    "aten::native_group_norm_backward": Norm(0, 4, None, backward=True),
    "aten::_fused_rms_norm_backward": Norm(0, 4, None, backward=True),
}
#: Where the normalised shape is in ``Concrete Inputs`` (its per-row statistics).
NORM_SHAPE_AT: Final[dict[str, int]] = {
    "aten::native_layer_norm": 1,
    "aten::_fused_rms_norm": 1,
    "aten::native_layer_norm_backward": 2,
    "aten::_fused_rms_norm_backward": 2,
}
#: FLOPs per element. Forward: 5 (the mean; the variance's subtraction and square-add; one
#: multiply-add with the per-channel scale and shift), 4 for RMS norm (no mean: the square-add,
#: then the two scalings). Backward: 9, TraceLens' count (``Normalization.flops_func_bwd``:
#: 4 for the two dot products, 5 for the input's gradient).
NORM_FLOPS_PER_ELEMENT: Final = 5.0
RMS_NORM_FLOPS_PER_ELEMENT: Final = 4.0
NORM_BACKWARD_FLOPS_PER_ELEMENT: Final = 9.0
#: Bytes of each per-row statistic a normalisation writes (its mean and reciprocal standard
#: deviation, kept in FP32 for the backward pass; RMS norm keeps the second only).
NORM_STAT_BYTES: Final = 4


def norm_flops_per_element(name: str) -> float:
    if NORMS[name].backward:
        return NORM_BACKWARD_FLOPS_PER_ELEMENT
    return RMS_NORM_FLOPS_PER_ELEMENT if "rms_norm" in name else NORM_FLOPS_PER_ELEMENT


#: Gathers of table rows: ``embedding(weight, indices)`` and ``index_select(self, dim,
#: index)`` read the indices and the rows they pick, and write those rows: no FLOPs.
#: ``embedding_dense_backward(grad_output, indices, num_weights, ...)`` reads the gradient
#: and the indices and writes the table's gradient.
EMBEDDINGS: Final = frozenset(
    {"aten::embedding", "aten::index_select", "aten::embedding_dense_backward"}
)
#: Copies: ``copy_(self, src)`` reads the source and writes the destination, in their own
#: dtypes (a cast is a copy); no FLOPs. One across devices moves over the link, not memory.
COPIES: Final = frozenset({"aten::copy_"})

#: An op whose work, at its ceiling, takes less than this per call is bound by latency, not
#: by either roof: a kernel's launch, ramp-up and tail take a few microseconds whatever it
#: does (an empty kernel runs for about 1-2 us on the device, and a launch costs the host
#: some 3-5 us, on recent NVIDIA and AMD GPUs), so it cannot come near either ceiling.
LATENCY_FLOOR_US: Final = 2.0

#: The bounds an op is given.
COMPUTE_BOUND: Final = "compute"
MEMORY_BOUND: Final = "memory"
LATENCY_BOUND: Final = "latency"
LINK_BOUND: Final = "link"
"""A copy between the host and the device, or between devices: its ceiling is the link's
(`analyses.device_work` reports those copies' bandwidth)."""

#: Rows a report keeps (by device time): enough for every op that matters.
ROOFLINE_ROWS: Final = 40

#: Where the precision of an op's kernels is unknown, the precision its input dtype runs at
#: (lower-cased ``Input type``); FP32 matrix math runs in FP32 unless its kernels say TF32.
DTYPE_PRECISIONS: Final[dict[str, str]] = {
    "float": "fp32",
    "float32": "fp32",
    "double": "fp64",
    "float64": "fp64",
    "half": "fp16",
    "float16": "fp16",
    "c10::half": "fp16",
    "bfloat16": "bf16",
    "c10::bfloat16": "bf16",
    "c10::float8_e4m3fn": "fp8",
    "c10::float8_e5m2": "fp8",
    "c10::float8_e4m3fnuz": "fp8",
    "c10::float8_e5m2fnuz": "fp8",
    "float8_e4m3fn": "fp8",
    "float8_e5m2": "fp8",
    "signed char": "int8",
    "char": "int8",
    "int8": "int8",
}


def family_of(name: str) -> str | None:
    """The roofline family of op `name`, or None for an op without a formula."""
    if name in flop_ops.MATMULS:
        return GEMM
    if name in flop_ops.CONVOLUTIONS:
        return CONVOLUTION
    if name in flop_ops.ATTENTION or flop_ops.SAGE_ATTENTION.match(name):
        return ATTENTION
    if name in BINARY or name in UNARY or name in SOFTMAX:
        return ELEMENTWISE
    if name in REDUCTIONS:
        return REDUCTION
    if name in NORMS:
        return NORMALISATION
    if name in EMBEDDINGS:
        return EMBEDDING
    if name in COPIES:
        return COPY
    return None


def needs_types(name: str) -> bool:
    """Whether the loader keeps the ``Input type`` of op `name` (for its bytes)."""
    return family_of(name) is not None


def needs_concrete(name: str) -> bool:
    """Whether the loader keeps the ``Concrete Inputs`` of op `name`: the FLOP formulas'
    (`flop_ops.needs_concrete`) and the reductions' dimensions."""
    return flop_ops.needs_concrete(name) or name in REDUCTIONS or name in NORMS


#: What each bound means, as reports say it.
BOUND_MEANING: Final[dict[str, str]] = {
    COMPUTE_BOUND: "at or above the ridge point: the math units bound it",
    MEMORY_BOUND: "below the ridge point: memory bandwidth bounds it",
    LATENCY_BOUND: "too small to reach either roof: launch, ramp-up and tail bound it",
    LINK_BOUND: "a copy between host and device (or devices): the link bounds it",
}
#: Rows of the roofline a text report prints.
ROOFLINE_TEXT_ROWS: Final = 10
ROOFLINE_TITLE: Final = "Roofline (each op and input shape against the device's ceilings)"
ROOFLINE_NO_DEVICE: Final = (
    "the trace names no device profsight knows (deviceProperties): rates only, no ceilings"
)


#: The roofline families of each compute finding (`findings.compute`).
FINDING_FAMILIES: Final[dict[str, tuple[str, ...]]] = {
    "compute_matmul": (GEMM, ATTENTION),
    "compute_conv": (CONVOLUTION,),
    "compute_other": (ELEMENTWISE, REDUCTION, NORMALISATION, EMBEDDING, COPY),
}
#: A compute finding's work is read as bound by memory or by latency when that bound holds
#: at least this share of its ops' device time (a majority).
BOUND_MAJORITY: Final = 0.5
#: What to do when the matrix work is not bound by the math units: the tensor cores'
#: advice would not speed it.
MATRIX_NOT_COMPUTE_BOUND: Final[dict[str, tuple[str, str]]] = {
    MEMORY_BOUND: (
        "mostly memory-bound",
        "These multiplies move more bytes than their FLOPs can hide (below the device's "
        "ridge point): a faster precision's peak or more tensor cores will not speed them. "
        "Give each more work per byte: larger batches or sequences, one GEMM for small "
        "projections that share an input (Q, K and V together), activations in BF16/FP16 "
        "(half the bytes); and fuse the elementwise work around them (torch.compile(model)) "
        "so their outputs are not written and read again.",
    ),
    LATENCY_BOUND: (
        "mostly too small for the device",
        "Each of these multiplies is too small to reach either roof: its kernel's launch, "
        "ramp-up and tail cost more than its work. Give each more work (a larger batch; one "
        "batched bmm for a loop of small ones), and cut the launches: CUDA graphs "
        "(torch.compile(model, mode='reduce-overhead')).",
    ),
}
#: An op whose compulsory traffic ran faster than the memory's bandwidth (its share of the
#: roof above 100%): its inputs came from cache, or it moved fewer bytes than the formula
#: counts. Said so, never shown as a share above 100%.
ABOVE_ROOF: Final = "above the memory roof: its inputs came from cache"


def roof_share(pct: float | None) -> str:
    """An op's share of its roof as a report says it ("" when there is none)."""
    if pct is None:
        return ""
    return ABOVE_ROOF if pct > 100.0 else f"{pct:.0f}% of roof"


#: Evidence the roofline adds to a compute finding: its ops' device time, the device, and
#: the share of that time each bound holds.
ROOFLINE_EVIDENCE: Final = "of these ops' {time} on the {device}: {reading}"
BOUND_SHARE: Final = "{pct:.0f}% {bound}-bound"

#: What the page says about its roofline section.
ROOFLINE_PAGE_TEXTS: Final[dict[str, str]] = {
    "no_device": "The trace names no device profsight knows: rates only, no ceilings.",
    "chart_intro": (
        "Each op and input shape: its achieved FLOP/s (up) against its FLOPs per byte moved "
        "(across), under the roofs: the peak of each precision, and the memory bandwidth's "
        "slope."
    ),
}
