"""Each op and input shape against the device's ceilings: FLOPs, bytes, what it achieved.

Counted where the work happens, as `analyses.step.flops` counts FLOPs: an op with a formula
(`knowledge.roofline_ops.family_of`) is placed unless an op inside it is, and its device
time is that of the kernels and copies it and the ops inside it launched. The formulas:

* **FLOPs:** the matrix multiplies, convolutions and attention as `flops.formula_flops`
  counts them; 1 per output element of an elementwise op, 1 per input element of a
  reduction, 5 per element of a normalisation forward (4 for RMS norm, 9 backward) and of a
  softmax; none for copies and gathers (an embedding's backward adds its gradient's rows:
  1 an element).
* **Bytes:** compulsory traffic, each operand read once and each result written once, in
  the dtypes the trace records (``Input type``): a GEMM's two matrices, its bias and its
  output; a convolution's input, weight, bias and output (its backward: the gradient, the
  input and weight read, the gradients written); attention's query, key, value and output
  (backward: those and the output's gradient read, three gradients written); an elementwise
  op's tensor operands and its output of their broadcast shape; a reduction's input and
  output; a normalisation's input, output, parameters and per-row statistics; a gather's
  indices and the rows it reads and writes; a copy's source and destination.

Against the device (``deviceProperties``, `knowledge.hardware`): the peak of the precision
the op's kernels ran in (their names say it; else its input dtype's; the FP32 vector rate for
the vector families), the memory bandwidth, their ratio (the ridge point, FLOPs per byte),
and the time the op would take at the roof, ``max(FLOPs / peak, bytes / bandwidth)``. Its
bound: *latency* where that time is under `LATENCY_FLOOR_US` a call (too small to reach
either roof), *link* for a copy between host and device or between devices, else *compute*
at or above the ridge point and *memory* below it. ``roof_pct`` is the time at the roof over
the time it took. A window that is a CUDA-graph capture (`analyses.step.capture_phase`) has no
roofline: its few device items are no run's rates.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import msgspec
import numpy as np
from msgspec.structs import replace

from profsight.analyses.op_costs import cost, element_bytes, numel
from profsight.analyses.step.capture_phase import captures
from profsight.analyses.step.flops import covered_by_inner, parse_arg
from profsight.knowledge import roofline_ops as ops
from profsight.knowledge.hardware import Accelerator, accelerator
from profsight.knowledge.kernels import decode_kernel
from profsight.knowledge.trace_schema import DEVICE_WORK_KINDS, EventKind
from profsight.model.events import I64
from profsight.model.nesting import nearest_marked
from profsight.model.profile import Profile
from profsight.stats import unique

#: Copy directions (`knowledge.kernels.decode_kernel`'s algorithm) that move over a link.
_LINK_COPIES = ("HtoD", "DtoH", "PtoP")


class RooflineRow(msgspec.Struct, frozen=True):
    """One op and input shape (and dtypes), over its calls that ran on the device."""

    op: str
    family: str
    shapes: str
    """``Input Dims`` as the trace records them."""
    dtypes: tuple[str, ...]
    """``Input type`` as the trace records it (``Scalar`` and ``""`` for what is no tensor)."""
    calls: int
    device_us: float
    flops: float
    """FLOPs of one call."""
    bytes: float
    """Bytes one call moves (compulsory traffic)."""
    precision: str | None
    """The precision its ceiling is taken at (None: no device known)."""
    peak_tflops: float | None
    """The precision's peak at the part's highest clock (`Accelerator.peak`)."""
    bandwidth_gbs: float | None
    bound: str | None
    link: bool = False

    @property
    def tflops(self) -> float:
        """Achieved TFLOP/s over its device time."""
        return self.flops * self.calls / (self.device_us * 1e6) if self.device_us > 0 else 0.0

    @property
    def tbps(self) -> float:
        """Achieved TB/s of compulsory traffic over its device time."""
        return self.bytes * self.calls / (self.device_us * 1e6) if self.device_us > 0 else 0.0

    @property
    def intensity(self) -> float:
        """FLOPs per byte moved."""
        return self.flops / self.bytes if self.bytes > 0 else 0.0

    @property
    def ridge(self) -> float | None:
        """The device's ridge point at this precision: peak FLOP/s over bytes/s."""
        if self.peak_tflops is None or not self.bandwidth_gbs:
            return None
        return self.peak_tflops * 1e3 / self.bandwidth_gbs

    @property
    def roof_us(self) -> float | None:
        """The time one call would take at the roof (None: no device, or over a link)."""
        if self.peak_tflops is None or not self.bandwidth_gbs or self.link:
            return None
        return max(self.flops / (self.peak_tflops * 1e6), self.bytes / (self.bandwidth_gbs * 1e3))

    @property
    def roof_pct(self) -> float | None:
        """The time at the roof over the time taken, in percent."""
        roof = self.roof_us
        if roof is None or self.device_us <= 0:
            return None
        return 100.0 * roof * self.calls / self.device_us

    @property
    def cached(self) -> bool:
        """Its rate of compulsory traffic is above the memory's bandwidth: the inputs came
        from cache (or the op's traffic is smaller than the formula's)."""
        bandwidth = self.bandwidth_gbs
        return bandwidth is not None and not self.link and self.tbps * 1e3 > bandwidth


class Roofline(msgspec.Struct, frozen=True):
    device: str | None
    """The device the ceilings are of (None: not known, rates only)."""
    bandwidth_gbs: float | None
    ceilings: dict[str, float]
    """Peak TFLOP/s of each precision the rows ran at."""
    rows: tuple[RooflineRow, ...]
    """The ops with the most device time, at most `ROOFLINE_ROWS`."""
    groups: int
    """Op and shape groups placed (the rows are the first of them)."""
    covered_us: float
    """Device time of the ops placed."""
    device_us: float
    """Device time of all the trace's kernels, copies and memsets."""
    by_bound: dict[str, float]
    """Device time of the placed ops by bound."""
    by_family: dict[str, float]
    by_family_bound: dict[str, dict[str, float]]
    """Device time of the placed ops by family, then by bound."""

    @property
    def coverage_pct(self) -> float:
        """The share of the device time in ops with a formula."""
        return 100.0 * self.covered_us / self.device_us if self.device_us > 0 else 0.0


def roofline(
    profile: Profile, device: Accelerator | None, keep: int = ops.ROOFLINE_ROWS
) -> Roofline | None:
    """The roofline of `profile`'s ops on `device`, its `keep` rows with the most device
    time; None without device work or op shapes."""
    ev = profile.events
    work = np.flatnonzero(np.isin(ev.kind, [int(k) for k in DEVICE_WORK_KINDS]))
    if not len(work) or not len(ev.shapes) or not (ev.shapes >= 0).any():
        return None
    found = captures(profile)
    if found is not None and found.dominant:
        return None  # a capture's few device items are no run's rates: not judged
    attr = profile.attribution
    events, costs = _placed(profile)
    if not len(events):
        return None
    # each device item to the placed op above its owner
    holder = nearest_marked(attr.owner[work].astype(np.int64), events, attr.parent)
    held = holder >= 0
    dur_us = ev.dur[work].astype(np.float64) / 1000.0
    at = np.searchsorted(events, holder[held])
    time = np.bincount(at, weights=dur_us[held], minlength=len(events))
    ran = time > 0
    if not ran.any():
        return None
    link = np.zeros(len(events), bool)
    copies = held & (ev.kind[work] == EventKind.MEMCPY)
    held_names = ev.name[work[held]]
    for name in unique(ev.name[work[copies]]).tolist():
        direction = decode_kernel(ev.strings[name]).algorithm or ""
        if direction.split(" ")[0] in _LINK_COPIES:
            link[at[held_names == name]] = True
    # a copy over a link is its own row: the same op and shapes also copy on the device
    copy_ids = [i for i in unique(ev.name[events]).tolist() if ev.strings[i] in ops.COPIES]
    link &= np.isin(ev.name[events], copy_ids)
    group, keys = _groups(profile, events, link)
    precision = _kernel_precisions(profile, work[held], at, group, dur_us[held])
    rows = _rows(profile, events, costs, time, ran, link, group, keys, precision, device)
    rows.sort(key=lambda r: r.device_us, reverse=True)
    by_bound: dict[str, float] = {}
    by_family: dict[str, float] = {}
    by_family_bound: dict[str, dict[str, float]] = {}
    for r in rows:
        by_family[r.family] = by_family.get(r.family, 0.0) + r.device_us
        if r.bound is not None:
            by_bound[r.bound] = by_bound.get(r.bound, 0.0) + r.device_us
            split = by_family_bound.setdefault(r.family, {})
            split[r.bound] = split.get(r.bound, 0.0) + r.device_us
    shown = tuple(rows[:keep])
    ceilings = {r.precision: r.peak_tflops for r in shown if r.precision and r.peak_tflops}
    return Roofline(
        device=device.name if device else None,
        bandwidth_gbs=device.bandwidth_gbs if device else None,
        ceilings=dict(sorted(ceilings.items())),
        rows=shown,
        groups=len(rows),
        covered_us=float(time.sum()),
        device_us=float(dur_us.sum()),
        by_bound=by_bound,
        by_family=by_family,
        by_family_bound=by_family_bound,
    )


def table_roofline(profile: Profile) -> dict[tuple[str, str], dict[str, Any]] | None:
    """Each op and shape's roofline (`by_op_and_shapes`), for a table grouped by shape; None
    without device work, op shapes, or a device profsight knows."""
    devices = profile.meta.devices
    device = accelerator(devices[0]) if devices else None
    roof = roofline(profile, device, keep=sys.maxsize) if device is not None else None
    return by_op_and_shapes(roof) if roof is not None else None


def by_op_and_shapes(roof: Roofline) -> dict[tuple[str, str], dict[str, Any]]:
    """The roofline of each (op, ``Input Dims``), as the table grouped by shape keys its rows
    (groups of other dtypes, or over a link, merged): achieved rates over the merged device
    time; the bound and share of the roof of the one with the most device time."""
    merged: dict[tuple[str, str], list[RooflineRow]] = {}
    for r in roof.rows:
        merged.setdefault((r.op, r.shapes), []).append(r)
    out = {}
    for key, rows in merged.items():
        us = sum(r.device_us for r in rows)
        flops = sum(r.flops * r.calls for r in rows)
        moved = sum(r.bytes * r.calls for r in rows)
        first = max(rows, key=lambda r: r.device_us)
        out[key] = {
            "tflops": flops / (us * 1e6) if us > 0 else 0.0,
            "tbps": moved / (us * 1e6) if us > 0 else 0.0,
            "intensity": flops / moved if moved > 0 else 0.0,
            "bound": first.bound,
            "roof_pct": first.roof_pct,
        }
    return out


def _placed(profile: Profile) -> tuple[I64, np.ndarray[Any, Any]]:
    """The ops placed (sorted event indices) and each one's (FLOPs, bytes) per call."""
    ev = profile.events
    rows = profile.attribution.is_row
    names = unique(ev.name[rows & (ev.shapes >= 0)]).tolist()
    ids = [i for i in names if ops.family_of(ev.strings[i])]
    candidates = np.flatnonzero(np.isin(ev.name, ids) & rows & (ev.shapes >= 0))
    if not len(candidates):
        return candidates.astype(np.int64), np.zeros((0, 2))
    types = ev.types if len(ev.types) else np.full(len(ev), -1, np.int32)
    concrete = ev.concrete if len(ev.concrete) else np.full(len(ev), -1, np.int32)
    key = np.stack(
        [ev.name[candidates], ev.shapes[candidates], concrete[candidates], types[candidates]]
    ).astype(np.int64)
    distinct, inverse = np.unique(key, axis=1, return_inverse=True)
    parsed: dict[int, Any] = {}
    found = np.zeros((distinct.shape[1], 2))
    for k, (name, shape, scalars, dtypes) in enumerate(distinct.T.tolist()):
        found[k] = cost(
            ev.strings[name],
            parse_arg(parsed, shape, ev.strings),
            parse_arg(parsed, scalars, ev.strings) if scalars >= 0 else None,
            parse_arg(parsed, dtypes, ev.strings) if dtypes >= 0 else None,
        )
    costs = found[inverse.reshape(-1)]
    matrix_ids = [i for i in ids if ops.family_of(ev.strings[i]) in ops.MATRIX_FAMILIES]
    matrix = np.isin(ev.name[candidates], matrix_ids)
    parent = profile.attribution.parent
    # the matrix ops first, each the innermost of its chain (linear -> addmm); then the
    # other ops outside them (a convolution's bias add is the convolution's), innermost
    keep = _innermost(candidates, costs[:, 1] > 0, matrix, parent)
    outside = nearest_marked(candidates, candidates[keep], parent) < 0
    keep |= _innermost(candidates, costs[:, 1] > 0, ~matrix & outside, parent)
    return candidates[keep].astype(np.int64), costs[keep]


def _innermost(candidates: I64, placed: Any, among: Any, parent: Any) -> Any:
    """Which of `candidates` (those in `among`) are placed: a cost, and none placed inside."""
    keep = np.zeros(len(candidates), bool)
    at = np.flatnonzero(among)
    inner = covered_by_inner(candidates[at], placed[at], parent)
    keep[at] = placed[at] & ~inner
    return keep


def _groups(profile: Profile, events: I64, link: Any) -> tuple[Any, Any]:
    """Each placed op's group (op name, shapes, dtypes, over a link or not) and the groups'
    keys."""
    ev = profile.events
    types = ev.types[events] if len(ev.types) else np.full(len(events), -1, np.int32)
    key = np.stack([ev.name[events], ev.shapes[events], types, link]).astype(np.int64)
    keys, group = np.unique(key, axis=1, return_inverse=True)
    return group.reshape(-1), keys


def _kernel_precisions(
    profile: Profile, work: I64, at: Any, group: Any, dur_us: Any
) -> dict[int, str]:
    """The precision each group's kernels ran in, by their names (the one with the most
    time), for the groups whose kernels say it."""
    ev = profile.events
    kernels = ev.kind[work] == EventKind.KERNEL
    pairs = np.stack([group[at[kernels]], ev.name[work[kernels]]]).astype(np.int64)
    if not pairs.shape[1]:
        return {}
    distinct, inverse = np.unique(pairs, axis=1, return_inverse=True)
    time = np.bincount(inverse.reshape(-1), weights=dur_us[kernels])
    best: dict[int, tuple[float, str]] = {}
    names: dict[int, str | None] = {}
    for (g, name), t in zip(distinct.T.tolist(), time.tolist(), strict=True):
        if name not in names:
            names[name] = decode_kernel(ev.strings[name]).precision
        p = names[name]
        if p is not None and t > best.get(g, (-1.0, ""))[0]:
            best[g] = (t, p)
    return {g: p for g, (_, p) in best.items()}


def _rows(
    profile: Profile,
    events: I64,
    costs: Any,
    time: Any,
    ran: Any,
    link: Any,
    group: Any,
    keys: Any,
    precision: dict[int, str],
    device: Accelerator | None,
) -> list[RooflineRow]:
    strings = profile.events.strings
    parsed: dict[int, Any] = {}
    calls = np.bincount(group[ran], minlength=keys.shape[1])
    spent = np.bincount(group, weights=time, minlength=keys.shape[1])
    linked = np.bincount(group, weights=link, minlength=keys.shape[1]) > 0
    # per call, over the calls that ran: the same shapes can take other scalar arguments
    # (a stride, a causal flag), so the group's cost is its calls' mean
    flops_sum = np.bincount(group[ran], weights=costs[ran, 0], minlength=keys.shape[1])
    bytes_sum = np.bincount(group[ran], weights=costs[ran, 1], minlength=keys.shape[1])
    out = []
    for g in np.flatnonzero(calls).tolist():
        name, shapes, dtypes, _ = keys[:, g].tolist()
        op = strings[name]
        family = ops.family_of(op) or ""
        flops, nbytes = float(flops_sum[g] / calls[g]), float(bytes_sum[g] / calls[g])
        listed = parse_arg(parsed, dtypes, strings) if dtypes >= 0 else None
        types = tuple(str(t) for t in listed) if isinstance(listed, list) else ()
        if linked[g] and family == ops.COPY:  # over a link the data crosses once
            nbytes = numel(parse_arg(parsed, shapes, strings)[0]) * element_bytes(list(types), 1)
        p = _precision(family, precision.get(g), types[0].lower() if types else "")
        ceiling = device.peak(p) if device is not None else None
        p = ceiling.precision if ceiling is not None else p
        peak = ceiling.tflops if ceiling is not None else None
        bw = device.bandwidth_gbs if device is not None else None
        row = RooflineRow(
            op=op,
            family=family,
            shapes=strings[shapes],
            dtypes=types,
            calls=int(calls[g]),
            device_us=float(spent[g]),
            flops=flops,
            bytes=nbytes,
            precision=p if device is not None else None,
            peak_tflops=peak,
            bandwidth_gbs=bw,
            bound=None,
            link=bool(linked[g]),
        )
        out.append(_bounded(row))
    return out


def _precision(family: str, kernels: str | None, first: str) -> str:
    """The precision an op's ceiling is taken at: its kernels' for the matrix families, else
    its first tensor's dtype's; the vector families run at the FP32 (FP64) vector rate."""
    if family in ops.MATRIX_FAMILIES:
        return kernels or ops.DTYPE_PRECISIONS.get(first, "fp32")
    return "fp64" if ops.DTYPE_PRECISIONS.get(first) == "fp64" else "fp32"


def _bounded(row: RooflineRow) -> RooflineRow:
    if row.peak_tflops is None or not row.bandwidth_gbs:
        return row
    if row.link:
        return replace(row, bound=ops.LINK_BOUND)
    roof = row.roof_us
    if roof is not None and roof < ops.LATENCY_FLOOR_US:
        return replace(row, bound=ops.LATENCY_BOUND)
    ridge = row.ridge or math.inf
    return replace(row, bound=ops.COMPUTE_BOUND if row.intensity >= ridge else ops.MEMORY_BOUND)
