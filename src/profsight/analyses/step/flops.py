"""FLOPs from recorded input shapes (``record_shapes=True``), per op and per step.

Counted where the work happens, once per call chain: an op with a formula is counted unless
an op inside it is (the innermost that has one: ``linear`` and ``matmul`` dispatch to
``aten::mm``, ``addmm``, ``bmm``, ``baddbmm``; ``scaled_dot_product_attention`` to the
flash, efficient, cuDNN or CPU kernel's op, and its math fallback to ``bmm``), so that the
FLOPs sit on the op whose kernels ran them. Formulas: the matrix multiplies, the
convolution (``aten::convolution``, and its backward from the gradient's shape), fused
attention (torch's, AITER's, SageAttention's; forward and backward). A multiply-add is 2
FLOPs. Copies, DMA and every op without a formula count none. Convolution output sizes
need the stride, padding and dilation, which torch records in ``Concrete Inputs`` (torch
>= 2.0); without them a convolution is not counted. Attention is causal where its
``is_causal`` argument is recorded so (``Concrete Inputs``); without them, not.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec
import numpy as np

from profsight import json_text
from profsight.analyses.step.capture_phase import recording_mask
from profsight.knowledge.flop_ops import ATTENTION_BACKWARD_FACTOR, Attention, formula_of
from profsight.knowledge.flop_ops import MATMULS as MATMULS  # re-exported: findings.setup
from profsight.model.events import I64
from profsight.model.profile import Profile
from profsight.stats import unique


class OpFlops(msgspec.Struct, frozen=True):
    events: I64
    """The ops counted (and those with shapes but no formula that fits them, at 0): one per
    call chain, the innermost with a formula."""
    flops: np.ndarray[Any, Any]
    """FLOPs of each event (float64)."""
    uncounted: int = 0
    """Compute ops whose FLOPs could not be derived (no shapes, or no Concrete Inputs), and
    no op inside or around them was counted."""
    captured: int = 0
    """Compute ops run while a stream recorded into a CUDA graph (`analyses.step.capture_phase`):
    their kernels went into the graph, not to the device, so their FLOPs are not counted."""

    @property
    def complete(self) -> bool:
        return self.uncounted == 0

    @property
    def total(self) -> float:
        return float(self.flops.sum())


def op_flops(profile: Profile) -> OpFlops:
    ev = profile.events
    rows = profile.attribution.is_row
    ids = [i for i in unique(ev.name[rows]).tolist() if formula_of(ev.strings[i])]
    candidates = np.flatnonzero(np.isin(ev.name, ids) & rows)
    recorded = recording_mask(profile, candidates)
    candidates = candidates[~recorded]
    flops = np.zeros(len(candidates))
    parsed: dict[int, Any] = {}
    # each distinct (op, input shapes, scalar arguments) once: a step repeats its shapes
    shaped = np.flatnonzero(ev.shapes[candidates] >= 0)
    key = np.stack(
        [
            ev.name[candidates[shaped]],
            ev.shapes[candidates[shaped]],
            ev.concrete[candidates[shaped]],
        ]
    ).astype(np.int64)
    distinct, inverse = np.unique(key, axis=1, return_inverse=True)
    found = np.zeros(distinct.shape[1])
    for k, (name, shape, scalars) in enumerate(distinct.T.tolist()):
        shapes = parse_arg(parsed, shape, ev.strings)
        concrete = parse_arg(parsed, scalars, ev.strings) if scalars >= 0 else None
        found[k] = formula_flops(ev.strings[name], shapes, concrete)
    flops[shaped] = found[inverse.reshape(-1)]
    covered = covered_by_inner(candidates, flops > 0, profile.attribution.parent)
    flops[covered] = 0.0
    keep = (ev.shapes[candidates] >= 0) & ~covered
    uncounted = int(np.count_nonzero((flops == 0) & ~covered))
    captured = int(recorded.sum())
    return OpFlops(candidates[keep].astype(np.int64), flops[keep], uncounted, captured)


def covered_by_inner(
    candidates: I64, counted: np.ndarray[Any, Any], parent: np.ndarray[Any, Any]
) -> Any:
    """Candidates whose work another is counted for: those with a counted op inside them
    (``aten::mm`` around its out= variant ``aten::mm``, ``scaled_dot_product_attention``
    around the kernel's op),
    and the uncounted ones inside a counted op (a varlen kernel's op, 3-D, under the 4-D
    call)."""
    counted_events = candidates[counted]
    around = _ancestors(counted_events, parent)
    covered = np.isin(candidates, around)
    rest = ~counted & ~covered
    covered[rest] = _under_any(candidates[rest], counted_events, parent)
    return covered


def _ancestors(events: I64, parent: np.ndarray[Any, Any]) -> I64:
    """Every op above `events`, climbed one level at a time."""
    found: list[I64] = []
    up = unique(parent[events])
    while len(up := up[up >= 0]):
        found.append(up)
        up = unique(parent[up])
    return unique(np.concatenate(found)) if found else np.zeros(0, np.int64)


def _under_any(events: I64, marked: I64, parent: np.ndarray[Any, Any]) -> Any:
    """Whether each of `events` has one of `marked` (sorted) above it."""
    hit = np.zeros(len(events), bool)
    at = np.arange(len(events))
    up = parent[events]
    while len(at):
        live = up >= 0
        at, up = at[live], up[live]
        hit[at] |= np.isin(up, marked)
        up = parent[up]
    return hit


def parse_arg(cache: dict[int, Any], sid: int, strings: list[str]) -> Any:
    """The JSON argument (``Input Dims``, ``Concrete Inputs``, ``Input type``) at string
    `sid`, parsed once (None where it does not parse)."""
    if sid not in cache:
        try:
            cache[sid] = json_text.loads(strings[sid])
        except ValueError:
            cache[sid] = None
    return cache[sid]


def formula_flops(name: str, shapes: Any, concrete: Any) -> float:
    """FLOPs of one call of op `name` from its ``Input Dims`` and ``Concrete Inputs``; 0
    where no formula fits them."""
    formula = formula_of(name)
    try:
        if isinstance(formula, Attention):
            return _attention(formula, shapes, concrete)
        if formula in MATMULS:
            a, b = (shapes[i] for i in MATMULS[formula])
            return 2.0 * float(math.prod(a)) * float(b[-1])
        if formula == "aten::convolution":
            return _conv_forward(
                shapes[0], shapes[1], concrete, transposed_at=6, groups_at=8, stride_at=3
            )
        if formula == "aten::convolution_backward":
            grad_out, _, weight = shapes[0], shapes[1], shapes[2]
            mask = json_text.loads(concrete[10].lower()) if concrete else [True, True, False]
            groups = int(concrete[9]) if concrete else 1
            per_pass = _conv_macs(grad_out, weight, groups)
            return 2.0 * per_pass * (int(mask[0]) + int(mask[1]))
    except (TypeError, ValueError, IndexError, KeyError, AttributeError):
        return 0.0
    return 0.0


def _attention(op: Attention, shapes: Any, concrete: Any) -> float:
    """2·B·H·L·S·(E + Ev) forward (the scores QKᵀ and their product with V; the softmax is
    E times smaller), the causal share of it, 2.5 times that backward. A 3-D (varlen)
    query has its sequences' lengths in tensors the profiler does not record: 0."""
    q, k, v = shapes[op.q_at : op.q_at + 3]
    if len(q) != 4 or len(k) != 4:
        return 0.0
    heads_first = op.heads_first
    if heads_first is None:
        if not concrete:
            return 0.0
        heads_first = int(concrete[op.causal_at - 1]) == 1
    if heads_first:
        b, h, length, e = q
        s = k[2]
    else:
        b, length, h, e = q
        s = k[1]
    ev = e if op.value_dim_of_query else v[-1]
    flops = 2.0 * float(b * h * length * s * (e + ev))
    flops *= _causal_share(op, concrete, length, s)
    return flops * (ATTENTION_BACKWARD_FACTOR if op.backward else 1.0)


def _causal_share(op: Attention, concrete: Any, length: int, s: int) -> float:
    """The share of the L x S scores a causal mask keeps (1/2 when L == S); 1 without a
    recorded causal flag."""
    flag = str(concrete[op.causal_at]).strip().lower() if concrete else ""
    if op.mask_type:
        if flag not in ("1", "2"):
            return 1.0
        bottom_right = flag == "2"
    elif flag in ("true", "1"):
        bottom_right = op.bottom_right
    else:
        return 1.0
    if bottom_right:
        kept = length * s - length * length / 2 if length <= s else s * s / 2
    else:
        kept = length * length / 2 if length <= s else length * s - s * s / 2
    return kept / (length * s)


def _conv_macs(out: list[int], weight: list[int], groups: int) -> float:
    """Multiply-adds of a convolution producing `out` (N, C_out, *spatial) with `weight`."""
    del groups  # weight[1] is already C_in / groups
    return float(math.prod(out)) * math.prod(weight[1:])


def _conv_forward(
    x: list[int],
    weight: list[int],
    concrete: Any,
    transposed_at: int,
    groups_at: int,
    stride_at: int,
) -> float:
    out = conv_output(x, weight, concrete, transposed_at, stride_at)
    if out is None:
        return 0.0
    return 2.0 * _conv_macs(out, weight, int(concrete[groups_at]))


def conv_output(
    x: list[int], weight: list[int], concrete: Any, transposed_at: int = 6, stride_at: int = 3
) -> list[int] | None:
    """The output shape of ``aten::convolution`` (N, C_out, *spatial) from its input, weight,
    stride, padding and dilation; None without them, and for a transposed convolution (its
    size needs ``output_padding``)."""
    if not concrete or len(x) < 3:
        return None
    stride, padding, dilation = (json_text.loads(concrete[stride_at + i]) for i in range(3))
    if str(concrete[transposed_at]).lower() == "true":
        return None
    spatial = []
    for i, size in enumerate(x[2:]):
        k = weight[2 + i]
        s, p, d = (v[i] if len(v) > i else v[0] for v in (stride, padding, dilation))
        spatial.append((size + 2 * p - d * (k - 1) - 1) // s + 1)
    return [x[0], weight[0], *spatial]
