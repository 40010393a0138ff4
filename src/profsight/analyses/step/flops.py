"""FLOPs from recorded input shapes (``record_shapes=True``), per op and per step.

Counted where the work happens, once per call chain: the matrix multiplies (``aten::mm``,
``addmm``, ``bmm``, ``baddbmm``: ``linear`` and ``matmul`` dispatch to them), the
convolution (``aten::convolution``, and its backward from the gradient's shape), fused
attention (the flash/efficient kernels' ops, forward and backward). A multiply-add is 2
FLOPs. Convolution output sizes need the stride, padding and dilation, which torch records
in ``Concrete Inputs`` (torch >= 2.0); without them a convolution is not counted.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from profsight.model.events import I64
from profsight.model.profile import Profile

MATMULS = {"aten::mm": (0, 1), "aten::addmm": (1, 2), "aten::bmm": (0, 1), "aten::baddbmm": (1, 2)}
ATTENTION_FORWARD = (
    "aten::_scaled_dot_product_flash_attention",
    "aten::_scaled_dot_product_efficient_attention",
    "aten::_scaled_dot_product_cudnn_attention",
    "aten::_flash_attention_forward",
    "aten::_efficient_attention_forward",
)
ATTENTION_BACKWARD = tuple(f"{name}_backward" for name in ATTENTION_FORWARD)
#: Backward of attention recomputes the scores and multiplies twice more: 2.5x the forward.
ATTENTION_BACKWARD_FACTOR = 2.5


@dataclass(frozen=True)
class OpFlops:
    events: I64
    flops: np.ndarray[Any, Any]
    """FLOPs of each event (float64)."""
    uncounted: int = 0
    """Compute ops whose FLOPs could not be derived (no shapes, or no Concrete Inputs)."""

    @property
    def complete(self) -> bool:
        return self.uncounted == 0

    @property
    def total(self) -> float:
        return float(self.flops.sum())


def op_flops(profile: Profile) -> OpFlops:
    ev = profile.events
    names = {name: i for i, name in enumerate(ev.strings)}
    wanted = [
        *MATMULS,
        "aten::convolution",
        "aten::convolution_backward",
        *ATTENTION_FORWARD,
        *ATTENTION_BACKWARD,
    ]
    ids = [names[n] for n in wanted if n in names]
    candidates = np.isin(ev.name, ids) & profile.attribution.is_row
    events = np.flatnonzero(candidates & (ev.shapes >= 0))
    flops = np.zeros(len(events))
    parsed: dict[int, Any] = {}
    for k, e in enumerate(events.tolist()):
        name = ev.strings[ev.name[e]]
        shapes = _parse(parsed, ev.shapes[e], ev.strings)
        concrete = _parse(parsed, ev.concrete[e], ev.strings) if ev.concrete[e] >= 0 else None
        flops[k] = _flops(name, shapes, concrete)
    uncounted = int(candidates.sum()) - int(np.count_nonzero(flops))
    return OpFlops(events.astype(np.int64), flops, uncounted)


def _parse(cache: dict[int, Any], sid: int, strings: list[str]) -> Any:
    if sid not in cache:
        try:
            cache[sid] = json.loads(strings[sid])
        except ValueError:
            cache[sid] = None
    return cache[sid]


def _flops(name: str, shapes: Any, concrete: Any) -> float:
    try:
        if name in MATMULS:
            a, b = (shapes[i] for i in MATMULS[name])
            return 2.0 * float(math.prod(a)) * float(b[-1])
        if name == "aten::convolution":
            return _conv_forward(
                shapes[0], shapes[1], concrete, transposed_at=6, groups_at=8, stride_at=3
            )
        if name == "aten::convolution_backward":
            grad_out, _, weight = shapes[0], shapes[1], shapes[2]
            mask = json.loads(concrete[10].lower()) if concrete else [True, True, False]
            groups = int(concrete[9]) if concrete else 1
            per_pass = _conv_macs(grad_out, weight, groups)
            return 2.0 * per_pass * (int(mask[0]) + int(mask[1]))
        if name in ATTENTION_FORWARD or name in ATTENTION_BACKWARD:
            q, k, v = shapes[0:3] if name in ATTENTION_FORWARD else shapes[1:4]
            b, h, length, e = q
            s, ev_ = k[-2], v[-1]
            forward = 2.0 * float(b * h * length * s * (e + ev_))
            return forward * (1.0 if name in ATTENTION_FORWARD else ATTENTION_BACKWARD_FACTOR)
    except (TypeError, ValueError, IndexError, KeyError, AttributeError):
        return 0.0
    return 0.0


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
    if not concrete or len(x) < 3:
        return 0.0
    stride, padding, dilation = (json.loads(concrete[stride_at + i]) for i in range(3))
    if str(concrete[transposed_at]).lower() == "true":
        return 0.0  # transposed convolutions: output size needs output_padding; not counted
    spatial = []
    for i, size in enumerate(x[2:]):
        k = weight[2 + i]
        s, p, d = (v[i] if len(v) > i else v[0] for v in (stride, padding, dilation))
        spatial.append((size + 2 * p - d * (k - 1) - 1) // s + 1)
    out = [x[0], weight[0], *spatial]
    return 2.0 * _conv_macs(out, weight, int(concrete[groups_at]))
