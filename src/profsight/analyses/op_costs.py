"""An op's FLOPs and compulsory bytes from its name, input shapes and dtypes: the formulas the
roofline (`analyses.roofline`) places each op by.
"""

from __future__ import annotations

import math
from typing import Any

from profsight.analyses.step.flops import conv_output, formula_flops
from profsight.knowledge import flop_ops
from profsight.knowledge import roofline_ops as ops
from profsight.knowledge.collectives import dtype_bytes

# ------------------------------------------------------------------ the formulas


def cost(name: str, shapes: Any, concrete: Any, dtypes: Any) -> tuple[float, float]:
    """(FLOPs, bytes) of one call of op `name`; bytes 0 where no formula fits its
    arguments (its shapes or dtypes are missing)."""
    family = ops.family_of(name)
    if not isinstance(shapes, list) or not isinstance(dtypes, list) or family is None:
        return 0.0, 0.0
    try:
        nbytes = _BYTES[family](name, shapes, concrete, dtypes)
        if nbytes <= 0:
            return 0.0, 0.0
        return _flops(family, name, shapes, concrete, dtypes), float(nbytes)
    except (TypeError, ValueError, IndexError, KeyError, AttributeError, ZeroDivisionError):
        return 0.0, 0.0


def numel(shape: Any) -> int:
    return int(math.prod(shape)) if isinstance(shape, list) else 0


def element_bytes(dtypes: list[Any], i: int) -> int:
    """Bytes per element of argument `i` (0: not a tensor, or a dtype not known)."""
    if i >= len(dtypes) or not isinstance(dtypes[i], str):
        return 0
    return dtype_bytes(dtypes[i]) or 0


def _tensor(shapes: list[Any], dtypes: list[Any], i: int) -> int:
    """Bytes of tensor argument `i` (0 for a scalar or an absent one)."""
    if i is None or i >= len(shapes) or not isinstance(shapes[i], list):
        return 0
    return numel(shapes[i]) * element_bytes(dtypes, i)


def _gemm(name: str, shapes: Any, concrete: Any, dtypes: Any) -> float:
    a_at, b_at = flop_ops.MATMULS[name]
    a, b = shapes[a_at], shapes[b_at]
    out = numel(a[:-1]) * b[-1]
    bias = _tensor(shapes, dtypes, 0) if a_at == 1 else 0
    return float(
        _tensor(shapes, dtypes, a_at)
        + _tensor(shapes, dtypes, b_at)
        + bias
        + out * element_bytes(dtypes, a_at)
    )


def _convolution(name: str, shapes: Any, concrete: Any, dtypes: Any) -> float:
    if name == "aten::convolution":
        out = conv_output(shapes[0], shapes[1], concrete)
        if out is None:
            return 0.0
        moved = sum(_tensor(shapes, dtypes, i) for i in (0, 1, 2))
        return moved + numel(out) * element_bytes(dtypes, 0)
    grad, x, weight = shapes[0], shapes[1], shapes[2]
    mask = [True, True, False]
    if concrete:
        mask = [s.strip().lower() == "true" for s in str(concrete[10]).strip("[]").split(",")]
    bpe = element_bytes(dtypes, 0)
    read = sum(_tensor(shapes, dtypes, i) for i in (0, 1, 2))
    written = numel(x) * mask[0] + numel(weight) * mask[1] + grad[1] * (len(mask) > 2 and mask[2])
    return float(read + written * bpe)


def _attention(name: str, shapes: Any, concrete: Any, dtypes: Any) -> float:
    op = flop_ops.ATTENTION.get(name, flop_ops.SAGE)
    q, k, v = shapes[op.q_at : op.q_at + 3]
    if len(q) != 4:
        return 0.0
    bpe = element_bytes(dtypes, op.q_at)
    e = q[-1]  # the head dimension is last in both layouts
    out = numel(q) // e * (e if op.value_dim_of_query else v[-1])
    moved = numel(q) + numel(k) + numel(v) + out
    return float((2 * moved if op.backward else moved) * bpe)


_COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or")
_WRITE_ONLY = ("aten::fill_", "aten::zero_", "aten::fill", "aten::zero")


def _elementwise(name: str, shapes: Any, concrete: Any, dtypes: Any) -> float:
    if name in ops.SOFTMAX:
        operands = 2 if "backward" in name else 1
        return sum(_tensor(shapes, dtypes, i) for i in range(operands)) + _tensor(shapes, dtypes, 0)
    if name in _WRITE_ONLY:
        return _tensor(shapes, dtypes, 0)
    if name in ops.UNARY:
        return 2 * _tensor(shapes, dtypes, 0) + (
            numel(shapes[0]) if "dropout" in name else 0  # the mask, one byte an element
        )
    tensors = [i for i in (0, 1) if i < len(shapes) and element_bytes(dtypes, i)]
    if not tensors:
        return 0.0
    out = _broadcast([shapes[i] for i in tensors])
    comparison = name.removeprefix("aten::").rstrip("_") in _COMPARISONS
    # a 0-dim tensor takes part in type promotion as a scalar does: float + 0-dim double
    # is float (torch's type promotion documentation)
    dimensioned = [i for i in tensors if shapes[i]] or tensors
    out_bpe = 1 if comparison else max(element_bytes(dtypes, i) for i in dimensioned)
    return sum(_tensor(shapes, dtypes, i) for i in tensors) + numel(out) * out_bpe


def _broadcast(shapes: list[list[int]]) -> list[int]:
    rank = max(len(s) for s in shapes)
    padded = [[1] * (rank - len(s)) + list(s) for s in shapes]
    return [max(dims) for dims in zip(*padded, strict=True)]


def _reduction(name: str, shapes: Any, concrete: Any, dtypes: Any) -> float:
    x = shapes[0]
    bpe = element_bytes(dtypes, 0)
    if len(shapes) > 1 and element_bytes(dtypes, 1):  # max(a, b): elementwise
        return _tensor(shapes, dtypes, 0) + _tensor(shapes, dtypes, 1) + numel(x) * bpe
    return (numel(x) + numel(_reduced(name, x, concrete))) * bpe


def _reduced(name: str, x: list[int], concrete: Any) -> list[int]:
    """The shape a reduction leaves: its dimensions (an int or a list; none, or none that
    reads as one: all) and ``keepdim`` where `REDUCTION_DIMS` says the op keeps them."""
    dim_at, keep_at = ops.REDUCTION_DIMS.get(name, ops.DEFAULT_REDUCTION_DIMS)
    dims: list[int] = []
    if concrete and len(concrete) > dim_at:
        text = str(concrete[dim_at]).strip("[] ")
        try:
            dims = [int(d) for d in text.split(",") if d.strip()]
        except ValueError:
            dims = []
    if not dims:
        return []
    keep = len(concrete) > keep_at and str(concrete[keep_at]).strip().lower() == "true"
    gone = {d % len(x) for d in dims} if x else set()
    return [1 if i in gone else n for i, n in enumerate(x) if keep or i not in gone]


def _normalisation(name: str, shapes: Any, concrete: Any, dtypes: Any) -> float:
    norm = ops.NORMS[name]
    x = shapes[norm.x_at]
    params = sum(
        _tensor(shapes, dtypes, i) for i in (norm.weight_at, norm.bias_at) if i is not None
    )
    activations = (3 if norm.backward else 2) * _tensor(shapes, dtypes, norm.x_at)
    kept = 1 if "rms_norm" in name else 2  # RMS norm keeps no mean
    stats = kept * _statistics(name, x, concrete) * ops.NORM_STAT_BYTES
    return activations + (2 if norm.backward else 1) * params + stats


def _statistics(name: str, x: list[int], concrete: Any) -> int:
    """How many per-row statistics a normalisation keeps: one per channel (batch norm), per
    row of its normalised shape (layer and RMS norm: ``Concrete Inputs``), per group."""
    if "batch_norm" in name:
        return x[1]
    at = ops.NORM_SHAPE_AT.get(name)
    if at is not None and concrete and len(concrete) > at:
        width = math.prod(int(d) for d in str(concrete[at]).strip("[] ").split(",") if d.strip())
        return numel(x) // width if width else 0
    if name == "aten::native_group_norm" and concrete and len(concrete) > 6:
        return x[0] * int(concrete[6])
    return 0


def _embedding(name: str, shapes: Any, concrete: Any, dtypes: Any) -> float:
    if name == "aten::embedding_dense_backward":
        return 2 * _tensor(shapes, dtypes, 0) + _tensor(shapes, dtypes, 1)
    table, index_at = (0, 1) if name == "aten::embedding" else (0, 2)
    row = numel(shapes[table][1:])
    picked = numel(shapes[index_at])
    return _tensor(shapes, dtypes, index_at) + 2 * picked * row * element_bytes(dtypes, table)


def _copy(name: str, shapes: Any, concrete: Any, dtypes: Any) -> float:
    return numel(shapes[0]) * (element_bytes(dtypes, 0) + element_bytes(dtypes, 1))


_BYTES = {
    ops.GEMM: _gemm,
    ops.CONVOLUTION: _convolution,
    ops.ATTENTION: _attention,
    ops.ELEMENTWISE: _elementwise,
    ops.REDUCTION: _reduction,
    ops.NORMALISATION: _normalisation,
    ops.EMBEDDING: _embedding,
    ops.COPY: _copy,
}


def _flops(family: str, name: str, shapes: Any, concrete: Any, dtypes: Any) -> float:
    if family in ops.MATRIX_FAMILIES:
        return formula_flops(name, shapes, concrete)
    if family == ops.ELEMENTWISE:
        if name in ops.SOFTMAX:
            return ops.SOFTMAX_FLOPS_PER_ELEMENT * numel(shapes[0])
        if name in _WRITE_ONLY:
            return 0.0
        sized = [
            s for i, s in enumerate(shapes[:2]) if isinstance(s, list) and element_bytes(dtypes, i)
        ]
        return float(numel(_broadcast(sized))) if sized else 0.0
    if family == ops.REDUCTION:
        return float(numel(shapes[0]))
    if family == ops.NORMALISATION:
        norm = ops.NORMS[name]
        return ops.norm_flops_per_element(name) * numel(shapes[norm.x_at])
    if family == ops.EMBEDDING and name == "aten::embedding_dense_backward":
        return float(numel(shapes[0]))
    return 0.0
